package rmtree

import (
	"os"
	"path/filepath"
	"testing"
)

// A tree whose folders a command locked is removed, and a link inside it
// is removed, not followed: what it points at stays.
func TestRemoveAllLockedTreeKeepsWhatLinksPointAt(t *testing.T) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "scratch"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(dir, "a", "b"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("keep"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "a", "link")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(dir, "a", "b"), filepath.Join(dir, "a")} {
		if err := os.Chmod(d, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("the tree is still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(b) != "keep" {
		t.Errorf("what the link pointed at changed: %q %v", b, err)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the folder the link pointed at had its mode changed: %v %v", fi.Mode(), err)
	}
}
