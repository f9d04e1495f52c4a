package web

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

// The scheduler is the queue the command wires in.
var _ Queue = (*runner.Scheduler)(nil)

type itemAnswer struct {
	Item store.QueueItem `json:"item"`
}

type itemsAnswer struct {
	Items []store.QueueItem `json:"items"`
}

func newQueueServer(t *testing.T) (*testServer, *fakeQueue) {
	t.Helper()
	sess := newFakeSession(t)
	q := newFakeQueue(sess)
	return newTestServerOn(t, sess, WithQueue(q)), q
}

func (ts *testServer) queueIDs() []string {
	ts.t.Helper()
	var out itemsAnswer
	if res := ts.do("GET", "/api/queue", nil, &out); res.StatusCode != 200 {
		ts.t.Fatalf("GET /api/queue: %d", res.StatusCode)
	}
	ids := []string{}
	for _, it := range out.Items {
		ids = append(ids, it.ID)
	}
	return ids
}

func TestQueueRoutesWithoutAQueue(t *testing.T) {
	ts := newTestServer(t)
	var c Config
	ts.do("GET", "/api/config", nil, &c)
	if c.Queue {
		t.Error("config says there is a queue")
	}
	ts.wantError("GET", "/api/queue", nil, 404, "queue_unavailable")
	ts.wantError("POST", "/api/queue", map[string]string{"task": "x"}, 404, "queue_unavailable")
	ts.wantError("DELETE", "/api/queue/q-1-1", nil, 404, "queue_unavailable")
	ts.wantError("POST", "/api/queue/q-1-1/requeue", nil, 404, "queue_unavailable")
	ts.wantError("POST", "/api/queue/q-1-1/answer", map[string]string{"answer": "yes"}, 404, "queue_unavailable")
}

func TestQueueAddListGet(t *testing.T) {
	ts, _ := newQueueServer(t)
	var c Config
	ts.do("GET", "/api/config", nil, &c)
	if !c.Queue {
		t.Error("config does not say there is a queue")
	}
	var out itemsAnswer
	ts.do("GET", "/api/queue", nil, &out)
	if out.Items == nil || len(out.Items) != 0 {
		t.Fatalf("empty queue %+v", out)
	}
	past := addPastRun(t, ts.sess.WS, "delegation.jsonl", nil)
	var a itemAnswer
	res := ts.do("POST", "/api/queue", map[string]string{"task": "Write **docs**", "effort": "quick", "logLevel": "standard", "continuesFrom": past}, &a)
	if res.StatusCode != 201 || !store.ValidQueueID(a.Item.ID) || a.Item.Status != store.QueueWaiting ||
		a.Item.Effort != "quick" || a.Item.LogLevel != "standard" || a.Item.ContinuesFrom != past {
		t.Fatalf("add: %d %+v", res.StatusCode, a.Item)
	}
	var got itemAnswer
	if res := ts.do("GET", "/api/queue/"+a.Item.ID, nil, &got); res.StatusCode != 200 || got.Item.Task != "Write **docs**" {
		t.Fatalf("get: %d %+v", res.StatusCode, got)
	}
	ts.wantError("GET", "/api/queue/q-1-1", nil, 404, "not_found")
	ts.wantError("GET", "/api/queue/../etc", nil, 404, "not_found")
	ts.wantError("GET", "/api/queue/nope", nil, 404, "not_found")

	ts.wantError("POST", "/api/queue", map[string]string{"task": " "}, 400, "invalid_body")
	ts.wantError("POST", "/api/queue", map[string]string{"task": "x", "effort": "max"}, 400, "invalid_body")
	ts.wantError("POST", "/api/queue", map[string]string{"task": "x", "logLevel": "loud"}, 400, "invalid_body")
	ts.wantError("POST", "/api/queue", map[string]any{"task": "x", "priority": 1}, 400, "invalid_body")
	ts.wantError("POST", "/api/queue", map[string]string{"task": "x", "continuesFrom": "run-20990101-000000"}, 404, "unknown_run")
	if ids := ts.queueIDs(); len(ids) != 1 {
		t.Errorf("refused adds changed the queue: %v", ids)
	}
}

