package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestAdoptAMovedFolder: runs written in one folder are foreign once the
// folder moves; AdoptCandidates tells the operator's own (sealed by this
// key for the folder they name) from a planted one (another key, or no
// seal), and Adopt re-seals meta, checkpoint and pause marker for the new
// folder.
func TestAdoptAMovedFolder(t *testing.T) {
	root := t.TempDir()
	old := filepath.Join(root, "old")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	w := Workspace{Dir: old, Seal: NewSealer(testKey, old)}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mine, err := w.CreateRun(now)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteMeta(&Meta{RunID: mine, Task: "mine", Status: StatusPaused, StartedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteState(mine, []byte(`{"turn":3}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.WritePauseMarker(mine, now); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteUndo(&Undo{RunID: mine}, false); err != nil {
		t.Fatal(err)
	}
	// A run sealed by someone else's key, naming this very folder.
	planted, err := w.CreateRun(now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	other := Workspace{Dir: old, Seal: NewSealer([]byte("another key, another account"), old)}
	if err := other.WriteMeta(&Meta{RunID: planted, Task: "planted", Status: StatusPaused, StartedAt: now}); err != nil {
		t.Fatal(err)
	}
	if m, _ := w.ReadMeta(mine); m.Foreign || m.Workspace != old {
		t.Fatalf("in its folder the run is foreign=%v, names %q", m.Foreign, m.Workspace)
	}

	moved := filepath.Join(root, "moved")
	if out, err := exec.Command("mv", old, moved).CombinedOutput(); err != nil {
		t.Fatalf("mv: %v %s", err, out)
	}
	here := Workspace{Dir: moved, Seal: NewSealer(testKey, moved)}
	for _, id := range []string{mine, planted} {
		if m, err := here.ReadMeta(id); err != nil || !m.Foreign {
			t.Fatalf("after the move, %s is not foreign: %v %v", id, m, err)
		}
	}
	cands, err := here.AdoptCandidates()
	if err != nil || len(cands) != 2 {
		t.Fatalf("candidates %+v %v", cands, err)
	}
	byID := map[string]AdoptCandidate{}
	for _, c := range cands {
		byID[c.Meta.RunID] = c
	}
	if c := byID[mine]; !c.SealedByYou || c.RecordedIn != old {
		t.Errorf("the operator's moved run: %+v", c)
	}
	if c := byID[planted]; c.SealedByYou {
		t.Errorf("a run sealed by another key counts as the operator's: %+v", c)
	}

	if err := here.Adopt(mine); err != nil {
		t.Fatal(err)
	}
	m, err := here.ReadMeta(mine)
	if err != nil || m.Foreign || m.Workspace != moved || m.Task != "mine" {
		t.Fatalf("adopted meta %+v %v", m, err)
	}
	if data, sealed, err := here.ReadState(mine); err != nil || !sealed || string(Unsealed(data)) != `{"turn":3}` {
		t.Errorf("adopted checkpoint %q sealed=%v %v", data, sealed, err)
	}
	if !here.PauseMarked(mine) {
		t.Error("the pause marker was not re-sealed")
	}
	if u, err := here.ReadUndo(mine); err != nil || u.Foreign {
		t.Errorf("the undo record was not re-sealed: %+v %v", u, err)
	}
	if m, _ := here.ReadMeta(planted); !m.Foreign {
		t.Error("adopting one run adopted another")
	}
	if cands, _ := here.AdoptCandidates(); len(cands) != 1 || cands[0].Meta.RunID != planted {
		t.Errorf("candidates after adopting: %+v", cands)
	}
	// The old folder's sealer no longer accepts the adopted run.
	if m, _ := (Workspace{Dir: moved, Seal: NewSealer(testKey, old)}).ReadMeta(mine); !m.Foreign {
		t.Error("the adopted run is still sealed for the old folder")
	}
}
