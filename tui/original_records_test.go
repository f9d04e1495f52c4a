package tui

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
)

// TestHistoryShowsTheOriginalsRuns runs the real program on a workspace
// whose records the original system wrote: History lists its runs with
// their start times, marked foreign, and expands them with the original's
// duration, task and error.
func TestHistoryShowsTheOriginalsRuns(t *testing.T) {
	fs := newFakeSession(t, nil)
	if err := os.CopyFS(fs.ws.Dir, os.DirFS(filepath.Join("..", "store", "testdata", "original-records"))); err != nil {
		t.Fatal(err)
	}
	m := New(fs, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	var tp tape
	local := func(s string) string {
		tm, _ := time.Parse(time.RFC3339Nano, s)
		return tm.Local().Format("2006-01-02 15:04")
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("2")})
	tp.wait(t, tm, "run-20250601-101500", "✓ success (foreign)", local("2025-06-01T10:15:00Z"), "Added a --version flag to the CLI",
		"run-20250601-130000", local("2025-06-01T13:00:00Z"), "Tidy the README")
	for range 3 {
		tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j")})
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	defer func() {
		if t.Failed() {
			t.Logf("seen:\n%s", tp.text())
		}
	}()
	tp.wait(t, tm, "Foreign", "the original system wrote it", "Duration    6m42s", "Add a --version flag to the CLI", "the tests pass")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")})
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	tp.wait(t, tm, "Duration    1m15s", "The model endpoint did not answer after 3 attempts.")
	// The run that stopped while running is the original's: never resumed.
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	tp.wait(t, tm, "Foreign run (not written by Guildhall for you): shown, never resumed.")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	if len(fs.resumed) != 0 {
		t.Errorf("a foreign run was resumed: %v", fs.resumed)
	}
	if seen := tp.text(); strings.Contains(seen, "0001-01-01") {
		t.Errorf("a run is listed as started in year 1")
	}
	if strings.Contains(tp.buf.String(), "\x1b[31mREADME") {
		t.Errorf("the original's task reached the terminal with its escapes")
	}
}
