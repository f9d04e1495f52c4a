package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/store"
)

// TestRecordsAdoptAfterTheFolderMoved (issue 29, point 8), on the real
// binary: a run stopped on its budget, and a run planted in the same
// folder by another account's Guildhall (another records key). The folder
// moves. resume says the folder moved and how to adopt; runs marks the
// one run moved and the other foreign; adopt lists both, marking the
// planted one unknown, refuses without a terminal or --yes, and adopts
// only what it is told. The adopted run resumes to success; the planted
// one stays foreign.
func TestRecordsAdoptAfterTheFolderMoved(t *testing.T) {
	h := newHostile(t)
	old := h.workspace("before")
	script := rawScript(t, h, map[string]any{"roles": map[string]any{"orchestrator": []any{
		listTurn("a"), listTurn("b"),
		map[string]any{"toolCalls": []any{map[string]any{"name": "finish", "arguments": map[string]any{"status": "success", "summary": "looked twice"}}}},
	}}})
	guild := budgetGuild(t, h)
	run := func(ws string, env []string, args ...string) result {
		return h.runEnv(ws, 0, env, append(args, "--workspace", ws)...)
	}
	res := run(old, nil, "run", "--guild", guild, "--provider", "script", "--script", script, "--no-input", "--max-tool-calls", "1", "Look around")
	if res.code != 1 {
		t.Fatalf("the run should stop on its budget: %s", res)
	}
	mine, _ := budgetRun(t, old)

	// Another account's Guildhall (its own records key) records a run
	// here, naming this folder: to this operator it is planted.
	otherState := filepath.Join(h.root, "other-account-state")
	res = run(old, []string{"XDG_STATE_HOME=" + otherState}, "run", "--guild", guild, "--provider", "script", "--script", script, "--no-input", "--max-tool-calls", "1", "Planted")
	if res.code != 1 {
		t.Fatalf("the other account's run: %s", res)
	}
	ids, _ := (store.Workspace{Dir: old}).ListRunIDs()
	if len(ids) != 2 {
		t.Fatalf("runs %v", ids)
	}
	planted := ids[0]
	if planted == mine.RunID {
		planted = ids[1]
	}

	moved := filepath.Join(filepath.Dir(old), "after")
	if out, err := exec.Command("mv", old, moved).CombinedOutput(); err != nil {
		t.Fatalf("mv: %v %s", err, out)
	}
	resumeArgs := []string{"resume", "--provider", "script", "--script", script, "--no-input", "--max-tool-calls", "0"}
	res = run(moved, nil, append(resumeArgs, mine.RunID)...)
	if res.code != 1 || !strings.Contains(res.stderr, "run "+mine.RunID+" was recorded when this folder was "+old) ||
		!strings.Contains(res.stderr, "guildhall records adopt") || strings.Contains(res.stderr, "integrity check") {
		t.Fatalf("resume in the moved folder: %s", res)
	}
	res = run(moved, nil, "resume", "--provider", "script", "--script", script, "--no-input", planted)
	if res.code != 1 || strings.Contains(res.stderr, "was recorded when this folder was") || !strings.Contains(res.stderr, "not sealed for this folder by your records key") {
		t.Fatalf("resume of the planted run: %s", res)
	}
	res = run(moved, nil, "runs")
	if !strings.Contains(res.stdout, mine.RunID+"  moved (") || !strings.Contains(res.stdout, planted+"  foreign (") ||
		!strings.Contains(res.stdout, "1 of them you recorded when this folder was elsewhere") {
		t.Errorf("runs in the moved folder:\n%s", res)
	}

	// Without a terminal and without --yes: the list, then a usage error.
	res = run(moved, nil, "records", "adopt")
	if res.code != exitUsage || !strings.Contains(res.stderr, "pass --yes") {
		t.Fatalf("adopt without a terminal: %s", res)
	}
	for _, want := range []string{
		"yours    " + mine.RunID, "recorded when this folder was " + old,
		"unknown  " + planted, "not sealed by your key; it claims " + old,
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("adopt's list lacks %q:\n%s", want, res.stdout)
		}
	}
	if m, _ := (store.Workspace{Dir: moved}).ReadMeta(mine.RunID); m.Workspace != old {
		t.Errorf("a refused adopt changed the record: it names %q", m.Workspace)
	}

	res = run(moved, nil, "records", "adopt", "--yes", mine.RunID)
	if res.code != 0 || !strings.Contains(res.stdout, "adopted "+mine.RunID) || strings.Contains(res.stdout, "adopted "+planted) {
		t.Fatalf("adopt --yes %s: %s", mine.RunID, res)
	}
	res = run(moved, nil, append(resumeArgs, mine.RunID)...)
	if res.code != 0 {
		t.Fatalf("resume after adopt: %s", res)
	}
	w := store.Workspace{Dir: moved}
	if m, _ := w.ReadMeta(mine.RunID); m.Status != store.StatusSuccess || m.Workspace != moved {
		t.Errorf("the adopted run: status %s, names %q", m.Status, m.Workspace)
	}
	res = run(moved, nil, "resume", "--provider", "script", "--script", script, "--no-input", planted)
	if res.code != 1 || !strings.Contains(res.stderr, "is foreign") {
		t.Errorf("the planted run after adopting another: %s", res)
	}
	if _, err := os.Stat(filepath.Join(moved, ".orchestration", "runs", planted, "state.json")); err != nil {
		t.Errorf("the planted run's checkpoint: %v", err)
	}
}

