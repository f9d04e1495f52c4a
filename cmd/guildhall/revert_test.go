package main

// guildhall revert on the real binary: a scripted run edits a file and
// creates one; revert puts both back (no git involved); a file changed
// after the run is refused, with the change shown, then reverted with
// --force; a planted or altered copy is never written into the workspace;
// and the prompt on a terminal asks first.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// editScript is a run whose orchestrator edits a.txt, creates new/b.txt
// and runs one command.
func editScript(t *testing.T) string {
	return writeScript(t, map[string][][]map[string]any{"orchestrator": {
		{{"name": "edit_file", "args": map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"}}},
		{{"name": "write_file", "args": map[string]any{"path": "new/b.txt", "content": "fresh\n"}}},
		{{"name": "run_shell", "args": map[string]any{"command": "echo done > shell.txt"}}},
		finishTurn("success", "edited"),
	}})
}

// editGuild is one role with the file tools and run_shell.
func editGuild(t *testing.T, h *hostile) string {
	t.Helper()
	dir := filepath.Join(h.root, "edit-guild")
	h.write(filepath.Join(dir, "prompts", "o.md"), "Edit the files.\n", 0o644)
	h.write(filepath.Join(dir, "guild.json"), `{"entryRole": "orchestrator", "roles": {"orchestrator": {
		"systemPrompt": "prompts/o.md", "tools": ["read_file", "write_file", "edit_file", "run_shell", "finish"]}}}`, 0o644)
	return dir
}

// revertWorkspace runs editScript in a fresh workspace and returns it and
// the run id.
func revertWorkspace(t *testing.T, h *hostile, name string) (string, string) {
	t.Helper()
	ws := h.workspace(name)
	h.write(filepath.Join(ws, "a.txt"), "one\ntwo\n", 0o640)
	res := h.run(ws, 0, "run", "--workspace", ws, "--guild", editGuild(t, h), "--provider", "script", "--script", editScript(t), "--no-input", "Edit the files")
	if res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	return ws, onlyRun(t, ws)
}

func TestRevertOnTheBinary(t *testing.T) {
	h := newHostile(t)
	h.snapshot()
	ws, id := revertWorkspace(t, h, "plain")
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "one\nTWO\n" {
		t.Fatalf("the run did not edit a.txt: %q", got)
	}

	// No terminal and no --yes: a usage error, nothing changed.
	res := h.run(ws, 0, "revert", id, "--workspace", ws)
	if res.code != exitUsage || !strings.Contains(res.stderr, "pass --yes") || readFile(t, filepath.Join(ws, "a.txt")) != "one\nTWO\n" {
		t.Fatalf("revert without a terminal: %s", res)
	}

	res = h.run(ws, 0, "revert", id, "--workspace", ws, "--yes")
	if res.code != 0 {
		t.Fatalf("revert: %s", res)
	}
	for _, want := range []string{"restore  a.txt", "delete   new/b.txt  (the run created it)", "restored a.txt", "deleted  new/b.txt",
		"1 tool call that can change files without the file tools", "Without a git base"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("revert output lacks %q:\n%s", want, res)
		}
	}
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "one\ntwo\n" {
		t.Errorf("a.txt is %q after the revert", got)
	}
	if fi, err := os.Stat(filepath.Join(ws, "a.txt")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("a.txt mode %v %v", fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(ws, "new")); !os.IsNotExist(err) {
		t.Errorf("new/ (made by the run) is still there: %v", err)
	}
	if got := readFile(t, filepath.Join(ws, "shell.txt")); got != "done\n" {
		t.Errorf("the command's file was touched: %q", got)
	}
	show := h.run(ws, 0, "show", id, "--workspace", ws)
	if !strings.Contains(show.stdout, "Reverted") || !strings.Contains(show.stdout, "from the cli: restored a.txt; deleted new/b.txt") {
		t.Errorf("show does not say what was reverted:\n%s", show)
	}
	h.assertSafe()
}

func TestRevertRefusesALaterChangeOnTheBinary(t *testing.T) {
	h := newHostile(t)
	ws, id := revertWorkspace(t, h, "later")
	h.write(filepath.Join(ws, "a.txt"), "one\nTWO\nmine\n", 0o640)

	res := h.run(ws, 0, "revert", id, "--workspace", ws, "--yes")
	if res.code != exitError {
		t.Fatalf("revert over a later change: %s", res)
	}
	for _, want := range []string{"Changed after the run ended, so not reverted (--force discards the change):", "      +mine", "deleted  new/b.txt", "not reverted a.txt"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res)
		}
	}
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "one\nTWO\nmine\n" {
		t.Fatalf("a.txt was reverted over the later change: %q", got)
	}
	res = h.run(ws, 0, "revert", id, "a.txt", "--workspace", ws, "--yes", "--force")
	if res.code != 0 || !strings.Contains(res.stdout, "a.txt changed after the run ended; --force discards that change") || !strings.Contains(res.stdout, "restored a.txt") {
		t.Fatalf("forced revert: %s", res)
	}
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "one\ntwo\n" {
		t.Errorf("a.txt is %q", got)
	}
	show := h.run(ws, 0, "show", id, "--workspace", ws)
	if !strings.Contains(show.stdout, "over later changes to a.txt") {
		t.Errorf("show:\n%s", show)
	}
}

