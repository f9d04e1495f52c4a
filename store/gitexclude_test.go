package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/treesum"
)

// excludeSecret is in files outside the workspace; the exclude step must
// never copy it in.
const excludeSecret = "OUTSIDE-EXCLUDE-SECRET-31c9"

// excludeTrap is a workspace beside an outside folder whose every file,
// mode and link is checksummed.
type excludeTrap struct {
	t                 *testing.T
	root, ws, outside string
}

func newExcludeTrap(t *testing.T) *excludeTrap {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	x := &excludeTrap{t: t, root: root, ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside")}
	x.write("outside/secret", excludeSecret+"\n", 0o600)
	x.write("outside/repo/.git/HEAD", "ref: refs/heads/main\n", 0o644)
	x.write("outside/repo/.git/info/exclude", "# outside excludes\n"+excludeSecret+"\n", 0o600)
	x.mkdir("outside/empty")
	x.mkdir("ws")
	return x
}

func (x *excludeTrap) path(rel string) string { return filepath.Join(x.root, rel) }

func (x *excludeTrap) mkdir(rel string) {
	x.t.Helper()
	if err := os.MkdirAll(x.path(rel), 0o755); err != nil {
		x.t.Fatal(err)
	}
}

func (x *excludeTrap) write(rel, content string, mode os.FileMode) {
	x.t.Helper()
	x.mkdir(filepath.Dir(rel))
	if err := os.WriteFile(x.path(rel), []byte(content), mode); err != nil {
		x.t.Fatal(err)
	}
	if err := os.Chmod(x.path(rel), mode); err != nil {
		x.t.Fatal(err)
	}
}

func (x *excludeTrap) link(target, rel string) {
	x.t.Helper()
	x.mkdir(filepath.Dir(rel))
	if err := os.Symlink(target, x.path(rel)); err != nil {
		x.t.Fatal(err)
	}
}

// fifo makes a FIFO at rel, and the folders above it.
func (x *excludeTrap) fifo(rel string) {
	x.t.Helper()
	x.mkdir(filepath.Dir(rel))
	if err := syscall.Mkfifo(x.path(rel), 0o644); err != nil {
		x.t.Fatal(err)
	}
}

func (x *excludeTrap) sums() map[string]string {
	x.t.Helper()
	sums, err := treesum.Of(x.outside)
	if err != nil {
		x.t.Fatal(err)
	}
	return sums
}

// TestGitExcludeNeverLeavesTheWorkspace plants every link, hard link and
// pointer shape around the git directory and its exclude file. The step
// either writes the entry inside the workspace or skips with a reason; it
// never reads, creates or changes anything outside, never copies an
// outside file in, and never blocks.
func TestGitExcludeNeverLeavesTheWorkspace(t *testing.T) {
	const (
		written = "written"
		skip    = "skip"
	)
	cases := []struct {
		name   string
		plant  func(x *excludeTrap)
		want   string // written or skip
		reason string // in the skip's reason
		file   string // where the entry is written (relative to root)
	}{
		{"plain repository", func(x *excludeTrap) { x.mkdir("ws/.git") }, written, "", "ws/.git/info/exclude"},
		{".git link to a directory inside", func(x *excludeTrap) {
			x.mkdir("ws/real.git")
			x.link("real.git", "ws/.git")
		}, written, "", "ws/real.git/info/exclude"},
		{".git file to a gitdir inside", func(x *excludeTrap) {
			x.mkdir("ws/sub/repo.git")
			x.write("ws/.git", "gitdir: sub/repo.git\r\n", 0o644)
		}, written, "", "ws/sub/repo.git/info/exclude"},
		{"linked worktree inside the workspace", func(x *excludeTrap) {
			x.mkdir("ws/main.git/worktrees/wt")
			x.write("ws/main.git/worktrees/wt/commondir", "../..\n", 0o644)
			x.write("ws/.git", "gitdir: "+x.path("ws/main.git/worktrees/wt")+"\n", 0o644)
		}, written, "", "ws/main.git/info/exclude"},
		{".git link to the outside repository", func(x *excludeTrap) {
			x.link(x.path("outside/repo/.git"), "ws/.git")
		}, skip, "outside the workspace", ""},
		{".git relative link climbing out", func(x *excludeTrap) {
			x.link("../outside/repo/.git", "ws/.git")
		}, skip, "outside the workspace", ""},
		{".git dangling link", func(x *excludeTrap) { x.link(x.path("outside/nothing"), "ws/.git") }, skip, "leads nowhere", ""},
		{".git link loop", func(x *excludeTrap) {
			x.link("loop", "ws/.git")
			x.link(".git", "ws/loop")
		}, skip, "leads nowhere", ""},
		{".git link to the workspace", func(x *excludeTrap) { x.link(".", "ws/.git") }, skip, "workspace itself", ""},
		{".git file to an absolute path outside", func(x *excludeTrap) {
			x.write("ws/.git", "gitdir: "+x.path("outside/repo/.git")+"\n", 0o644)
		}, skip, "outside the workspace", ""},
		{".git file to a missing place outside", func(x *excludeTrap) {
			x.write("ws/.git", "gitdir: "+x.path("outside/anywhere")+"\n", 0o644)
		}, skip, "outside the workspace", ""},
		{".git file to an empty folder outside", func(x *excludeTrap) {
			x.write("ws/.git", "gitdir: "+x.path("outside/empty")+"\n", 0o644)
		}, skip, "outside the workspace", ""},
		{".git file climbing out", func(x *excludeTrap) {
			x.write("ws/.git", "gitdir: ../outside/repo/.git\n", 0o644)
		}, skip, "outside the workspace", ""},
		{".git file climbing out after a link", func(x *excludeTrap) {
			x.mkdir("outside/a")
			x.link(x.path("outside/a"), "ws/l")
			x.mkdir("ws/repo/.git") // what a lexical reading would find
			x.write("ws/.git", "gitdir: l/../repo/.git\n", 0o644)
		}, skip, "outside the workspace", ""},
		{".git file without the prefix", func(x *excludeTrap) {
			x.write("ws/.git", x.path("outside/repo/.git")+"\n", 0o644)
		}, skip, "not a gitdir file", ""},
		{".git file too large", func(x *excludeTrap) {
			x.write("ws/.git", "gitdir: "+strings.Repeat("a/", 8<<10)+"\n", 0o644)
		}, skip, "larger than", ""},
		{".git FIFO", func(x *excludeTrap) { x.fifo("ws/.git") }, skip, "neither a directory nor a gitdir file", ""},
		{".git link to an outside .git file", func(x *excludeTrap) {
			x.write("outside/gitfile", "gitdir: "+x.path("outside/repo/.git")+"\n", 0o644)
			x.link(x.path("outside/gitfile"), "ws/.git")
		}, skip, "outside the workspace", ""},
		{"absolute commondir outside", func(x *excludeTrap) {
			x.write("ws/.git/commondir", x.path("outside/repo/.git")+"\n", 0o644)
		}, skip, "commondir is outside the workspace", ""},
		{"relative commondir climbing out", func(x *excludeTrap) {
			x.write("ws/.git/commondir", "../../outside/repo/.git", 0o644)
		}, skip, "commondir is outside the workspace", ""},
		{"commondir link to an outside file", func(x *excludeTrap) {
			x.write("outside/cd", x.path("outside/repo/.git")+"\n", 0o644)
			x.mkdir("ws/.git")
			x.link(x.path("outside/cd"), "ws/.git/commondir")
		}, skip, "commondir file is a symbolic link", ""},
		{"commondir FIFO", func(x *excludeTrap) { x.fifo("ws/.git/commondir") }, skip, "not a regular file", ""},
		{"info link outside", func(x *excludeTrap) {
			x.mkdir("ws/.git")
			x.link(x.path("outside/repo/.git/info"), "ws/.git/info")
		}, skip, "info is a symbolic link", ""},
		{"info link inside", func(x *excludeTrap) {
			x.mkdir("ws/.git/real-info")
			x.link("real-info", "ws/.git/info")
		}, skip, "info is a symbolic link", ""},
		{"info dangling link", func(x *excludeTrap) {
			x.mkdir("ws/.git")
			x.link(x.path("outside/new-info"), "ws/.git/info")
		}, skip, "info is a symbolic link", ""},
		{"info is a file", func(x *excludeTrap) { x.write("ws/.git/info", "x\n", 0o644) }, skip, "not a directory", ""},
		{"exclude link outside", func(x *excludeTrap) {
			x.mkdir("ws/.git/info")
			x.link(x.path("outside/secret"), "ws/.git/info/exclude")
		}, skip, "info/exclude is a symbolic link", ""},
		{"exclude relative link climbing out", func(x *excludeTrap) {
			x.mkdir("ws/.git/info")
			x.link("../../../outside/secret", "ws/.git/info/exclude")
		}, skip, "info/exclude is a symbolic link", ""},
		{"exclude link inside", func(x *excludeTrap) {
			x.write("ws/my-excludes", "*.tmp\n", 0o644)
			x.mkdir("ws/.git/info")
			x.link("../../my-excludes", "ws/.git/info/exclude")
		}, skip, "info/exclude is a symbolic link", ""},
		{"exclude dangling link", func(x *excludeTrap) {
			x.mkdir("ws/.git/info")
			x.link(x.path("outside/new-exclude"), "ws/.git/info/exclude")
		}, skip, "info/exclude is a symbolic link", ""},
		{"exclude hard link to an outside file", func(x *excludeTrap) {
			x.mkdir("ws/.git/info")
			if err := os.Link(x.path("outside/secret"), x.path("ws/.git/info/exclude")); err != nil {
				x.t.Fatal(err)
			}
		}, skip, "hard links", ""},
		{"exclude FIFO", func(x *excludeTrap) { x.fifo("ws/.git/info/exclude") }, skip, "not a regular file", ""},
		{"exclude directory", func(x *excludeTrap) { x.mkdir("ws/.git/info/exclude") }, skip, "not a regular file", ""},
		{"exclude huge", func(x *excludeTrap) {
			x.write("ws/.git/info/exclude", strings.Repeat("#\n", 600<<10), 0o644)
		}, skip, "larger than", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := newExcludeTrap(t)
			c.plant(x)
			before := x.sums()
			var err error
			done := make(chan struct{})
			go func() {
				defer close(done)
				err = Workspace{Dir: x.ws}.EnsureGitExclude()
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the exclude step blocked")
			}
			after := x.sums()
			for p, sum := range before {
				if after[p] != sum {
					t.Errorf("%s changed outside the workspace: %s → %s", p, sum, after[p])
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("%s appeared outside the workspace", p)
				}
			}
			_ = filepath.WalkDir(x.ws, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					if fi, _ := os.Lstat(p); linkCount(fi) == 1 {
						if b, _ := os.ReadFile(p); strings.Contains(string(b), excludeSecret) {
							t.Errorf("an outside file's content was copied into %s", p)
						}
					}
				}
				return nil
			})
			var skipped *GitExcludeSkipped
			switch {
			case c.want == written && err != nil:
				t.Errorf("want the entry written, got %v", err)
			case c.want == skip && !errors.As(err, &skipped):
				t.Errorf("want a skip (%s), got %v", c.reason, err)
			case c.want == skip && !strings.Contains(err.Error(), c.reason):
				t.Errorf("skip reason %q does not say %q", err, c.reason)
			}
			if c.file != "" {
				b, err := os.ReadFile(x.path(c.file))
				if err != nil || strings.Count(string(b), "/.orchestration/") != 1 {
					t.Errorf("%s: %q %v", c.file, b, err)
				}
				if err := (Workspace{Dir: x.ws}).EnsureGitExclude(); err != nil {
					t.Errorf("second run: %v", err)
				}
				if b2, _ := os.ReadFile(x.path(c.file)); string(b2) != string(b) {
					t.Errorf("second run changed the file: %q", b2)
				}
			}
		})
	}
}