// TestRecordsAdoptAsksOnTheTerminal: under tmux, adopt shows the list and
// asks once; "n" (or just Enter) adopts nothing and exits 1, "y" re-seals.
func TestRecordsAdoptAsksOnTheTerminal(t *testing.T) {
	if _, err := os.Stat("/usr/bin/tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	h := newHostile(t)
	old := h.workspace("asked")
	script := rawScript(t, h, map[string]any{"roles": map[string]any{"orchestrator": []any{
		listTurn("a"),
		map[string]any{"toolCalls": []any{map[string]any{"name": "finish", "arguments": map[string]any{"status": "success", "summary": "done"}}}},
	}}})
	res := h.run(old, 0, "run", "--workspace", old, "--guild", budgetGuild(t, h), "--provider", "script", "--script", script, "--no-input", "Look")
	if res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	m, _ := budgetRun(t, old)
	moved := filepath.Join(filepath.Dir(old), "renamed")
	if err := os.Rename(old, moved); err != nil {
		t.Fatal(err)
	}
	adopt := func(answer string) (string, string) {
		c, done := startTmuxPrompt(t, h.bin, moved, h.env(), "records", "adopt")
		screen := c.waitFor("yours    "+m.RunID, "Re-seal 1 run for "+moved+" under your key? [y/N]")
		c.keys(answer, "Enter")
		waitFile(t, done, 20*time.Second)
		code, _ := os.ReadFile(done)
		return strings.TrimSpace(string(code)), screen
	}
	if code, screen := adopt("n"); code != "1" {
		t.Fatalf("answered n: exit %s\n%s", code, screen)
	}
	if got, _ := (store.Workspace{Dir: moved}).ReadMeta(m.RunID); got.Workspace != old {
		t.Fatalf("answered n, yet the run was re-sealed (it names %q)", got.Workspace)
	}
	if code, screen := adopt("y"); code != "0" {
		t.Fatalf("answered y: exit %s\n%s", code, screen)
	}
	res = h.run(moved, 0, "show", "--workspace", moved, m.RunID)
	if res.code != 0 || strings.Contains(res.stdout, "Foreign") {
		t.Errorf("the adopted run is still foreign:\n%s", res)
	}
}

// startTmuxPrompt runs the binary in a detached tmux pane with exactly
// env, its standard error on the pane (where prompts go), and returns the
// pane and the file its exit status goes to.
func startTmuxPrompt(t *testing.T, bin, dir string, env []string, args ...string) (*tmuxConsole, string) {
	t.Helper()
	done := filepath.Join(t.TempDir(), "exit-status")
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	cmd := []string{"cd", quote(dir), "&&", "env", "-i"}
	for _, kv := range append(env, "TERM=xterm-256color") {
		cmd = append(cmd, quote(kv))
	}
	cmd = append(cmd, quote(bin))
	for _, a := range args {
		cmd = append(cmd, quote(a))
	}
	script := strings.Join(cmd, " ") + "; echo $? > " + quote(done) + "; sleep 60"
	c := &tmuxConsole{t: t, name: fmt.Sprintf("guildhall-adopt-%d-%d", os.Getpid(), time.Now().UnixNano())}
	c.tmux("new-session", "-d", "-s", c.name, "-x", "200", "-y", "30", script)
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", c.name).Run() })
	return c, done
}
