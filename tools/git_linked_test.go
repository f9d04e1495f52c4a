package tools

// The git tools on a linked worktree and on a submodule checkout, whose git
// directories lie outside the workspace: under a HOME the sandbox masks,
// in /tmp, which the sandbox replaces. Every tool works, unconfined and in
// real bubblewrap; what they write lands in the repository's git
// directories and nowhere else outside; commands see the git directories
// read-only and nothing else of the main checkout.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/gittest"
	"github.com/guildhall/guildhall/internal/sandboxtest"
	"github.com/guildhall/guildhall/internal/treesum"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// linkedRepo is a workspace whose repository's git directories are
// outside it.
type linkedRepo struct {
	base   string // everything of the test
	home   string // the operator's HOME
	ws     string // the worktree or the submodule checkout
	gitDir string // its git directory
	common string // its common directory
	main   string // the checkout whose working tree is not the workspace's
	branch string // the branch the workspace has checked out
}

// newLinkedBase makes a base folder with a HOME holding a credential.
func newLinkedBase(t *testing.T) (base, home string) {
	t.Helper()
	requireGit(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(base, "home")
	t.Setenv("HOME", home)
	writeTestFile(t, filepath.Join(home, ".ssh", "id_ed25519"), "FAKE-KEY\n")
	return base, home
}

func commitFile(t *testing.T, dir, name, content string) {
	t.Helper()
	writeTestFile(t, filepath.Join(dir, name), content)
	gittest.Run(t, dir, "add", name)
	gittest.Run(t, dir, "commit", "-q", "-m", "add "+name)
}

// newLinkedWorktree: the main checkout under HOME, the worktree in /tmp.
func newLinkedWorktree(t *testing.T) *linkedRepo {
	base, home := newLinkedBase(t)
	main := filepath.Join(home, "src", "main")
	if err := os.MkdirAll(main, 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, main, "init", "-q", "-b", "main")
	commitFile(t, main, "a.txt", "one\n")
	ws := filepath.Join(base, "wt")
	gittest.Run(t, main, "worktree", "add", "-q", "-b", "feature", ws)
	return &linkedRepo{base: base, home: home, ws: ws, main: main, branch: "feature",
		gitDir: filepath.Join(main, ".git", "worktrees", "wt"), common: filepath.Join(main, ".git")}
}

// newLinkedSubmodule: a superproject under HOME with a submodule checkout.
func newLinkedSubmodule(t *testing.T) *linkedRepo {
	base, home := newLinkedBase(t)
	lib := filepath.Join(home, "src", "lib")
	super := filepath.Join(home, "src", "super")
	for _, d := range []string{lib, super} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, d, "init", "-q", "-b", "main")
	}
	commitFile(t, lib, "a.txt", "one\n")
	commitFile(t, super, "super.txt", "the superproject\n")
	gittest.Run(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib")
	gittest.Run(t, super, "commit", "-q", "-m", "add lib")
	ws := filepath.Join(super, "vendor", "lib")
	gittest.Run(t, ws, "checkout", "-q", "-b", "feature")
	gd := filepath.Join(super, ".git", "modules", "vendor", "lib")
	return &linkedRepo{base: base, home: home, ws: ws, main: super, branch: "feature", gitDir: gd, common: gd}
}

// outsideSums checksums everything of the test but the workspace and the
// repository's git directories: the main checkout's working tree, HOME.
func (l *linkedRepo) outsideSums(t *testing.T) map[string]string {
	t.Helper()
	sums, err := treesum.Of(l.base)
	if err != nil {
		t.Fatal(err)
	}
	for p := range sums {
		for _, skip := range []string{l.ws, l.common, l.gitDir} {
			if p == skip || strings.HasPrefix(p, skip+string(filepath.Separator)) {
				delete(sums, p)
			}
		}
	}
	return sums
}

func TestGitToolsOnLinkedLayouts(t *testing.T) {
	layouts := []struct {
		name string
		make func(*testing.T) *linkedRepo
	}{
		{"linked worktree", newLinkedWorktree},
		{"submodule checkout", newLinkedSubmodule},
	}
	for _, layout := range layouts {
		for _, mode := range []string{"none", "workspace-write"} {
			t.Run(layout.name+"/"+mode, func(t *testing.T) {
				if mode != "none" {
					sandboxtest.Need(t)
				}
				l := layout.make(t)
				ws, err := OpenWorkspace(l.ws)
				if err != nil {
					t.Fatal(err)
				}
				defer ws.Close()
				env := testEnv(ws)
				env.Meta = &fakeMeta{}
				if mode != "none" {
					env.Sandbox = confined(t, ws, sandbox.Config{Mode: mode})
				}
				checkLinkedTools(t, l, env)
				if mode != "none" {
					checkLinkedShell(t, l, env)
				}
			})
		}
	}
}