// TestGitExcludeKeepsTheFile: an existing exclude file keeps its lines and
// its mode, gets the entry after a missing final newline, and is left
// untouched (same inode) once the entry is there.
func TestGitExcludeKeepsTheFile(t *testing.T) {
	x := newExcludeTrap(t)
	x.write("ws/.git/info/exclude", "*.log", 0o600)
	ws := Workspace{Dir: x.ws}
	if err := ws.EnsureGitExclude(); err != nil {
		t.Fatal(err)
	}
	p := x.path("ws/.git/info/exclude")
	b, _ := os.ReadFile(p)
	if string(b) != "*.log\n# Guildhall run records\n/.orchestration/\n" {
		t.Errorf("exclude: %q", b)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode())
	}
	if err := ws.EnsureGitExclude(); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Stat(p); !os.SameFile(fi, again) {
		t.Error("an exclude file that already holds the entry was rewritten")
	}
	// No temporary file is left beside it.
	ents, _ := os.ReadDir(x.path("ws/.git/info"))
	if len(ents) != 1 {
		t.Errorf("info holds %v", ents)
	}
	// Not a repository: nothing happens, nothing is created.
	plain := t.TempDir()
	if err := (Workspace{Dir: plain}).EnsureGitExclude(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(plain); len(ents) != 0 {
		t.Errorf("a workspace without .git got %v", ents)
	}
}