// A copy under undo/ replaced, and an undo.json planted in place of the
// run's own: neither is ever written into the workspace.
func TestRevertRefusesPlantedCopiesOnTheBinary(t *testing.T) {
	h := newHostile(t)
	ws, id := revertWorkspace(t, h, "tampered")
	runDir := filepath.Join(ws, ".orchestration", "runs", id)
	blobs, _ := filepath.Glob(filepath.Join(runDir, "undo", "*"))
	if len(blobs) == 0 {
		t.Fatal("the run kept no copy")
	}
	for _, b := range blobs {
		h.write(b, "#!/bin/sh\ntouch "+h.marker+"\n", 0o644)
	}
	res := h.run(ws, 0, "revert", id, "--workspace", ws, "--yes", "--force")
	if res.code != exitError || !strings.Contains(res.stdout, "does not hold what the run's sealed record says") {
		t.Fatalf("revert from replaced copies: %s", res)
	}
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "one\nTWO\n" {
		t.Fatalf("a.txt was written from a replaced copy: %q", got)
	}

	// A record of the workspace's own making, with its copy beside it.
	evil := "#!/bin/sh\ntouch " + h.marker + "\n"
	sum := sha256Hex(evil)
	h.write(filepath.Join(runDir, "undo", sum), evil, 0o644)
	h.write(filepath.Join(runDir, "undo.json"), fmt.Sprintf(`{"runId":%q,"files":[{"path":"run.sh","tool":"write_file","before":{"exists":true,"sha256":%q,"size":%d,"perm":493,"kept":true},"after":{"exists":false}}]}`, id, sum, len(evil)), 0o644)
	res = h.run(ws, 0, "revert", id, "--workspace", ws, "--yes", "--force")
	if res.code != exitError || !strings.Contains(res.stderr, "its undo record is not sealed by you") {
		t.Fatalf("revert from a planted record: %s", res)
	}
	if _, err := os.Lstat(filepath.Join(ws, "run.sh")); !os.IsNotExist(err) {
		t.Fatalf("the planted record wrote run.sh: %v", err)
	}
	h.assertSafe()
}

