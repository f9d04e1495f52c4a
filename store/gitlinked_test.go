package store

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/gittest"
)

// linkedFixture is a main repository with a linked worktree, and a
// superproject with a submodule checkout, made by real git, under a fresh
// HOME whose credential stores exist.
type linkedFixture struct {
	*excludeTrap
	main, wt, super, sub string
}

func newLinkedFixture(t *testing.T) *linkedFixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	x := newExcludeTrap(t)
	t.Setenv("HOME", x.path("home"))
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	x.mkdir("home/.ssh")
	f := &linkedFixture{excludeTrap: x, main: x.path("main"), wt: x.path("wt"), super: x.path("super"), sub: x.path("super/vendor/lib")}
	f.repo(f.main)
	gittest.Run(t, f.main, "worktree", "add", "-q", "-b", "wt", f.wt)
	lib := x.path("lib")
	f.repo(lib)
	f.repo(f.super)
	gittest.Run(t, f.super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib")
	return f
}

func (f *linkedFixture) repo(dir string) {
	f.t.Helper()
	f.mkdir(strings.TrimPrefix(dir, f.root+"/"))
	gittest.Run(f.t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		f.t.Fatal(err)
	}
	gittest.Run(f.t, dir, "add", "a.txt")
	gittest.Run(f.t, dir, "commit", "-q", "-m", "first")
}

// TestResolveLinkedLayouts: a real linked worktree and a real submodule
// checkout resolve to their git directories outside the workspace, with
// relative pointers too, and the exclude entry goes into the common
// directory's info/exclude.
func TestResolveLinkedLayouts(t *testing.T) {
	f := newLinkedFixture(t)
	cases := []struct {
		name    string
		ws      string
		prepare func()
		want    GitLayout
		exclude string
	}{
		{"linked worktree", f.wt, nil,
			GitLayout{Workspace: f.wt, GitDir: f.path("main/.git/worktrees/wt"), CommonDir: f.path("main/.git"), Linked: LinkedWorktree},
			f.path("main/.git/info/exclude")},
		{"linked worktree with relative pointers", f.wt, func() {
			// What worktree.useRelativePaths (git 2.48) writes.
			f.write("wt/.git", "gitdir: ../main/.git/worktrees/wt\n", 0o644)
			f.write("main/.git/worktrees/wt/gitdir", "../../../../wt/.git\n", 0o644)
		}, GitLayout{Workspace: f.wt, GitDir: f.path("main/.git/worktrees/wt"), CommonDir: f.path("main/.git"), Linked: LinkedWorktree},
			f.path("main/.git/info/exclude")},
		{"submodule checkout", f.sub, nil,
			GitLayout{Workspace: f.sub, GitDir: f.path("super/.git/modules/vendor/lib"), CommonDir: f.path("super/.git/modules/vendor/lib"), Linked: LinkedSubmodule},
			f.path("super/.git/modules/vendor/lib/info/exclude")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.prepare != nil {
				c.prepare()
			}
			l, err := ResolveGitLayout(c.ws)
			if err != nil {
				t.Fatal(err)
			}
			if l != c.want {
				t.Fatalf("layout %+v, want %+v", l, c.want)
			}
			if got := l.OutsideDirs(); len(got) != 1 || got[0] != c.want.CommonDir {
				t.Errorf("outside dirs %v, want just the common dir", got)
			}
			if err := (Workspace{Dir: c.ws}).EnsureGitExclude(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(c.exclude)
			if err != nil || strings.Count(string(b), "/.orchestration/") != 1 {
				t.Errorf("%s: %q %v", c.exclude, b, err)
			}
		})
	}
}