// checkLinkedTools runs every git tool and checks what each did.
func checkLinkedTools(t *testing.T, l *linkedRepo, env *Env) {
	t.Helper()
	writeTestFile(t, filepath.Join(l.ws, "a.txt"), "two\n")
	writeTestFile(t, filepath.Join(l.ws, "new.txt"), "new\n")
	writeTestFile(t, filepath.Join(l.ws, ".orchestration", "runs", "r", "log.jsonl"), "{}\n")
	before := l.outsideSums(t)
	head := gittest.Run(t, l.ws, "rev-parse", "HEAD")

	u := data(t, call(t, env, "git_uncommitted_changes", map[string]any{}))
	if s := u["status"].(string); !strings.Contains(s, "a.txt") || !strings.Contains(s, "new.txt") || strings.Contains(s, ".orchestration") {
		t.Errorf("uncommitted status: %q", s)
	}
	if p := u["patch"].(string); !strings.Contains(p, "+two") {
		t.Errorf("uncommitted patch: %q", p)
	}
	if d := data(t, call(t, env, "git_set_base", map[string]any{})); d["base"] != head {
		t.Errorf("base %v, want %s", d["base"], head)
	}
	if d := data(t, call(t, env, "git_changes_since_base", map[string]any{})); !strings.Contains(d["patch"].(string), "+two") {
		t.Errorf("changes since base: %v", d)
	}
	data(t, call(t, env, "git_branch", map[string]any{"name": "checkpoint"}))
	if got := gittest.Run(t, l.main, "--git-dir="+l.common, "rev-parse", "checkpoint"); got != head {
		t.Errorf("checkpoint branch at %s, want %s", got, head)
	}
	c := data(t, call(t, env, "git_commit", map[string]any{"message": "work in the linked checkout"}))
	if got := gittest.Run(t, l.main, "--git-dir="+l.common, "log", "-1", "--format=%H %s", l.branch); got != c["commit"].(string)+" work in the linked checkout" {
		t.Errorf("the repository's %s branch: %q, commit %v", l.branch, got, c["commit"])
	}
	if out := gittest.Run(t, l.ws, "ls-files"); strings.Contains(out, ".orchestration") || !strings.Contains(out, "new.txt") {
		t.Errorf("committed files: %s", out)
	}
	writeTestFile(t, filepath.Join(l.ws, "a.txt"), "an edit to undo\n")
	data(t, call(t, env, "git_restore", map[string]any{"paths": []string{"a.txt"}}))
	if got, _ := os.ReadFile(filepath.Join(l.ws, "a.txt")); string(got) != "two\n" {
		t.Errorf("git_restore: a.txt is %q", got)
	}
	if d := data(t, call(t, env, "git_init", map[string]any{})); d["reinitialized"] != true {
		t.Errorf("git_init: %v", d)
	}
	if b, _ := os.ReadFile(filepath.Join(l.common, "info", "exclude")); strings.Count(string(b), "/.orchestration/") != 1 {
		t.Errorf("the common directory's exclude: %q", b)
	}
	after := l.outsideSums(t)
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("%s changed outside the workspace and its git directories", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared outside the workspace and its git directories", p)
		}
	}
}

// checkLinkedShell: commands find the repository, see its git directories
// read-only, and see nothing else of the main checkout or HOME.
func checkLinkedShell(t *testing.T, l *linkedRepo, env *Env) {
	t.Helper()
	if d := shellResult(t, env, "git log -1 --format=%s && git status --porcelain"); exitOf(d) != 0 ||
		!strings.HasPrefix(d["stdout"].(string), "work in the linked checkout\n") {
		t.Errorf("git in a command: %v", d)
	}
	for _, p := range []string{filepath.Join(l.common, "info", "planted"), filepath.Join(l.gitDir, "planted"), filepath.Join(l.common, "hooks", "pre-commit")} {
		if d := shellResult(t, env, "echo x > '"+p+"'"); exitOf(d) == 0 {
			t.Errorf("a command wrote %s: %v", p, d)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists on the host", p)
		}
	}
	for _, p := range []string{filepath.Join(l.main, filepath.Base(firstFile(t, l.main))), filepath.Join(l.home, ".ssh", "id_ed25519")} {
		if d := shellResult(t, env, "cat '"+p+"'"); exitOf(d) == 0 {
			t.Errorf("a command read %s: %v", p, d)
		}
	}
}

// firstFile is a tracked file of the main checkout's working tree.
func firstFile(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			return e.Name()
		}
	}
	t.Fatalf("no file in %s", dir)
	return ""
}
