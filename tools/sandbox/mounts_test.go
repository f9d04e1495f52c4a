package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/golden"
)

// fixedLayout is a layout as newLayout would compute it on a typical
// machine, without reading this one.
func fixedLayout() layout {
	l := layout{
		ws:      "/home/alice/src/proj",
		home:    "/home/alice",
		scratch: "/tmp/guildhall-sandbox-1",
		files:   []string{"/etc/shadow", "/etc/gshadow"},
		kernel:  []string{"--ro-bind", "/proc/sys", "/proc/sys", "--ro-bind", "/dev/null", "/proc/kcore"},
		varTmp:  true,
		orch:    true,
		git:     gitView{exists: true, protect: []string{"/home/alice/src/proj/.git"}},
	}
	l.hidden, l.rehide = l.masks([]string{"/run", "/home", "/root", "/run/user/1000", "/home/alice/.local/state/guildhall", "/var/lib/docker"})
	return l
}

// TestMountTables pins the bwrap arguments of each kind of sandbox;
// docs/security.md describes the same table. Run with -update after
// checking a change.
func TestMountTables(t *testing.T) {
	ro := fixedLayout()
	ro.readOnly = true
	ro.writable = []string{"/home/alice/.cache/go-build", "/srv/cache"}
	ro.hidden, ro.rehide = ro.masks([]string{"/run", "/home", "/srv/cache/guildhall-state"})
	pointer := fixedLayout()
	pointer.git = gitView{exists: true, protect: []string{"/home/alice/src/proj/.git", "/home/alice/src/main/.git/worktrees/proj", "/home/alice/src/main/.git"}}
	fallback := fixedLayout()
	fallback.home = fallbackHome
	cases := []struct {
		name string
		l    layout
		o    mountOptions
	}{
		{"helper", fixedLayout(), mountOptions{helperExe: "/usr/bin/guildhall"}},
		{"helper-allowlist", fixedLayout(), mountOptions{helperExe: "/usr/bin/guildhall", proxySock: "/tmp/guildhall-sandbox-1/proxy.sock"}},
		{"git-read", fixedLayout(), mountOptions{}},
		{"git-write", fixedLayout(), mountOptions{gitWritable: true}},
		{"read-only-writable", ro, mountOptions{helperExe: "/usr/bin/guildhall"}},
		{"read-only-git-write", ro, mountOptions{gitWritable: true}},
		{"worktree", pointer, mountOptions{}},
		{"fallback-home", fallback, mountOptions{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args, err := c.l.args(c.o)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "mounts", c.name+".golden"), []byte(renderArgs(args)))
		})
	}
}