// TestResolveLinkedRefusesHostilePointers plants `.git` files that point
// out of the workspace at every kind of folder a worktree or submodule
// pointer could be abused for. Each is refused with a message naming what
// failed, never a host path; the exclude step writes nothing outside.
func TestResolveLinkedRefusesHostilePointers(t *testing.T) {
	cases := []struct {
		name   string
		plant  func(f *linkedFixture) string // returns the workspace
		reason string
	}{
		{"system folder", func(f *linkedFixture) string {
			f.write("ws/.git", "gitdir: /etc\n", 0o644)
			return f.ws
		}, "a place the git tools never touch"},
		{"folder without HEAD", func(f *linkedFixture) string {
			f.write("ws/.git", "gitdir: "+f.path("outside/empty")+"\n", 0o644)
			return f.ws
		}, "not a git directory (it has no HEAD file)"},
		{"another repository's own git directory", func(f *linkedFixture) string {
			f.write("ws/.git", "gitdir: "+f.path("main/.git")+"\n", 0o644)
			return f.ws
		}, "neither a linked worktree's"},
		{"another checkout's worktree", func(f *linkedFixture) string {
			f.write("ws/.git", "gitdir: "+f.path("main/.git/worktrees/wt")+"\n", 0o644)
			return f.ws
		}, "back-pointer) names another checkout's .git"},
		{"forged worktree outside worktrees/", func(f *linkedFixture) string {
			f.write("outside/fake/HEAD", "ref: refs/heads/main\n", 0o644)
			f.write("outside/fake/commondir", f.path("main/.git")+"\n", 0o644)
			f.write("outside/fake/gitdir", f.path("ws/.git")+"\n", 0o644)
			f.write("ws/.git", "gitdir: "+f.path("outside/fake")+"\n", 0o644)
			return f.ws
		}, "not in the worktrees/ folder"},
		{"forged worktree of a folder that is not a repository", func(f *linkedFixture) string {
			f.write("outside/notrepo/worktrees/w/HEAD", "ref: refs/heads/main\n", 0o644)
			f.write("outside/notrepo/worktrees/w/commondir", "../..\n", 0o644)
			f.write("outside/notrepo/worktrees/w/gitdir", f.path("ws/.git")+"\n", 0o644)
			f.write("ws/.git", "gitdir: "+f.path("outside/notrepo/worktrees/w")+"\n", 0o644)
			return f.ws
		}, "does not name a git directory"},
		{"worktree with a dangling commondir", func(f *linkedFixture) string {
			f.write("outside/w/HEAD", "ref: refs/heads/main\n", 0o644)
			f.write("outside/w/commondir", "../nothing\n", 0o644)
			f.write("ws/.git", "gitdir: "+f.path("outside/w")+"\n", 0o644)
			return f.ws
		}, "names a directory that does not exist"},
		{"worktree whose back-pointer is a FIFO", func(f *linkedFixture) string {
			if err := os.Remove(f.path("main/.git/worktrees/wt/gitdir")); err != nil {
				t.Fatal(err)
			}
			f.fifo("main/.git/worktrees/wt/gitdir")
			return f.wt
		}, "does not hold a path"},
		{"worktree whose HEAD is a link", func(f *linkedFixture) string {
			head := f.path("main/.git/worktrees/wt/HEAD")
			if err := os.Remove(head); err != nil {
				t.Fatal(err)
			}
			f.link(f.path("main/.git/HEAD"), "main/.git/worktrees/wt/HEAD")
			return f.wt
		}, "no HEAD file"},
		{"worktree of a repository in ~/.ssh", func(f *linkedFixture) string {
			repo := f.path("home/.ssh/keys")
			f.repo(repo)
			gittest.Run(t, repo, "worktree", "add", "-q", "-b", "w", f.path("sshwt"))
			return f.path("sshwt")
		}, "a place the git tools never touch"},
		{"worktree of a repository in Guildhall's state", func(f *linkedFixture) string {
			repo := f.path("home/.local/state/guildhall/repo")
			f.repo(repo)
			gittest.Run(t, repo, "worktree", "add", "-q", "-b", "w", f.path("statewt"))
			return f.path("statewt")
		}, "a place the git tools never touch"},
		{"git directory holding the workspace", func(f *linkedFixture) string {
			f.write("outside/g/HEAD", "ref: refs/heads/main\n", 0o644)
			f.mkdir("outside/g/objects")
			f.mkdir("outside/g/refs")
			f.mkdir("outside/g/inner")
			f.write("outside/g/inner/.git", "gitdir: ..\n", 0o644)
			return f.path("outside/g/inner")
		}, "holds the workspace itself"},
		{"submodule of a superproject elsewhere", func(f *linkedFixture) string {
			f.write("ws/.git", "gitdir: "+f.path("super/.git/modules/vendor/lib")+"\n", 0o644)
			return f.ws
		}, "does not hold this workspace"},
		{"submodule git directory of another checkout", func(f *linkedFixture) string {
			other := f.path("super/other")
			f.mkdir("super/other")
			f.write("super/other/.git", "gitdir: ../.git/modules/vendor/lib\n", 0o644)
			return other
		}, "core.worktree names another checkout"},
		{"submodule without core.worktree", func(f *linkedFixture) string {
			gittest.Run(t, f.path("super/.git/modules/vendor/lib"), "config", "--file", "config", "--unset", "core.worktree")
			return f.sub
		}, "sets no core.worktree"},
		{".git link to a real worktree's git directory", func(f *linkedFixture) string {
			_ = os.Remove(f.path("wt/.git"))
			f.link(f.path("main/.git/worktrees/wt"), "wt/.git")
			return f.wt
		}, "symbolic link to a place outside"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newLinkedFixture(t)
			ws := c.plant(f)
			_, err := ResolveGitLayout(ws)
			var refused *GitDirError
			if !errors.As(err, &refused) || !refused.Outside || !strings.Contains(refused.Reason, c.reason) {
				t.Fatalf("want an outside refusal with %q, got %#v", c.reason, err)
			}
			if strings.Contains(refused.Reason, f.root) {
				t.Errorf("the reason names a host path: %s", refused.Reason)
			}
			before, _ := os.ReadFile(f.path("main/.git/info/exclude"))
			if err := (Workspace{Dir: ws}).EnsureGitExclude(); !SkippedGitExclude(err) {
				t.Errorf("the exclude step was not skipped: %v", err)
			}
			if after, _ := os.ReadFile(f.path("main/.git/info/exclude")); string(after) != string(before) {
				t.Errorf("the exclude step wrote another repository's exclude file: %q", after)
			}
		})
	}
}

// TestCoreWorktree reads core.worktree as git writes it, and refuses what
// it cannot read with certainty.
func TestCoreWorktree(t *testing.T) {
	cases := []struct {
		cfg  string
		want string
		ok   bool
	}{
		{"[core]\n\tworktree = ../../../vendor/lib\n", "../../../vendor/lib", true},
		{"[CORE]\n\tWorkTree=../x ; comment\n", "../x", true},
		{"[core]\n\tworktree = \"../a b\" # c\n", "../a b", true},
		{"[core]\n\tworktree = ../a\n[core]\n\tworktree = ../b\n", "../b", true},
		{"[core \"x\"]\n\tworktree = ../a\n", "", false},
		{"[remote \"o\"]\n\tworktree = ../a\n", "", false},
		{"[core]\n\tworktree = ../a\\\n", "", false},
		{"[core]\n\tworktree = \"../a\n", "", false},
		{"[core]\n\tworktree\n", "", false},
		{"[core] worktree = ../inline\n", "../inline", true},
		{"", "", false},
	}
	for _, c := range cases {
		got, ok := coreWorktree([]byte(c.cfg))
		if got != c.want || ok != c.ok {
			t.Errorf("%q: got %q %v, want %q %v", c.cfg, got, ok, c.want, c.ok)
		}
	}
}