func TestQueueEditAndMove(t *testing.T) {
	ts, _ := newQueueServer(t)
	var ids []string
	for _, task := range []string{"one", "two", "three"} {
		var a itemAnswer
		ts.do("POST", "/api/queue", map[string]string{"task": task}, &a)
		ids = append(ids, a.Item.ID)
	}
	var a itemAnswer
	if res := ts.do("PATCH", "/api/queue/"+ids[1], map[string]any{"task": "TWO", "effort": "thorough"}, &a); res.StatusCode != 200 ||
		a.Item.Task != "TWO" || a.Item.Effort != "thorough" {
		t.Fatalf("edit: %d %+v", res.StatusCode, a.Item)
	}
	if res := ts.do("PATCH", "/api/queue/"+ids[2], map[string]any{"position": 0}, &a); res.StatusCode != 200 || a.Item.ID != ids[2] {
		t.Fatalf("move to: %d %+v", res.StatusCode, a.Item)
	}
	if got := ts.queueIDs(); got[0] != ids[2] || got[1] != ids[0] || got[2] != ids[1] {
		t.Errorf("after move to 0: %v", got)
	}
	if res := ts.do("PATCH", "/api/queue/"+ids[2], map[string]any{"moveBy": 1}, &a); res.StatusCode != 200 {
		t.Fatalf("move by: %d", res.StatusCode)
	}
	if got := ts.queueIDs(); got[0] != ids[0] || got[1] != ids[2] {
		t.Errorf("after move by 1: %v", got)
	}
	// An edit and a move at once.
	a = itemAnswer{}
	if res := ts.do("PATCH", "/api/queue/"+ids[1], map[string]any{"effort": "", "position": 0}, &a); res.StatusCode != 200 || a.Item.Effort != "" {
		t.Fatalf("edit and move: %d %+v", res.StatusCode, a.Item)
	}
	if got := ts.queueIDs(); got[0] != ids[1] {
		t.Errorf("after edit and move: %v", got)
	}

	ts.wantError("PATCH", "/api/queue/"+ids[0], map[string]any{}, 400, "invalid_body")
	ts.wantError("PATCH", "/api/queue/"+ids[0], map[string]any{"task": "  "}, 400, "invalid_body")
	ts.wantError("PATCH", "/api/queue/"+ids[0], map[string]any{"effort": "max"}, 400, "invalid_body")
	ts.wantError("PATCH", "/api/queue/"+ids[0], map[string]any{"position": -1}, 400, "invalid_body")
	ts.wantError("PATCH", "/api/queue/"+ids[0], map[string]any{"position": 1, "moveBy": 1}, 400, "invalid_body")
	ts.wantError("PATCH", "/api/queue/"+ids[0], map[string]any{"status": "done"}, 400, "invalid_body")
	ts.wantError("PATCH", "/api/queue/q-1-1", map[string]any{"task": "x"}, 404, "not_found")

	ts.do("DELETE", "/api/queue/"+ids[0], nil, nil)
	ts.wantError("PATCH", "/api/queue/"+ids[0], map[string]any{"task": "x"}, 409, "status_forbidden")
	ts.wantError("PATCH", "/api/queue/"+ids[0], map[string]any{"moveBy": -1}, 409, "status_forbidden")
}

