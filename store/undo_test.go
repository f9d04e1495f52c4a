package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func undoWS(t *testing.T) (Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	ws := Workspace{Dir: dir, Seal: NewSealer(testKey, dir)}
	id := "run-20260101-000000"
	rd, _ := ws.RunDir(id)
	if err := os.MkdirAll(rd, 0o755); err != nil {
		t.Fatal(err)
	}
	return ws, id
}

func TestUndoRecordIsSealed(t *testing.T) {
	ws, id := undoWS(t)
	if _, err := ws.ReadUndo(id); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no record: %v", err)
	}
	u := &Undo{RunID: id, Files: []UndoEntry{{Path: "a.txt", Tool: "write_file", Before: UndoState{Exists: true, SHA256: ContentSum([]byte("x")), Kept: true}}}}
	if err := ws.WriteUndo(u, true); err != nil {
		t.Fatal(err)
	}
	got, err := ws.ReadUndo(id)
	if err != nil || got.Foreign || got.Entry("a.txt") == nil || got.Entry("b.txt") != nil {
		t.Fatalf("read back: %+v %v", got, err)
	}
	// Another workspace's key, another run's name, no key: foreign.
	other := Workspace{Dir: ws.Dir, Seal: NewSealer([]byte("another key of 32 bytes........."), ws.Dir)}
	if got, _ := other.ReadUndo(id); !got.Foreign {
		t.Error("a record sealed with another key is not foreign")
	}
	if got, _ := (Workspace{Dir: ws.Dir}).ReadUndo(id); !got.Foreign {
		t.Error("a record read without a key is not foreign")
	}
	got.Foreign = true
	if err := ws.WriteUndo(got, true); err == nil {
		t.Error("a foreign record was rewritten (and so sealed)")
	}
	// A record naming another run.
	rd, _ := ws.RunDir(id)
	if err := os.WriteFile(filepath.Join(rd, UndoFile), []byte(`{"runId":"run-20990101-000000"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ReadUndo(id); err == nil || !strings.Contains(err.Error(), "names run") {
		t.Errorf("a record of another run: %v", err)
	}
}

func TestKeptContentsAreCheckedByTheirNames(t *testing.T) {
	ws, id := undoWS(t)
	sum, err := ws.KeepContent(id, []byte("before\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := ws.KeepContent(id, []byte("before\n"), true); again != sum {
		t.Fatalf("the same content under two names: %s %s", sum, again)
	}
	if b, err := ws.ReadContent(id, sum); err != nil || string(b) != "before\n" {
		t.Fatalf("read back %q %v", b, err)
	}
	rd, _ := ws.RunDir(id)
	blob := filepath.Join(rd, UndoDir, sum)
	for name, plant := range map[string]func(){
		"replaced": func() { _ = os.WriteFile(blob, []byte("evil"), 0o644) },
		"a link":   func() { _ = os.Remove(blob); _ = os.Symlink("/etc/passwd", blob) },
		"missing":  func() { _ = os.Remove(blob) },
	} {
		plant()
		var ce *ContentError
		if _, err := ws.ReadContent(id, sum); !errors.As(err, &ce) || !strings.Contains(err.Error(), "never written into the workspace") {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, bad := range []string{"", "../meta.json", strings.Repeat("A", 64), strings.Repeat("a", 63)} {
		if _, err := ws.ReadContent(id, bad); err == nil {
			t.Errorf("the name %q was read", bad)
		}
	}
	// A kept content over a planted link is written as a file, not
	// through the link.
	outside := filepath.Join(t.TempDir(), "target")
	_ = os.Remove(blob)
	if err := os.Symlink(outside, blob); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.KeepContent(id, []byte("before\n"), true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("KeepContent wrote through a link: %v", err)
	}
	if err := ws.DropContent(id, sum); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(blob); !os.IsNotExist(err) {
		t.Errorf("dropped content still there: %v", err)
	}
}
