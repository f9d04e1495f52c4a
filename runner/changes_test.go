package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/guildhall/guildhall/internal/gittest"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
)

// changesGuild is one role with the file and git tools.
func changesGuild(t *testing.T) *Guild {
	t.Helper()
	g, err := LoadGuild(fstest.MapFS{
		"guild.json": {Data: []byte(`{"entryRole":"solo","roles":{"solo":{"systemPrompt":"p.md",
			"tools":["read_file","write_file","edit_file","run_shell","git_init","git_commit","git_set_base","finish"]}}}`)},
		"p.md": {Data: []byte("Work.")},
	}, "mem")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// changesOf runs the scripted turns in a workspace prepared by setup and
// returns the run's change set.
func changesOf(t *testing.T, setup func(dir string), turns ...provider.ScriptTurn) Changes {
	t.Helper()
	g := changesGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"solo": turns})
	if setup != nil {
		setup(h.dir)
	}
	_, evs, meta := h.run()
	for _, e := range find(evs, event.ToolResult) {
		var p event.ToolResultPayload
		_ = e.Decode(&p)
		if p.Tool == "run_shell" || strings.HasPrefix(p.Tool, "git_") {
			if p.Kind != "success" || strings.Contains(string(p.Result), `"exitCode":1`) {
				t.Fatalf("%s failed: %s", p.Tool, p.Result)
			}
		}
	}
	s := &Session{cfg: SessionConfig{Workspace: h.dir, Deployment: h.opts.Deployment}, ws: testWS(h.dir)}
	ch, err := s.Changes(context.Background(), meta.RunID)
	if err != nil {
		t.Fatalf("changes: %v", err)
	}
	return ch
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileChange(t *testing.T, ch Changes, path string) FileChange {
	t.Helper()
	for _, f := range ch.Files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("no change for %s in %+v", path, ch.Files)
	return FileChange{}
}

// Without a repository the change set comes from the log: each file the
// run's file tools changed, diffed against its earlier content.
func TestChangesFromTheLog(t *testing.T) {
	ch := changesOf(t, func(dir string) {
		write(t, dir, "lib/a.sh", "one\ntwo\nthree\n")
		write(t, dir, "notes.md", "kept\n")
		write(t, dir, "old.txt", "before the run\n")
		write(t, dir, "same.txt", "x\n")
	},
		turn("", call("read_file", map[string]any{"path": "./lib/a.sh"})),
		turn("", call("edit_file", map[string]any{"path": "lib/a.sh", "old_string": "two", "new_string": "TWO"})),
		turn("", call("write_file", map[string]any{"path": "new/b.txt", "content": "fresh\n"})),
		turn("", call("write_file", map[string]any{"path": "old.txt", "content": "after\n"})),
		// Changed and changed back: no net change.
		turn("", call("edit_file", map[string]any{"path": "same.txt", "old_string": "x", "new_string": "y"})),
		turn("", call("edit_file", map[string]any{"path": "same.txt", "old_string": "y", "new_string": "x"})),
		// Refused by the tools, so never a change.
		turn("", call("write_file", map[string]any{"path": "../outside.txt", "content": "no"})),
		turn("", call("edit_file", map[string]any{"path": "notes.md", "old_string": "absent", "new_string": "z"})),
		turn("", finishCall("success", "done")),
	)
	if ch.Source != ChangesFromLog {
		t.Fatalf("source %q, want log", ch.Source)
	}
	var paths []string
	for _, f := range ch.Files {
		paths = append(paths, f.Path)
	}
	if got := strings.Join(paths, " "); got != "lib/a.sh new/b.txt old.txt" {
		t.Fatalf("changed files %q, want lib/a.sh new/b.txt old.txt", got)
	}
	a := fileChange(t, ch, "lib/a.sh")
	if a.Status != "modified" || a.Added != 1 || a.Removed != 1 || !strings.Contains(a.Patch, "-two\n+TWO\n") || !strings.Contains(a.Patch, "--- a/lib/a.sh") {
		t.Errorf("lib/a.sh: %+v", a)
	}
	// The earlier contents the log does not hold come from the run's
	// sealed undo record.
	b := fileChange(t, ch, "new/b.txt")
	if b.Status != "added" || b.Added != 1 || !strings.Contains(b.Patch, "--- /dev/null\n+++ b/new/b.txt") || !strings.Contains(b.Patch, "+fresh") {
		t.Errorf("new/b.txt (created by the run): %+v", b)
	}
	o := fileChange(t, ch, "old.txt")
	if o.Status != "modified" || !strings.Contains(o.Patch, "-before the run\n+after\n") {
		t.Errorf("old.txt (its earlier content kept): %+v", o)
	}
}

// Without an undo record (a run of an older Guildhall, or one whose record
// is gone), a file written whole has no known earlier content, and none is
// invented.
func TestChangesFromTheLogWithoutAnUndoRecord(t *testing.T) {
	g := changesGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"solo": {
		turn("", call("write_file", map[string]any{"path": "old.txt", "content": "after\n"})),
		turn("", call("write_file", map[string]any{"path": "new/b.txt", "content": "fresh\n"})),
		turn("", finishCall("success", "done")),
	}})
	write(t, h.dir, "old.txt", "before the run\n")
	_, _, meta := h.run()
	if err := os.Remove(filepath.Join(h.dir, ".orchestration", "runs", meta.RunID, "undo.json")); err != nil {
		t.Fatal(err)
	}
	s := &Session{cfg: SessionConfig{Workspace: h.dir, Deployment: h.opts.Deployment}, ws: testWS(h.dir)}
	ch, err := s.Changes(context.Background(), meta.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if o := fileChange(t, ch, "old.txt"); o.Status != "written" || strings.Contains(o.Patch, "before the run") {
		t.Errorf("old.txt must not invent an earlier content: %+v", o)
	}
	if b := fileChange(t, ch, "new/b.txt"); b.Status != "written" || b.Note == "" {
		t.Errorf("new/b.txt: %+v", b)
	}
}