// TestResolveGitLayout: the layouts git itself accepts, inside the
// workspace, resolve to canonical paths, and the refusals say whether the
// repository is outside.
func TestResolveGitLayout(t *testing.T) {
	x := newExcludeTrap(t)
	x.mkdir("ws/main.git/worktrees/wt")
	x.write("ws/main.git/worktrees/wt/commondir", "../..\n", 0o644)
	x.write("ws/.git", "gitdir: main.git/worktrees/wt\n", 0o644)
	l, err := ResolveGitLayout(x.ws + "/./")
	if err != nil {
		t.Fatal(err)
	}
	want := GitLayout{Workspace: x.ws, GitDir: x.path("ws/main.git/worktrees/wt"), CommonDir: x.path("ws/main.git")}
	if l != want {
		t.Errorf("layout %+v, want %+v", l, want)
	}
	if _, err := ResolveGitLayout(t.TempDir()); !errors.Is(err, ErrNoRepository) {
		t.Errorf("no .git: %v", err)
	}
	x.write("ws/.git", "gitdir: ../outside/repo/.git\n", 0o644)
	var refused *GitDirError
	if _, err := ResolveGitLayout(x.ws); !errors.As(err, &refused) || !refused.Outside || refused.Target != x.path("outside/repo/.git") ||
		strings.Contains(refused.Reason, x.root) {
		t.Errorf("outside: %#v", err)
	}
}