// renderArgs puts each bwrap option and its operands on a line.
func renderArgs(args []string) string {
	operands := map[string]int{"--bind": 2, "--ro-bind": 2, "--tmpfs": 1, "--remount-ro": 1, "--dev": 1, "--proc": 1,
		"--chdir": 1, "--cap-drop": 1, "--hostname": 1}
	var b strings.Builder
	for i := 0; i < len(args); i++ {
		b.WriteString(args[i])
		for n := operands[args[i]]; n > 0 && i+1 < len(args); n-- {
			i++
			b.WriteString(" " + args[i])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Order is the point of a mount table: a mask must come before what may
// be mounted inside it, the workspace before the .git and .orchestration
// it holds, and the read-only remounts last.
func TestMountOrder(t *testing.T) {
	args, err := fixedLayout().args(mountOptions{helperExe: "/usr/bin/guildhall"})
	if err != nil {
		t.Fatal(err)
	}
	pos := func(op, dest string) int {
		for i := 0; i+1 < len(args); i++ {
			if args[i] == op && (args[i+1] == dest || (i+2 < len(args) && args[i+2] == dest)) {
				return i
			}
		}
		t.Fatalf("no %s %s in %v", op, dest, args)
		return -1
	}
	ws := "/home/alice/src/proj"
	order := []int{
		pos("--ro-bind", "/"),
		pos("--tmpfs", "/home"),
		pos("--bind", "/home/alice"),
		pos("--bind", ws),
		pos("--ro-bind", ws+"/.git"),
		pos("--tmpfs", ws+"/.orchestration"),
		pos("--remount-ro", "/home"),
		pos("--chdir", ws),
	}
	if !slices.IsSorted(order) {
		t.Errorf("mount order %v:\n%s", order, renderArgs(args))
	}
	// What HOME's bind or another mask already hides gets no mask of its
	// own (its read-only remount would not find it).
	for _, covered := range []string{"/run/user/1000", "/home/alice/.local/state/guildhall"} {
		if slices.Contains(args, covered) {
			t.Errorf("%s masked although already hidden:\n%s", covered, renderArgs(args))
		}
	}
}

func TestNewLayoutReadsTheWorkspace(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	ws := filepath.Join(root, "srv", "ws")
	state := filepath.Join(ws, "state")
	for _, d := range []string{home, filepath.Join(ws, ".orchestration"), filepath.Join(state, "guildhall"), filepath.Join(root, "main", ".git", "worktrees", "ws")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", state)
	p, _ := NewPolicy(Config{})

	// A worktree whose git folder lies in the workspace's parent (not
	// writable: nothing more to protect) and one inside the workspace.
	if err := os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: ../../main/.git/worktrees/ws\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := newLayout(p, ws, root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.git.protect, []string{filepath.Join(ws, ".git")}) {
		t.Errorf("protect %v", l.git.protect)
	}
	if !l.orch || l.home != home {
		t.Errorf("layout %+v", l)
	}
	// Guildhall's state inside the workspace is masked again after the
	// workspace's bind.
	if !slices.Contains(l.rehide, filepath.Join(state, "guildhall")) || slices.Contains(l.hidden, filepath.Join(state, "guildhall")) {
		t.Errorf("hidden %v, again %v", l.hidden, l.rehide)
	}
	inner := filepath.Join(ws, "gitdirs", "ws")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inner, "commondir"), []byte("../../.realgit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".realgit"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: gitdirs/ws\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, _ = newLayout(p, ws, root)
	want := []string{filepath.Join(ws, ".git"), inner, filepath.Join(ws, ".realgit")}
	if !slices.Equal(l.git.protect, want) {
		t.Errorf("protect %v, want %v", l.git.protect, want)
	}
	// A .git that is a link into the workspace protects its target.
	if err := os.Remove(filepath.Join(ws, ".git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".realgit", filepath.Join(ws, ".git")); err != nil {
		t.Fatal(err)
	}
	l, _ = newLayout(p, ws, root)
	if !slices.Equal(l.git.protect, []string{filepath.Join(ws, ".realgit")}) {
		t.Errorf("link: protect %v", l.git.protect)
	}
}

func TestNewLayoutRefuses(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	if err := os.MkdirAll(filepath.Join(home, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	p, _ := NewPolicy(Config{})
	for ws, want := range map[string]string{
		"/":      "absolute folder other than /",
		"rel/ws": "absolute folder other than /",
		home:     "holds your home folder",
		root:     "holds your home folder",
	} {
		if _, err := newLayout(p, ws, root); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", ws, err)
		}
	}
	ws := filepath.Join(home, "proj")
	// A writable path whose parent a command replaced with a link since
	// the policy was made.
	cache := filepath.Join(root, "a", "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	wp, err := NewPolicy(Config{Writable: []string{cache}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "a"), filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "b"), filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := newLayout(wp, ws, root); err == nil || !strings.Contains(err.Error(), "no longer the folder") {
		t.Errorf("a writable path behind a new link: %v", err)
	}
	if err := os.Symlink(root, filepath.Join(ws, ".orchestration")); err != nil {
		t.Fatal(err)
	}
	if _, err := newLayout(p, ws, root); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("linked .orchestration: %v", err)
	}
}