// An edit whose new text was changed again outside the file tools cannot
// be undone from the log; the undo record kept the content before the
// edit, so the diff is from that, never from an invented one.
func TestChangesFromTheLogNeverInventAnEarlierContent(t *testing.T) {
	ch := changesOf(t, func(dir string) { write(t, dir, "f.txt", "alpha\n") },
		turn("", call("edit_file", map[string]any{"path": "f.txt", "old_string": "alpha", "new_string": "beta"})),
		turn("", call("run_shell", map[string]any{"command": "printf 'gamma\\n' > f.txt"})),
		turn("", finishCall("success", "done")),
	)
	f := fileChange(t, ch, "f.txt")
	if f.Status != "modified" || !strings.Contains(f.Patch, "-alpha\n+gamma\n") || strings.Contains(f.Patch, "beta") {
		t.Errorf("f.txt: %+v", f)
	}
}

// A touched path that is now a link out of the workspace or a FIFO is
// not followed: the change set says it is not readable.
func TestChangesFromTheLogStayInTheWorkspace(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("operator secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ch := changesOf(t, nil,
		turn("", call("write_file", map[string]any{"path": "link.txt", "content": "x\n"})),
		turn("", call("run_shell", map[string]any{"command": "rm link.txt && ln -s " + outside + " link.txt && rm -f fifo && mkfifo fifo"})),
		turn("", call("write_file", map[string]any{"path": "fifo2", "content": "y\n"})),
		turn("", call("run_shell", map[string]any{"command": "rm fifo2 && mkfifo fifo2"})),
		turn("", finishCall("success", "done")),
	)
	for _, f := range ch.Files {
		if strings.Contains(f.Patch, "operator secret") {
			t.Fatalf("followed a link out of the workspace: %+v", f)
		}
	}
	if l := fileChange(t, ch, "link.txt"); l.Status != "deleted" || !strings.Contains(l.Note, "not readable") {
		t.Errorf("link.txt: %+v", l)
	}
	if f := fileChange(t, ch, "fifo2"); f.Status != "deleted" {
		t.Errorf("fifo2: %+v", f)
	}
}

// With a repository and a base the run set, the change set is git's diff
// against that base, untracked files included.
func TestChangesFromGit(t *testing.T) {
	ch := changesOf(t, func(dir string) { write(t, dir, "a.txt", "one\ntwo\n") },
		turn("", call("git_init", map[string]any{})),
		turn("", call("git_commit", map[string]any{"message": "base"})),
		turn("", call("git_set_base", map[string]any{})),
		turn("", call("edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "2"})),
		turn("", call("write_file", map[string]any{"path": "dir/new file.txt", "content": "n\n"})),
		turn("", finishCall("success", "done")),
	)
	if ch.Source != ChangesFromGit || len(ch.Base) != 40 {
		t.Fatalf("source %q base %q, want git", ch.Source, ch.Base)
	}
	a := fileChange(t, ch, "a.txt")
	if a.Status != "modified" || !strings.Contains(a.Patch, "-two\n+2") || a.Added != 1 || a.Removed != 1 {
		t.Errorf("a.txt: %+v", a)
	}
	n := fileChange(t, ch, "dir/new file.txt")
	if n.Status != "added" || !strings.Contains(n.Patch, "+n") {
		t.Errorf("untracked file: %+v", n)
	}
}

// The workspace's git configuration is hostile: an external diff driver,
// a textconv filter and a pager it names never run when the console
// diffs.
func TestChangesFromGitRunNoWorkspaceProgram(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	ch := changesOf(t, func(dir string) {
		write(t, dir, "a.txt", "one\n")
		write(t, dir, "evil.sh", "#!/bin/sh\ntouch "+marker+"\ncat \"$@\"\n")
		if err := os.Chmod(filepath.Join(dir, "evil.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, dir, ".gitattributes", "a.txt diff=evil\n")
		gittest.Run(t, dir, "init", "-q")
		gittest.Run(t, dir, "add", "-A")
		gittest.Run(t, dir, "commit", "-q", "-m", "base")
		evil := filepath.Join(dir, "evil.sh")
		gittest.Run(t, dir, "config", "diff.external", evil)
		gittest.Run(t, dir, "config", "diff.evil.textconv", evil)
		gittest.Run(t, dir, "config", "diff.evil.command", evil)
		gittest.Run(t, dir, "config", "core.pager", evil)
	},
		turn("", call("git_set_base", map[string]any{})),
		turn("", call("edit_file", map[string]any{"path": "a.txt", "old_string": "one", "new_string": "uno"})),
		turn("", finishCall("success", "done")),
	)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a program the workspace's git config names ran")
	}
	if ch.Source != ChangesFromGit {
		t.Fatalf("source %q", ch.Source)
	}
	if a := fileChange(t, ch, "a.txt"); !strings.Contains(a.Patch, "-one\n+uno") {
		t.Errorf("a.txt: %+v", a)
	}
}

func TestGitPatchPaths(t *testing.T) {
	cases := map[string]string{
		`a/x.go b/x.go`: "x.go",
		`a/dir/with space.txt b/dir/with space.txt`: "dir/with space.txt",
		`"a/caf\303\251.txt" "b/caf\303\251.txt"`:   "café.txt",
		`"a/tab\there" "b/tab\there"`:               "tab\there",
	}
	for in, want := range cases {
		if got := gitPatchPath(in); got != want {
			t.Errorf("gitPatchPath(%q) = %q, want %q", in, got, want)
		}
	}
}
