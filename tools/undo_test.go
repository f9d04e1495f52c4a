package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeUndo records what the file tools hand it.
type fakeUndo struct {
	kept  map[string]Prior
	tools map[string]string
	wrote map[string]string
	limit int64
}

func (u *fakeUndo) Wants(rel string) (int64, bool) {
	_, done := u.kept[rel]
	return u.limit, !done
}
func (u *fakeUndo) Keep(rel, tool string, p Prior) { u.kept[rel], u.tools[rel] = p, tool }
func (u *fakeUndo) Wrote(rel string, data []byte)  { u.wrote[rel] = string(data) }

// TestFileToolsHandTheirEarlierContentToUndo: the content a file held
// before the first write reaches Undo, once; what each write left too; a
// file too large for the copy is said to be, and a refused write reaches
// nothing.
func TestFileToolsHandTheirEarlierContentToUndo(t *testing.T) {
	ws, dir := newWS(t, map[string]string{"a.txt": "one\ntwo\n", "big.txt": strings.Repeat("x", 100), "link/.keep": ""})
	if err := os.Chmod(filepath.Join(dir, "a.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	u := &fakeUndo{kept: map[string]Prior{}, tools: map[string]string{}, wrote: map[string]string{}, limit: 64}
	env := testEnv(ws)
	env.Undo = u
	call := func(tool string, args map[string]any) Result {
		b, _ := json.Marshal(args)
		return Builtins()[tool].Call(context.Background(), env, b)
	}
	call("edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"})
	call("write_file", map[string]any{"path": "./a.txt", "content": "three\n"})
	call("write_file", map[string]any{"path": "new/deep/b.txt", "content": "fresh\n"})
	call("write_file", map[string]any{"path": "big.txt", "content": "small\n"})
	if r := call("write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "x"}); !r.Failed() {
		t.Fatal("a write into .git went through")
	}
	a := u.kept["a.txt"]
	if !a.Exists || string(a.Data) != "one\ntwo\n" || a.Perm != 0o600 || u.tools["a.txt"] != "edit_file" || u.wrote["a.txt"] != "three\n" {
		t.Errorf("a.txt: %+v tool %q wrote %q", a, u.tools["a.txt"], u.wrote["a.txt"])
	}
	if b := u.kept["new/deep/b.txt"]; b.Exists || b.MadeDirs != "new" {
		t.Errorf("new/deep/b.txt: %+v", b)
	}
	if big := u.kept["big.txt"]; !big.Exists || big.Data != nil || big.Size != 100 || !strings.Contains(big.Unread, "larger") {
		t.Errorf("big.txt: %+v", big)
	}
	if _, ok := u.kept[".git/hooks/pre-commit"]; ok {
		t.Error("a refused write reached Undo")
	}
}

// A revert writes and deletes only where the file tools may write, and
// never through a link.
func TestRevertWritesStayContained(t *testing.T) {
	outside := t.TempDir()
	ws, dir := newWS(t, map[string]string{"a.txt": "now\n", "made/sub/c.txt": "c\n", "made/other.txt": "o\n"})
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	if err := ws.Restore("a.txt", []byte("before\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "before\n" {
		t.Errorf("a.txt is %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "a.txt")); fi.Mode().Perm() != 0o640 {
		t.Errorf("a.txt mode %v", fi.Mode())
	}
	for _, p := range []string{"out/x.txt", "alias.txt", ".orchestration/runs/x", ".git/config", "../x", "/etc/passwd", "a/../a.txt", ""} {
		if err := ws.Restore(p, []byte("x"), 0o644); err == nil {
			t.Errorf("Restore %q went through", p)
		}
		if err := ws.RemoveCreated(p, ""); err == nil {
			t.Errorf("RemoveCreated %q went through", p)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("a revert wrote outside: %v", entries)
	}
	// Deleting a created file removes the folders it made while empty.
	if err := ws.RemoveCreated("made/sub/c.txt", "made"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "made", "sub")); !os.IsNotExist(err) {
		t.Errorf("made/sub left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "made", "other.txt")); err != nil {
		t.Errorf("made/other.txt (not the run's) is gone: %v", err)
	}
	st, err := ws.Current("a.txt", 1<<20)
	if err != nil || !st.Exists || !st.Regular || string(st.Data) != "before\n" || st.Sum == "" {
		t.Errorf("Current: %+v %v", st, err)
	}
	if st, err := ws.Current("gone.txt", 1<<20); err != nil || st.Exists {
		t.Errorf("Current of a missing file: %+v %v", st, err)
	}
}
