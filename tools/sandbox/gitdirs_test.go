package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/guildhall/guildhall/internal/gittest"
)

// TestOutsideGitDirsBinds: a linked worktree's common directory is bound
// writable only for a git command that writes, read-only otherwise, and a
// planted .git file naming another repository binds nothing.
func TestOutsideGitDirsBinds(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(base, "home"))
	git := func(dir string, args ...string) {
		t.Helper()
		gittest.Run(t, dir, args...)
	}
	main, wt := filepath.Join(base, "main"), filepath.Join(base, "wt")
	if err := os.MkdirAll(main, 0o755); err != nil {
		t.Fatal(err)
	}
	git(main, "init", "-q", "-b", "main")
	git(main, "commit", "-q", "--allow-empty", "-m", "first")
	git(main, "worktree", "add", "-q", "-b", "wt", wt)
	common := filepath.Join(main, ".git")

	p, err := NewPolicy(Config{})
	if err != nil {
		t.Fatal(err)
	}
	args := func(ws string, writable bool) []string {
		t.Helper()
		l, err := newLayout(p, ws, filepath.Join(base, "scratch"))
		if err != nil {
			t.Fatal(err)
		}
		a, err := l.args(mountOptions{gitWritable: writable})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	has := func(a []string, op, dir string) bool {
		for i := 0; i+2 < len(a); i++ {
			if a[i] == op && a[i+1] == dir && a[i+2] == dir {
				return true
			}
		}
		return false
	}
	if a := args(wt, false); !has(a, "--ro-bind", common) || has(a, "--bind", common) {
		t.Errorf("a reading command: %v", a)
	}
	if a := args(wt, true); !has(a, "--bind", common) || has(a, "--ro-bind", common) {
		t.Errorf("a writing git command: %v", a)
	}
	// The same common directory named by a .git file of a workspace that
	// is not its worktree.
	other := filepath.Join(base, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, ".git"), []byte("gitdir: "+filepath.Join(common, "worktrees", "wt")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if a := args(other, true); slices.Contains(a, common) {
		t.Errorf("a planted .git file got the repository bound: %v", a)
	}
}
