package tools

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPinRecordsWhatIsThere: each kind of path a command line can name
// is pinned as what it is, links are recorded and followed only inside,
// a FIFO is never opened, and the budget ends a pass.
func TestPinRecordsWhatIsThere(t *testing.T) {
	ws := t.TempDir()
	mk := func(name, body string) {
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("mcp/srv.py", "print(1)")
	mk("mcp/lib/a.py", "x")
	mk(".git/config", "[core]")
	mk("mcp/.git/HEAD", "ref")
	os.Symlink("srv.py", filepath.Join(ws, "mcp/link.py"))
	os.Symlink("/etc/passwd", filepath.Join(ws, "out"))
	os.Symlink("../..", filepath.Join(ws, "mcp/up"))
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cases := []struct {
		path    string
		folders bool
		what    PinResult
		canon   string
		kinds   map[string]string // path → kind, each must be recorded
	}{
		{"mcp/srv.py", true, PinnedFile, "mcp/srv.py", map[string]string{"mcp/srv.py": PinFile}},
		{filepath.Join(ws, "mcp/srv.py"), true, PinnedFile, "mcp/srv.py", nil},
		{"mcp/link.py", true, PinnedFile, "mcp/srv.py", map[string]string{"mcp/link.py": PinLink, "mcp/srv.py": PinFile}},
		{"out", true, PinnedOther, "", map[string]string{"out": PinLink}},
		{"pipe", true, PinnedOther, "pipe", map[string]string{"pipe": PinSpecial}},
		{"gen/new.py", true, PinnedAbsent, "", map[string]string{"gen/new.py": PinAbsent}},
		{"mcp/srv.py/x", true, PinnedAbsent, "", nil},
		{".", true, PinnedNothing, "", nil},
		{"..", true, PinnedNothing, "", nil},
		{"/etc/passwd", true, PinnedNothing, "", nil},
		{"mcp", false, PinnedFolder, "mcp", map[string]string{"mcp": PinFolder}},
		{"mcp", true, PinnedFolder, "mcp", map[string]string{"mcp": PinFolder, "mcp/lib": PinFolder, "mcp/lib/a.py": PinFile, "mcp/link.py": PinLink, "mcp/up": PinLink}},
	}
	for _, c := range cases {
		got, err := w.Pin(c.path, &PinBudget{Entries: 100, Bytes: 1 << 20}, c.folders)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if got.What != c.what || (c.canon != "" && got.Path != c.canon) {
			t.Errorf("%s: %v at %q, want %v at %q", c.path, got.What, got.Path, c.what, c.canon)
		}
		kinds := map[string]string{}
		for _, e := range got.Entries {
			kinds[e.Path] = e.Kind
			if e.Path == "mcp/.git/HEAD" || e.Path == ".git/config" {
				t.Errorf("%s: pinned %s", c.path, e.Path)
			}
		}
		for p, k := range c.kinds {
			if kinds[p] != k {
				t.Errorf("%s: %s recorded as %q, want %q (all: %v)", c.path, p, kinds[p], k, kinds)
			}
		}
	}
	if _, err := w.Pin("mcp", &PinBudget{Entries: 3, Bytes: 1 << 20}, true); !errors.Is(err, ErrPinBudget) {
		t.Errorf("entries past the budget: %v", err)
	}
	if _, err := w.Pin("mcp/srv.py", &PinBudget{Entries: 10, Bytes: 3}, true); !errors.Is(err, ErrPinBudget) {
		t.Errorf("bytes past the budget: %v", err)
	}
	mk(".orchestration/x", "records")
	if _, err := w.Pin(".orchestration/x", &PinBudget{Entries: 10, Bytes: 100}, true); err == nil {
		t.Error("a path in .orchestration was pinned")
	}
}

// TestPinAndResolveAgree: a hostile workspace's links (a chain, a loop, a
// climb out, an absolute target, a dangling one) lead Pin where they lead
// Resolve: a pinned file is the file a tool would open, and what Pin
// records as leading out is what Resolve refuses.
func TestPinAndResolveAgree(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a/b/real.py"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"chain1": "a/chain2", "a/chain2": "b/real.py", "a/b/back": "../../chain1",
		"loop1": "loop2", "loop2": "loop1", "up": "a/../..", "abs": "/etc/passwd",
		"dangling": "a/b/gone.py", "a/dir": "b",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	w, err := OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, p := range []string{"chain1", "a/b/back", "a/dir/real.py", "loop1", "up/x", "abs", "dangling", "a/dir/../b/real.py"} {
		t.Run(p, func(t *testing.T) {
			canon, rerr := w.Resolve(p)
			got, perr := w.Pin(p, &PinBudget{Entries: 100, Bytes: 1 << 20}, false)
			var pe *PathError
			switch {
			case errors.As(rerr, &pe) && pe.Kind == KindPermissionDenied:
				if perr != nil || got.What != PinnedOther {
					t.Errorf("Resolve refuses %s (%v); Pin says %v, %v", p, rerr, got.What, perr)
				}
			case rerr != nil:
				if perr == nil {
					t.Errorf("Resolve fails %s (%v); Pin says %v at %q", p, rerr, got.What, got.Path)
				}
			case got.What == PinnedFile:
				if got.Path != canon {
					t.Errorf("%s: Pin found %q, Resolve %q", p, got.Path, canon)
				}
			case got.What != PinnedAbsent:
				t.Errorf("%s: Resolve gives %q, Pin %v", p, canon, got.What)
			}
		})
	}
}