// On a terminal, revert asks first, and no means nothing changes.
func TestRevertAsksOnATerminal(t *testing.T) {
	h := newHostile(t)
	tm := newAttachTmux(t, h)
	ws, id := revertWorkspace(t, h, "asked")
	tm.startShell("no", "revert", id, "--workspace", ws)
	tm.waitFor("no", "restore  a.txt", "delete   new/b.txt", "Revert 2 files of "+id+"? [y/N]")
	tm.tmux("send-keys", "-t", "no", "n", "Enter")
	tm.waitFor("no", "Nothing was reverted.", "exit status 1")
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "one\nTWO\n" {
		t.Fatalf("a no changed a.txt: %q", got)
	}
	tm.startShell("yes", "revert", id, "--workspace", ws)
	tm.waitFor("yes", "[y/N]")
	tm.tmux("send-keys", "-t", "yes", "y", "Enter")
	tm.waitFor("yes", "restored a.txt", "exit status 0")
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "one\ntwo\n" {
		t.Errorf("a.txt is %q", got)
	}
}

// startShell runs the binary with args in a new session's pane through a
// shell that then prints the exit status and stays, so that the output can
// be read after the command ended.
func (a *attachTmux) startShell(name string, args ...string) {
	a.t.Helper()
	a.tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", a.binaryLine(args...)+"; echo exit status $?; sleep 60")
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestRevertFromTheConsole: in the console, u on a file of "what changed"
// reverts it after y; U on the result card plans the rest, shows a file
// changed after the run with that change, and reverts it only after f and
// a second y.
func TestRevertFromTheConsole(t *testing.T) {
	h := newHostile(t)
	tm := newAttachTmux(t, h)
	ws := h.workspace("console")
	h.write(filepath.Join(ws, "a.txt"), "one\ntwo\n", 0o644)
	tm.start("c", filepath.Join(h.root, "c.stderr"), "--workspace", ws, "--guild", editGuild(t, h), "--provider", "script", "--script", editScript(t), "Edit the files")
	tm.waitFor("c", "Result · run-", "What changed · 2 files", "U revert")
	id := onlyRun(t, ws)
	h.write(filepath.Join(ws, "new", "b.txt"), "fresh\nmine\n", 0o644)

	tm.tmux("send-keys", "-t", "c", "w")
	tm.waitFor("c", "What changed · file 1 of 2", "a.txt", "u revert file")
	tm.tmux("send-keys", "-t", "c", "u")
	tm.waitFor("c", "Revert "+id+" · a.txt", "Back to how they were before the run", "restore  a.txt", "y revert 1 file")
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "one\nTWO\n" {
		t.Fatalf("a.txt changed before y: %q", got)
	}
	tm.tmux("send-keys", "-t", "c", "y")
	tm.waitFor("c", "Restored a.txt")
	if got := readFile(t, filepath.Join(ws, "a.txt")); got != "one\ntwo\n" {
		t.Fatalf("a.txt is %q after u, y", got)
	}
	tm.tmux("send-keys", "-t", "c", "Escape")

	tm.waitFor("c", "Result · "+id)
	tm.tmux("send-keys", "-t", "c", "U")
	tm.waitFor("c", "Changed after the run ended: not reverted unless you press f", "delete   new/b.txt", "+mine", "Already as before the run: a.txt", "f also the later-changed")
	tm.tmux("send-keys", "-t", "c", "y") // nothing revertable without f
	time.Sleep(300 * time.Millisecond)
	if got := readFile(t, filepath.Join(ws, "new", "b.txt")); got != "fresh\nmine\n" {
		t.Fatalf("new/b.txt was reverted without f: %q", got)
	}
	tm.tmux("send-keys", "-t", "c", "f")
	tm.waitFor("c", "new/b.txt changed after the run ended. Reverting discards that change too", "Discard it and revert 1 file?")
	tm.tmux("send-keys", "-t", "c", "y")
	tm.waitFor("c", "Deleted new/b.txt")
	if _, err := os.Stat(filepath.Join(ws, "new")); !os.IsNotExist(err) {
		t.Errorf("new/ is still there: %v", err)
	}
	tm.tmux("send-keys", "-t", "c", "Escape")
	show := h.run(ws, 0, "show", id, "--workspace", ws)
	if !strings.Contains(show.stdout, "from the console: restored a.txt") || !strings.Contains(show.stdout, "from the console: deleted new/b.txt; over later changes to new/b.txt") {
		t.Errorf("show:\n%s", show)
	}
}
