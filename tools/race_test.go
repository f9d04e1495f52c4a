package tools

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestSymlinkSwapRace swaps a directory for a symlink out of the workspace
// in a loop while tools read through it. No read may ever return the
// outside file's content: os.Root re-resolves every component with openat,
// so a swap between the canonical walk and the open cannot lead out.
func TestSymlinkSwapRace(t *testing.T) {
	ws, wsDir := newWS(t, map[string]string{"d/f.txt": "inside\n"})
	outside := filepath.Join(filepath.Dir(wsDir), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "f.txt"), []byte(outsideSecret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := testEnv(ws)
	d, real := filepath.Join(wsDir, "d"), filepath.Join(wsDir, "d.real")

	stop := swapLoop(d, real, 0, outside, "../outside")
	reads := []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "d/f.txt"}},
		{"read_file_partial", map[string]any{"path": "d/f.txt", "offset": 0, "limit": 5}},
		{"list_directory", map[string]any{"path": "d"}},
		{"search_text", map[string]any{"pattern": "SECRET", "paths": []string{"d"}}},
		{"search_text", map[string]any{"pattern": "SECRET", "paths": []string{"d/f.txt"}}},
		{"glob_files", map[string]any{"pattern": "d/**"}},
		{"edit_file", map[string]any{"path": "d/f.txt", "old_string": outsideSecret, "new_string": "x"}},
	}
	ok := 0
	for i := 0; i < 3000; i++ {
		rd := reads[i%len(reads)]
		r := call(t, env, rd.tool, rd.args)
		if out := resultJSON(t, r); contains(out, outsideSecret) != "" && rd.tool != "edit_file" {
			t.Fatalf("%s read the outside file during a swap: %s", rd.tool, out)
		}
		if rd.tool == "edit_file" && r.Kind == KindSuccess {
			t.Fatalf("edit_file edited the outside file during a swap")
		}
		if !r.Failed() {
			ok++
		}
	}
	stop()
	if got := readString(t, filepath.Join(outside, "f.txt")); got != outsideSecret+"\n" {
		t.Fatalf("outside file changed: %q", got)
	}
	t.Logf("%d of 3000 calls succeeded inside the workspace", ok)
}

// swapLoop swaps the folder d for a symbolic link to each target in turn
// (moving the real folder to real meanwhile, and keeping the link for
// dwell), until the returned stop is called.
func swapLoop(d, real string, dwell time.Duration, targets ...string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if os.Rename(d, real) != nil {
				continue
			}
			_ = os.Symlink(targets[i%len(targets)], d)
			if dwell > 0 {
				time.Sleep(dwell)
			}
			_ = os.Remove(d)
			_ = os.Rename(real, d)
		}
	}()
	return func() { close(done); wg.Wait() }
}
