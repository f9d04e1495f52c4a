package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakerun"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/store"
)

// fakeSession is a session whose run the test drives: its events go
// through a fakerun.Log (a real log file and a real runner.Bus), and it
// keeps questions and operator requests in memory.
type fakeSession struct {
	*fakerun.Log

	mu         sync.Mutex
	questions  []runner.Question
	answered   map[string]string
	submitted  []runner.Submission
	interrupts []string
	paused     bool
	health     runner.HealthView
}

func newFakeSession(t testing.TB) *fakeSession {
	t.Helper()
	return &fakeSession{Log: fakerun.New(t, testRecordsKey), answered: map[string]string{},
		health: runner.HealthView{State: runner.HealthOK}}
}

func (f *fakeSession) Submit(ctx context.Context, sub runner.Submission) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, busy := f.Active(); busy {
		return "", runner.ErrRunInProgress
	}
	id, err := f.Open(sub.Task, sub.ContinuesFrom)
	if err != nil {
		return "", err
	}
	f.submitted = append(f.submitted, sub)
	return id, nil
}

func (f *fakeSession) Answer(id, answer, source string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.answered[id]; ok {
		return runner.ErrAlreadyAnswered
	}
	if source != "browser" {
		return fmt.Errorf("the web server answered as %q, want browser", source)
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
	if !f.IsActive(runID) {
		return runner.ErrRunNotActive
	}
	f.interrupts = append(f.interrupts, kind+":"+message)
	return nil
}

func (f *fakeSession) InterruptPending(runID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.IsActive(runID) && len(f.interrupts) > 0
}

func (f *fakeSession) control(runID string, fn func() error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.IsActive(runID) {
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

// addPastRun writes a finished run from one of render's log fixtures and
// returns its id.
func addPastRun(t *testing.T, ws store.Workspace, fixture string, mutate func(*store.Meta)) string {
	t.Helper()
	return addPastRunFile(t, ws, filepath.Join("..", "render", "testdata", "model", fixture), mutate)
}

// addPastRunFile is addPastRun with a log at any path.
func addPastRunFile(t *testing.T, ws store.Workspace, path string, mutate func(*store.Meta)) string {
	t.Helper()
	data, err := os.ReadFile(path)
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

// serveFake serves the seed guild over sess on a free loopback port, as
// --web does, until the test ends; it returns the server's context and
// its URL.
func serveFake(tb testing.TB, sess *fakeSession, version string, opts ...Option) (context.Context, string) {
	tb.Helper()
	g, err := runner.LoadGuild(seed.Guild(), "seed")
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := New(sess, g, version, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	url, err := srv.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return ctx, url
}

// testServer is a started server over a fake session, behind httptest.
type testServer struct {
	t    *testing.T
	sess *fakeSession
	srv  *Server
	http *httptest.Server
}

func newTestServer(t *testing.T, opts ...Option) *testServer {
	t.Helper()
	return newTestServerOn(t, newFakeSession(t), opts...)
}

func newTestServerOn(t *testing.T, sess *fakeSession, opts ...Option) *testServer {
	t.Helper()
	g, err := runner.LoadGuild(seed.Guild(), "seed")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(sess, g, "test-1.2.3", opts...)
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
	ts.authorize(req)
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

// sent sends req with c and closes the answer's body unread, for a test
// that looks only at the status and the headers.
func sent(t testing.TB, c *http.Client, req *http.Request) *http.Response {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// startRun starts a run of task through POST /api/runs and returns its id.
func (ts *testServer) startRun(task string) string {
	ts.t.Helper()
	var created map[string]string
	ts.do("POST", "/api/runs", map[string]string{"task": task}, &created)
	return created["runId"]
}

// authorize adds the server's access token, as a programmatic client does.
func (ts *testServer) authorize(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+ts.srv.Token())
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

// fakeQueue is a Queue over the workspace's real store.Queue (so its
// errors are the store's own) that submits through the fake session, as
// runner.Scheduler does through a real one.
type fakeQueue struct {
	sess *fakeSession
	q    *store.Queue

	mu       sync.Mutex
	watchers []chan struct{}
}

func newFakeQueue(sess *fakeSession) *fakeQueue {
	return &fakeQueue{sess: sess, q: sess.WS.Queue()}
}

func (f *fakeQueue) changed(it store.QueueItem, err error) (store.QueueItem, error) {
	if err == nil {
		f.mu.Lock()
		for _, ch := range f.watchers {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		f.mu.Unlock()
	}
	return it, err
}

func (f *fakeQueue) Add(ctx context.Context, spec store.QueueSpec) (store.QueueItem, error) {
	return f.changed(f.q.Add(ctx, spec))
}

func (f *fakeQueue) Edit(ctx context.Context, id string, e store.QueueEdit) (store.QueueItem, error) {
	return f.changed(f.q.Edit(ctx, id, e))
}

func (f *fakeQueue) MoveTo(ctx context.Context, id string, pos int) (store.QueueItem, error) {
	return f.changed(f.q.MoveTo(ctx, id, pos))
}

func (f *fakeQueue) MoveBy(ctx context.Context, id string, delta int) (store.QueueItem, error) {
	return f.changed(f.q.MoveBy(ctx, id, delta))
}

func (f *fakeQueue) Cancel(ctx context.Context, id string) (store.QueueItem, error) {
	return f.changed(f.q.Cancel(ctx, id))
}

func (f *fakeQueue) Requeue(ctx context.Context, id string) (store.QueueItem, error) {
	return f.changed(f.q.Requeue(ctx, id))
}

func (f *fakeQueue) Answer(ctx context.Context, id, answer string) (store.QueueItem, error) {
	return f.changed(f.q.Answer(ctx, id, answer))
}

func (f *fakeQueue) List() ([]store.QueueItem, error) { return f.q.List() }

func (f *fakeQueue) Get(id string) (store.QueueItem, error) { return f.q.Get(id) }

func (f *fakeQueue) SubmitOrQueue(ctx context.Context, sub runner.Submission) (string, *store.QueueItem, error) {
	if _, busy := f.sess.Active(); !busy {
		id, err := f.sess.Submit(ctx, sub)
		return id, nil, err
	}
	it, err := f.Add(ctx, store.QueueSpec{Task: sub.Task, Effort: sub.Effort, LogLevel: sub.LogLevel, ContinuesFrom: sub.ContinuesFrom})
	if err != nil {
		return "", nil, err
	}
	return "", &it, nil
}

func (f *fakeQueue) Watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	f.mu.Lock()
	f.watchers = append(f.watchers, ch)
	f.mu.Unlock()
	return ch, func() {}
}

// park settles a new item needs_input with question q, as the scheduler
// does when its parked run asked.
func (f *fakeQueue) park(t *testing.T, task string, q *store.QueueQuestion) store.QueueItem {
	t.Helper()
	return ParkItem(t, f.q, task, q)
}

// ParkItem is park on any queue; it is exported for the browser tests of
// package web_test, which drive a real scheduler's queue.
func ParkItem(t testing.TB, q *store.Queue, task string, question *store.QueueQuestion) store.QueueItem {
	t.Helper()
	ctx := context.Background()
	it, err := q.Add(ctx, store.QueueSpec{Task: task})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := q.ClaimNext(ctx); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if _, err := q.MarkActive(ctx, it.ID, "run-20250101-000001"); err != nil {
		t.Fatal(err)
	}
	it, err = q.Finish(ctx, it.ID, store.QueueOutcome{RunID: "run-20250101-000001", RunStatus: "needs_clarification", Question: question})
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// testRecordsKey seals the records of the web tests' workspaces.
var testRecordsKey = []byte("web-tests-records-key-32-bytes!!")
