package client_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakerun"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// fakeSession is the session behind a real web.Server in these tests: a
// run the test drives through a fakerun.Log (a real log file, then a real
// runner.Bus). Questions follow the broker's rule: the first answer wins.
type fakeSession struct {
	*fakerun.Log

	mu        sync.Mutex
	questions []runner.Question
	answers   map[string]string // id → answer
	sources   map[string]string // id → source
	controls  []string
}

var testKey = []byte("client-tests-records-key-32byte!")

func newFakeSession(t testing.TB) *fakeSession {
	t.Helper()
	return &fakeSession{Log: fakerun.New(t, testKey), answers: map[string]string{}, sources: map[string]string{}}
}

// start begins a run with its run_started event, on a fresh bus as a new
// run's is.
func (f *fakeSession) start(t testing.TB, task string) string {
	t.Helper()
	id, err := f.Open(task, "")
	if err != nil {
		t.Fatal(err)
	}
	f.Bus.Reset(nil)
	f.Emit(t, event.RunStarted, event.RunStartedPayload{RunID: id, Task: task, EntryRole: "orchestrator"})
	return id
}

// ask opens a question, as ask_human does.
func (f *fakeSession) ask(t testing.TB, p event.AskHumanPayload) {
	t.Helper()
	id, _ := f.Active()
	f.mu.Lock()
	f.questions = append(f.questions, runner.Question{AskHumanPayload: p, RunID: id, AskedAt: time.Now()})
	f.mu.Unlock()
	f.Emit(t, event.AskHuman, p)
}

func (f *fakeSession) Submit(ctx context.Context, sub runner.Submission) (string, error) {
	return "", runner.ErrRunInProgress
}

// Answer takes the first answer and logs it, as the broker and the run
// do; a later one is ErrAlreadyAnswered.
func (f *fakeSession) Answer(id, answer, source string) error {
	f.mu.Lock()
	if _, ok := f.answers[id]; ok {
		f.mu.Unlock()
		return runner.ErrAlreadyAnswered
	}
	found := false
	for i, q := range f.questions {
		if q.ID == id {
			f.questions = append(f.questions[:i], f.questions[i+1:]...)
			found = true
			break
		}
	}
	if !found {
		f.mu.Unlock()
		return runner.ErrUnknownQuestion
	}
	f.answers[id], f.sources[id] = answer, source
	f.mu.Unlock()
	e, err := event.New(time.Now(), event.HumanAnswer, event.HumanAnswerPayload{ID: id, Answer: answer, Source: source})
	if err != nil {
		return err
	}
	_, err = f.Publish(e)
	return err
}

func (f *fakeSession) Questions() []runner.Question {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]runner.Question(nil), f.questions...)
}

func (f *fakeSession) control(what, runID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.IsActive(runID) {
		return runner.ErrRunNotActive
	}
	f.controls = append(f.controls, what)
	return nil
}

func (f *fakeSession) Interrupt(runID, kind, message string) error {
	if strings.TrimSpace(message) == "" {
		return runner.ErrEmptyMessage
	}
	return f.control(kind+":"+message, runID)
}

func (f *fakeSession) InterruptPending(string) bool { return false }
func (f *fakeSession) Pause(runID string) error     { return f.control("pause", runID) }
func (f *fakeSession) Resume(runID string) error    { return f.control("resume", runID) }
func (f *fakeSession) Terminate(runID string) error { return f.control("terminate", runID) }
func (f *fakeSession) Health() runner.HealthView {
	return runner.HealthView{State: runner.HealthDegraded, ConsecutiveFailures: 2}
}

// logTypes reads the run's log back: its event types in order.
func logTypes(t testing.TB, ws store.Workspace, runID string) []event.Type {
	t.Helper()
	path, _ := ws.LogPath(runID)
	var out []event.Type
	if _, err := store.ReadLog(path, func(seq int64, rec []byte) error {
		var e event.Event
		if err := json.Unmarshal(rec, &e); err != nil {
			return err
		}
		out = append(out, e.Type)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
