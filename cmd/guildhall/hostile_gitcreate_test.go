package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/sandboxtest"
)

// In a workspace without .git, a command runs `git init` and plants
// core.fsmonitor and a hook, for the operator's next `git status` to run
// unconfined. On the real binary no command can make the repository, the
// host is left with no .git at all (not even the placeholder), and the
// operator's git runs nothing.
func TestHostileSandboxCommandCannotCreateGit(t *testing.T) {
	sandboxtest.Need(t)
	h := newHostile(t)
	ws := h.workspace("no-git")
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, results := h.shellRun(ws, nil,
		"git init -q . && git config core.fsmonitor 'touch "+h.marker+"' && echo made-repo",
		"rm -rf .git; mkdir -p .git/hooks && echo 'touch "+h.marker+"' > .git/hooks/post-index-change && echo made-hook",
		"test -e .git && echo placeholder-visible; git status 2>&1 | head -1",
	)
	if res.code != 0 || len(results) != 3 {
		t.Fatalf("%s", res)
	}
	for i, r := range results[:2] {
		if out, _ := r["stdout"].(string); strings.Contains(out, "made-") {
			t.Errorf("command %d made a repository: %v", i+1, r)
		}
	}
	if fi, err := os.Lstat(filepath.Join(ws, ".git")); err == nil {
		t.Fatalf("the host workspace has a .git (%v, %d bytes) after the run", fi.Mode(), fi.Size())
	}
	git := exec.Command("git", "status")
	git.Dir = ws
	git.Env = append(os.Environ(), "HOME="+h.home, "GIT_CEILING_DIRECTORIES="+filepath.Dir(ws))
	_, _ = git.CombinedOutput()
	if _, err := os.Stat(h.marker); err == nil {
		t.Error("the operator's git status ran the workspace's planted program")
	}
}