func TestQueueCancelRequeueAnswer(t *testing.T) {
	ts, q := newQueueServer(t)
	parked := q.park(t, "Port the parser", &store.QueueQuestion{ID: "q-1", Text: "Which **grammar**?", Context: "Two exist.",
		Options: []store.QueueOption{{Label: "PEG"}, {Label: "LALR", Description: "the old one"}}})
	var a itemAnswer
	ts.do("POST", "/api/queue", map[string]string{"task": "later"}, &a)
	waiting := a.Item.ID

	ts.wantError("POST", "/api/queue/"+parked.ID+"/answer", map[string]string{"answer": " "}, 400, "invalid_body")
	ts.wantError("POST", "/api/queue/"+parked.ID+"/answer", map[string]any{"answer": 3}, 400, "invalid_body")
	ts.wantError("POST", "/api/queue/"+waiting+"/answer", map[string]string{"answer": "PEG"}, 409, "status_forbidden")
	ts.wantError("POST", "/api/queue/q-1-1/answer", map[string]string{"answer": "PEG"}, 404, "not_found")
	if res := ts.do("POST", "/api/queue/"+parked.ID+"/answer", map[string]string{"answer": "PEG"}, &a); res.StatusCode != 200 ||
		a.Item.Status != store.QueueWaiting || a.Item.Answer != "PEG" {
		t.Fatalf("answer: %d %+v", res.StatusCode, a.Item)
	}
	if got := ts.queueIDs(); got[0] != parked.ID {
		t.Errorf("an answered item goes to the head: %v", got)
	}

	ts.wantError("POST", "/api/queue/"+waiting+"/requeue", nil, 409, "status_forbidden")
	ts.wantError("POST", "/api/queue/q-1-1/requeue", nil, 404, "not_found")
	if res := ts.do("DELETE", "/api/queue/"+waiting, nil, &a); res.StatusCode != 200 || a.Item.Status != store.QueueCancelled {
		t.Fatalf("cancel: %d %+v", res.StatusCode, a.Item)
	}
	ts.wantError("DELETE", "/api/queue/"+waiting, nil, 409, "status_forbidden")
	ts.wantError("DELETE", "/api/queue/q-1-1", nil, 404, "not_found")
	if res := ts.do("POST", "/api/queue/"+waiting+"/requeue", nil, &a); res.StatusCode != 200 || a.Item.Status != store.QueueWaiting || a.Item.ID != waiting {
		t.Fatalf("requeue: %d %+v", res.StatusCode, a.Item)
	}
	if got := ts.queueIDs(); got[len(got)-1] != waiting {
		t.Errorf("a requeued item goes to the tail: %v", got)
	}
}

func TestQueueCorruptIsReported(t *testing.T) {
	ts, q := newQueueServer(t)
	var a itemAnswer
	ts.do("POST", "/api/queue", map[string]string{"task": "one"}, &a)
	if err := os.WriteFile(q.q.Path(), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts.wantError("GET", "/api/queue", nil, 503, "queue_corrupt")
	ts.wantError("POST", "/api/queue", map[string]string{"task": "two"}, 503, "queue_corrupt")
	ts.wantError("GET", "/api/queue/"+a.Item.ID, nil, 503, "queue_corrupt")
	ts.wantError("DELETE", "/api/queue/"+a.Item.ID, nil, 503, "queue_corrupt")
	if b, _ := os.ReadFile(filepath.Clean(q.q.Path())); string(b) != "{not json" {
		t.Errorf("the malformed queue.json was touched: %q", b)
	}
	// A live run: the task would be queued, and the queue refuses it.
	ts.sess.SetActive("run-20250101-000000")
	ts.wantError("POST", "/api/runs", map[string]string{"task": "three"}, 503, "queue_corrupt")
}

func TestCreateRunQueuesWhileARunIsLive(t *testing.T) {
	ts, _ := newQueueServer(t)
	var first map[string]any
	if res := ts.do("POST", "/api/runs", map[string]string{"task": "first"}, &first); res.StatusCode != 201 || first["runId"] == nil {
		t.Fatalf("first: %d %v", res.StatusCode, first)
	}
	var second struct {
		RunID  string          `json:"runId"`
		Queued store.QueueItem `json:"queued"`
	}
	res := ts.do("POST", "/api/runs", map[string]string{"task": "second", "effort": "quick"}, &second)
	if res.StatusCode != 201 || second.RunID != "" || second.Queued.Task != "second" || second.Queued.Effort != "quick" || second.Queued.Status != store.QueueWaiting {
		t.Fatalf("second: %d %+v", res.StatusCode, second)
	}
	if got := ts.queueIDs(); len(got) != 1 || got[0] != second.Queued.ID {
		t.Errorf("queue %v", got)
	}
	if len(ts.sess.submitted) != 1 {
		t.Errorf("submitted %d runs", len(ts.sess.submitted))
	}
}

func TestQueueChangesReachTheEventStream(t *testing.T) {
	ts, q := newQueueServer(t)
	c := ts.srv.hub.add()
	defer ts.srv.hub.remove(c)
	if _, err := q.Add(context.Background(), store.QueueSpec{Task: "x"}); err != nil {
		t.Fatal(err)
	}
	n := <-c.ch // the test's deadline is the safety net
	if n.name != "queue" {
		t.Fatalf("notice %q", n.name)
	}
}
