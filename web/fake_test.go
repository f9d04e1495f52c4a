package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/store"
)

// fakeSession is a session whose run the test drives: it publishes events
// on a real runner.Bus and keeps questions and operator requests in memory.
// The workspace records are real files in a temporary directory.
type fakeSession struct {
	ws  store.Workspace
	bus *runner.Bus

	mu         sync.Mutex
	active     string
	seq        int64
	questions  []runner.Question
	answered   map[string]string
	submitted  []runner.Submission
	interrupts []string
	paused     bool
	health     runner.HealthView
}

func newFakeSession(t *testing.T) *fakeSession {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, store.OrchestrationDir, store.RunsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	return &fakeSession{ws: store.Workspace{Dir: dir}, bus: runner.NewBus(), answered: map[string]string{},
		health: runner.HealthView{State: runner.HealthOK}}
}

func (f *fakeSession) SubscribeLossless(n int) ([]event.Event, *runner.Subscription) {
	return f.bus.SubscribeLossless(n)
}

func (f *fakeSession) Submit(ctx context.Context, sub runner.Submission) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.active != "" {
		return "", runner.ErrRunInProgress
	}
	id, err := f.ws.CreateRun(time.Now())
	if err != nil {
		return "", err
	}
	m := &store.Meta{RunID: id, Task: sub.Task, Effort: "standard", Status: store.StatusRunning, StartedAt: time.Now().UTC(), ContinuesFrom: sub.ContinuesFrom}
	if err := f.ws.WriteMeta(m); err != nil {
		return "", err
	}
	f.submitted = append(f.submitted, sub)
	f.active = id
	f.seq = 0
	return id, nil
}

// emit appends e to the active run's log and publishes it, as the runner does.
func (f *fakeSession) emit(t testing.TB, typ event.Type, payload any) {
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
	if id == "" {
		t.Fatal("no active run")
	}
	path, _ := f.ws.LogPath(id)
	line, _ := json.Marshal(e)
	lf, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = lf.Write(append(line, '\n'))
	lf.Close()
	f.bus.Publish(e)
}

func (f *fakeSession) Active() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active, f.active != ""
}

func (f *fakeSession) Answer(id, answer string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.answered[id]; ok {
		return runner.ErrAlreadyAnswered
	}
	for i, q := range f.questions {
		if q.ID == id {
			f.answered[id] = answer
			f.questions = append(f.questions[:i], f.questions[i+1:]...)
			return nil
		}
	}
	return runner.ErrUnknownQuestion
}

func (f *fakeSession) Questions() []runner.Question {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]runner.Question(nil), f.questions...)
}

func (f *fakeSession) Interrupt(runID, kind, message string) error {
	if kind != "inquiry" && kind != "plan_modification" {
		return runner.ErrInvalidKind
	}
	if strings.TrimSpace(message) == "" {
		return runner.ErrEmptyMessage
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.active == "" || f.active != runID {
		return runner.ErrRunNotActive
	}
	f.interrupts = append(f.interrupts, kind+":"+message)
	return nil
}

func (f *fakeSession) InterruptPending(runID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active == runID && len(f.interrupts) > 0
}

func (f *fakeSession) control(runID string, fn func() error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.active == "" || f.active != runID {
		return runner.ErrRunNotActive
	}
	return fn()
}

func (f *fakeSession) Pause(runID string) error {
	return f.control(runID, func() error { f.paused = true; return nil })
}

func (f *fakeSession) Resume(runID string) error {
	return f.control(runID, func() error {
		if !f.paused {
			return io.EOF // any non-session error: "not paused"
		}
		f.paused = false
		return nil
	})
}

func (f *fakeSession) Terminate(runID string) error {
	return f.control(runID, func() error { return nil })
}

func (f *fakeSession) Health() runner.HealthView { return f.health }

func (f *fakeSession) Workspace() store.Workspace { return f.ws }

// addPastRun writes a finished run from one of render's log fixtures and
// returns its id.
func addPastRun(t *testing.T, ws store.Workspace, fixture string, mutate func(*store.Meta)) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "render", "testdata", "model", fixture))
	if err != nil {
		t.Fatal(err)
	}
	var first struct {
		Timestamp time.Time               `json:"timestamp"`
		Payload   event.RunStartedPayload `json:"payload"`
	}
	if err := json.Unmarshal(data[:bytes.IndexByte(data, '\n')], &first); err != nil {
		t.Fatal(err)
	}
	id := first.Payload.RunID
	dir := filepath.Join(ws.Runs(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.LogFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	end := first.Timestamp.Add(time.Minute)
	m := &store.Meta{RunID: id, Task: first.Payload.Task, Effort: first.Payload.Effort, Status: store.StatusSuccess,
		StartedAt: first.Timestamp, EndedAt: &end, EntryRole: "orchestrator", Model: "secret-model-name",
		Result: &store.MetaResult{Status: "success", Summary: "All **done**."}}
	if mutate != nil {
		mutate(m)
	}
	if err := ws.WriteMeta(m); err != nil {
		t.Fatal(err)
	}
	return id
}

// testServer is a started server over a fake session, behind httptest.
type testServer struct {
	t    *testing.T
	sess *fakeSession
	srv  *Server
	http *httptest.Server
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	sess := newFakeSession(t)
	g, err := runner.LoadGuild(seed.Guild(), "seed")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(sess, g, "test-1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.Start(ctx)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		cancel()
		hs.Close()
	})
	return &testServer{t: t, sess: sess, srv: s, http: hs}
}

// do sends a request and decodes a JSON answer into out (when not nil).
func (ts *testServer) do(method, path string, body any, out any) *http.Response {
	ts.t.Helper()
	var rd io.Reader
	if body != nil {
		if s, ok := body.(string); ok {
			rd = strings.NewReader(s)
		} else {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
	}
	req, err := http.NewRequest(method, ts.http.URL+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := ts.http.Client().Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			ts.t.Fatalf("%s %s: %d %s: decode: %v", method, path, res.StatusCode, raw, err)
		}
	}
	res.Body = io.NopCloser(bytes.NewReader(raw))
	return res
}

// wantError checks a JSON error answer.
func (ts *testServer) wantError(method, path string, body any, status int, code string) {
	ts.t.Helper()
	var e apiError
	res := ts.do(method, path, body, &e)
	if res.StatusCode != status || e.OK || e.Error != code {
		ts.t.Errorf("%s %s: got %d %+v, want %d %q", method, path, res.StatusCode, e, status, code)
	}
}

// waitFor polls cond (a safety net for background delivery, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
