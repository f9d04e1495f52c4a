package client_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// fakeSession is the session behind a real web.Server in these tests: a
// run the test drives, whose events are appended to a real log file and
// then published on a real runner.Bus, as the runner does. Questions
// follow the broker's rule: the first answer wins.
type fakeSession struct {
	ws  store.Workspace
	bus *runner.Bus

	mu        sync.Mutex
	active    string
	seq       int64
	questions []runner.Question
	answers   map[string]string // id → answer
	sources   map[string]string // id → source
	controls  []string
}

var testKey = []byte("client-tests-records-key-32byte!")

func newFakeSession(t testing.TB) *fakeSession {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, store.OrchestrationDir, store.RunsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	return &fakeSession{ws: store.Workspace{Dir: dir, Seal: store.NewSealer(testKey, dir)}, bus: runner.NewBus(),
		answers: map[string]string{}, sources: map[string]string{}}
}

// start begins a run with its run_started event.
func (f *fakeSession) start(t testing.TB, task string) string {
	t.Helper()
	id, err := f.ws.CreateRun(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m := &store.Meta{RunID: id, Task: task, Effort: "standard", Status: store.StatusRunning, StartedAt: time.Now().UTC()}
	if err := f.ws.WriteMeta(m); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.active, f.seq = id, 0
	f.mu.Unlock()
	f.bus.Reset(nil)
	f.emit(t, event.RunStarted, event.RunStartedPayload{RunID: id, Task: task, EntryRole: "orchestrator"})
	return id
}

// emit appends an event to the live run's log and publishes it.
func (f *fakeSession) emit(t testing.TB, typ event.Type, payload any) event.Event {
	t.Helper()
	e, err := event.New(time.Now(), typ, payload)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	id := f.active
	e.Seq = f.seq
	f.seq++
	f.mu.Unlock()
	path, _ := f.ws.LogPath(id)
	lf, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lf.Write(append(e.AppendJSON(nil), '\n')); err != nil {
		t.Fatal(err)
	}
	lf.Close()
	f.bus.Publish(e)
	return e
}

// ask opens a question, as ask_human does.
func (f *fakeSession) ask(t testing.TB, p event.AskHumanPayload) {
	t.Helper()
	f.mu.Lock()
	f.questions = append(f.questions, runner.Question{AskHumanPayload: p, RunID: f.active, AskedAt: time.Now()})
	f.mu.Unlock()
	f.emit(t, event.AskHuman, p)
}

func (f *fakeSession) SubscribeLossless(n int) ([]event.Event, *runner.Subscription) {
	return f.bus.SubscribeLossless(n)
}

func (f *fakeSession) Submit(ctx context.Context, sub runner.Submission) (string, error) {
	return "", runner.ErrRunInProgress
}

func (f *fakeSession) Active() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active, f.active != ""
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
	e, _ := event.New(time.Now(), event.HumanAnswer, event.HumanAnswerPayload{ID: id, Answer: answer, Source: source})
	f.publishLogged(e)
	return nil
}

// publishLogged is emit without a test handle (Answer runs in a handler).
func (f *fakeSession) publishLogged(e event.Event) {
	f.mu.Lock()
	id := f.active
	e.Seq = f.seq
	f.seq++
	f.mu.Unlock()
	path, _ := f.ws.LogPath(id)
	if lf, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
		_, _ = lf.Write(append(e.AppendJSON(nil), '\n'))
		lf.Close()
	}
	f.bus.Publish(e)
}

func (f *fakeSession) Questions() []runner.Question {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]runner.Question(nil), f.questions...)
}

func (f *fakeSession) control(what, runID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.active == "" || runID != f.active {
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
func (f *fakeSession) Workspace() store.Workspace { return f.ws }

// Changes: the fake's runs write no file, so nothing changed.
func (f *fakeSession) Changes(ctx context.Context, runID string) (runner.Changes, error) {
	return runner.Changes{RunID: runID, Source: runner.ChangesFromLog}, nil
}

// ModelInfo: the fake names no model beyond what its events carry.
func (f *fakeSession) ModelInfo() runner.ModelInfo { return runner.ModelInfo{} }

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
