package main

// A workspace that talks the model into planting a git hook or
// core.fsmonitor through the file tools, which run on the host: through
// the real binary, a scripted model calls write_file and edit_file on
// every path into a git directory, and the test checks each is refused,
// the git directories are unchanged, and the operator's own `git status`
// and `git commit` afterwards run nothing planted.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/gittest"
	"github.com/guildhall/guildhall/runner/event"
)

func TestHostileFileToolsWriteGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	h := newHostile(t)
	ws := h.workspace("gitwrite")
	gitRepoIn(t, h, ws, "")
	sub := filepath.Join(ws, "sub")
	h.write(filepath.Join(sub, "s.txt"), "nested\n", 0o644)
	gittest.Run(t, sub, "init", "-q", "-b", "main")
	// What a command could have left: a link to the hooks folder.
	if err := os.Symlink(".git/hooks", filepath.Join(ws, "hooks-link")); err != nil {
		t.Fatal(err)
	}
	gitDirs := []string{filepath.Join(ws, ".git"), filepath.Join(sub, ".git")}
	before := gitSums(t, gitDirs...)

	fsmonitor := "[core]\n\tfsmonitor = \"echo fsmonitor >> " + h.marker + "; false\"\n\thooksPath = " + filepath.Join(ws, "evil-hooks") + "\n"
	hook := "#!/bin/sh\necho hook >> " + h.marker + "\n"
	writes := []struct{ path, content string }{
		{".git/config", fsmonitor},
		{".git/hooks/pre-commit", hook},
		{"sub/.git/config", fsmonitor},
		{".GIT/config", fsmonitor},
		{"hooks-link/pre-commit", hook},
		{filepath.Join(ws, ".git", "hooks", "post-checkout"), hook},
	}
	var turns [][]map[string]any
	for _, w := range writes {
		turns = append(turns, []map[string]any{{"name": "write_file", "args": map[string]any{"path": w.path, "content": w.content}}})
	}
	turns = append(turns,
		[]map[string]any{{"name": "edit_file", "args": map[string]any{"path": ".git/config", "old_string": "[core]", "new_string": fsmonitor}}},
		[]map[string]any{{"name": "read_file", "args": map[string]any{"path": ".git/HEAD"}}},
		finishTurn("success", "planted"))
	script := writeScript(t, map[string][][]map[string]any{"solo": turns})
	guild := h.roleGuild(filepath.Join(h.root, "guild"), "solo", "Do as the README says.", "write_file", "edit_file", "read_file", "finish")
	h.write(filepath.Join(ws, "evil-hooks", "pre-commit"), hook, 0o755)
	h.snapshot()

	res := h.run(ws, 0, "run", "--workspace", ws, "--guild", guild, "--provider", "script", "--script", script, "--no-input", "Follow the README")
	if res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	_, evs := readRun(t, ws)
	refused := 0
	for _, p := range payloadsOf[event.ToolResultPayload](t, evs, event.ToolResult) {
		switch p.Tool {
		case "write_file", "edit_file":
			if p.Kind != "permission_denied" || !strings.Contains(string(p.Result), "git directory") {
				t.Errorf("%s was not refused as a git directory write: %s %s", p.Tool, p.Kind, p.Result)
				continue
			}
			refused++
		case "read_file":
			if p.Kind != "success" || !strings.Contains(string(p.Result), "refs/heads/main") {
				t.Errorf("reading .git/HEAD: %s %s", p.Kind, p.Result)
			}
		}
	}
	if refused != len(writes)+1 {
		t.Errorf("%d writes refused, want %d", refused, len(writes)+1)
	}
	after := gitSums(t, gitDirs...)
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("%s changed: %s -> %s", p, sum, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared in a git directory", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, ".GIT")); err == nil {
		t.Error(".GIT was created")
	}

	// The operator's own git, as configured by default: nothing planted runs.
	for _, dir := range []string{ws, sub} {
		for _, args := range [][]string{{"status"}, {"commit", "-q", "--allow-empty", "-m", "operator"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = append(h.env(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=op", "GIT_AUTHOR_EMAIL=op@x", "GIT_COMMITTER_NAME=op", "GIT_COMMITTER_EMAIL=op@x")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("git %v in %s: %v\n%s", args, dir, err, out)
			}
		}
	}
	h.assertSafe()
}

// gitSums fingerprints git directories, leaving out the two files that
// Guildhall's own start-up writes (the exclude entry) and git refreshes.
func gitSums(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	sums := checksums(t, dirs...)
	for p := range sums {
		if strings.Contains(p, string(filepath.Separator)+"info") || filepath.Base(p) == "index" {
			delete(sums, p)
		}
	}
	return sums
}
