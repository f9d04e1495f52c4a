package tui

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/demo"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/store"
)

// demoSession opens a session on a fresh copy of the demo workspace with
// the scripted model at full speed.
func demoSession(t *testing.T) (*runner.Session, *runner.Guild) {
	t.Helper()
	dir := t.TempDir()
	dm, err := demo.Setup(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := openSession(t, runner.SessionConfig{Workspace: dir, Sealer: store.NewSealer(testRecordsKey, dir), Guild: dm.Guild, Deployment: dm.Deployment, Provider: dm.Provider})
	return s, dm.Guild
}

// waitScreen waits until the program's output, styling stripped, holds
// every string.
func waitScreen(t *testing.T, tm *teatest.TestModel, subs ...string) {
	t.Helper()
	new(tape).wait(t, tm, subs...)
}

// TestConsoleDrivesTheDemo runs the real program on the scripted demo: the
// flow graph shows the roles, the question modal asks the scripted
// question, a typed answer reaches the runner, the result card shows the
// summary, and tab shows the sequence view.
func TestConsoleDrivesTheDemo(t *testing.T) {
	s, g := demoSession(t)
	m := New(s, Options{Labels: guildLabels(t, g), Task: seed.DemoTask(), NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))

	waitScreen(t, tm, "Question", "Should this run only fix the failing tests", "Orchestrator asks", "Only fix the failing tests")
	const answer = "Only the failing tests, please"
	tm.Type(answer)
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})

	waitScreen(t, tm, "Result · run-", "Status: ✓ success", "Slug tests fixed")
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
	waitScreen(t, tm, "Main run", "Orchestrator", "Planner", "Coder", "Acceptance")
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	waitScreen(t, tm, "✓ success", "Tools")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))

	// The answer reached the runner: the log holds it. The result card
	// shows as the outcome is decided; the run then writes its records.
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	if _, err := s.Wait(wctx); err != nil {
		t.Fatalf("the run did not end: %v", err)
	}
	if id, ok := s.Active(); ok {
		t.Fatalf("run %s still active", id)
	}
	ws := s.Workspace()
	ids, err := ws.ListRunIDs()
	if err != nil || len(ids) != 1 {
		t.Fatalf("runs %v, %v", ids, err)
	}
	path, _ := ws.LogPath(ids[0])
	found := false
	if _, err := store.ReadLog(path, func(_ int64, rec []byte) error {
		var e event.Event
		if json.Unmarshal(rec, &e) == nil && e.Type == event.HumanAnswer {
			var p event.HumanAnswerPayload
			if e.Decode(&p) == nil && p.Answer == answer {
				found = true
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Errorf("no human_answer %q in the log", answer)
	}
}
