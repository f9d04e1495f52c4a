package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func testQueue(t *testing.T) (*Queue, Workspace) {
	t.Helper()
	ws := sealedWorkspace(t.TempDir())
	return ws.Queue(), ws
}

// seedQueue writes queue.json with items as given, sealed as Guildhall
// seals them.
func seedQueue(t *testing.T, ws Workspace, items ...QueueItem) {
	t.Helper()
	if err := os.MkdirAll(ws.Orchestration(), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := (&queueFile{Items: items}).encode(ws.Seal)
	if err := os.WriteFile(filepath.Join(ws.Orchestration(), QueueFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func ids(items []QueueItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

func TestConcurrentAddsNeverLoseOrDuplicate(t *testing.T) {
	ws := sealedWorkspace(t.TempDir())
	const workers, each = 20, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := Workspace{Dir: ws.Dir, Seal: ws.Seal}.Queue() // a handle per "process"
			for i := 0; i < each; i++ {
				if _, err := q.Add(context.Background(), QueueSpec{Task: fmt.Sprintf("task %d/%d", w, i)}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	items, err := ws.Queue().List()
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != workers*each {
		t.Fatalf("queue holds %d items, want %d", len(items), workers*each)
	}
	tasks, seenID := map[string]int{}, map[string]bool{}
	for _, it := range items {
		tasks[it.Task]++
		if seenID[it.ID] {
			t.Fatalf("id %s given twice", it.ID)
		}
		seenID[it.ID] = true
		if it.Status != QueueWaiting || !ValidQueueID(it.ID) {
			t.Fatalf("item %+v", it)
		}
	}
	for w := 0; w < workers; w++ {
		for i := 0; i < each; i++ {
			if n := tasks[fmt.Sprintf("task %d/%d", w, i)]; n != 1 {
				t.Fatalf("task %d/%d appears %d times", w, i, n)
			}
		}
	}
}

var allStatuses = []string{QueueWaiting, QueueActive, QueueNeedsInput, QueueDone, QueueError, QueueCancelled}

func TestOperationsForbiddenByStatus(t *testing.T) {
	ctx := context.Background()
	task := "new task"
	ops := []struct {
		name    string
		allowed []string
		do      func(q *Queue, id string) error
	}{
		{"edit", []string{QueueWaiting}, func(q *Queue, id string) error {
			_, err := q.Edit(ctx, id, QueueEdit{Task: &task})
			return err
		}},
		{"move to", []string{QueueWaiting}, func(q *Queue, id string) error { _, err := q.MoveTo(ctx, id, 0); return err }},
		{"move by", []string{QueueWaiting}, func(q *Queue, id string) error { _, err := q.MoveBy(ctx, id, 1); return err }},
		{"cancel", []string{QueueWaiting, QueueNeedsInput}, func(q *Queue, id string) error { _, err := q.Cancel(ctx, id); return err }},
		{"requeue", []string{QueueDone, QueueError, QueueCancelled, QueueNeedsInput}, func(q *Queue, id string) error {
			_, err := q.Requeue(ctx, id)
			return err
		}},
		{"answer", []string{QueueNeedsInput}, func(q *Queue, id string) error { _, err := q.Answer(ctx, id, "yes"); return err }},
		{"mark active", []string{QueueActive}, func(q *Queue, id string) error {
			_, err := q.MarkActive(ctx, id, "run-20260101-120000")
			return err
		}},
		{"unclaim", []string{QueueActive}, func(q *Queue, id string) error { _, err := q.Unclaim(ctx, id); return err }},
		{"finish", []string{QueueActive}, func(q *Queue, id string) error {
			_, err := q.Finish(ctx, id, QueueOutcome{RunStatus: StatusSuccess, Summary: "ok"})
			return err
		}},
	}
	for _, op := range ops {
		for _, status := range allStatuses {
			t.Run(op.name+"/"+status, func(t *testing.T) {
				q, ws := testQueue(t)
				now := time.Now().UTC()
				seedQueue(t, ws, QueueItem{ID: "q-1-1", Task: "do it", Status: status, CreatedAt: now, UpdatedAt: now,
					Question: &QueueQuestion{Text: "Which?"}})
				err := op.do(q, "q-1-1")
				if slices.Contains(op.allowed, status) {
					if err != nil {
						t.Fatalf("%s on a %s item: %v", op.name, status, err)
					}
					return
				}
				if !errors.Is(err, ErrStatusForbidden) {
					t.Fatalf("%s on a %s item: err = %v, want status_forbidden", op.name, status, err)
				}
				if msg := err.Error(); !strings.Contains(msg, "q-1-1") || !strings.Contains(msg, status) {
					t.Fatalf("error %q should name the item and its status", msg)
				}
				after, _ := q.Get("q-1-1")
				if after.Status != status {
					t.Fatalf("a refused %s changed the item to %s", op.name, after.Status)
				}
			})
		}
		t.Run(op.name+"/missing", func(t *testing.T) {
			q, ws := testQueue(t)
			seedQueue(t, ws)
			err := op.do(q, "q-9-9")
			if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "q-9-9") {
				t.Fatalf("err = %v, want not_found naming q-9-9", err)
			}
		})
	}
}

func TestAddValidates(t *testing.T) {
	q, _ := testQueue(t)
	for _, spec := range []QueueSpec{
		{Task: "  \n"},
		{Task: "x", Effort: "max"},
		{Task: "x", LogLevel: "debug"},
		{Task: "x", ContinuesFrom: "../../etc"},
	} {
		if _, err := q.Add(context.Background(), spec); !errors.Is(err, ErrInvalid) {
			t.Errorf("Add(%+v) = %v, want invalid", spec, err)
		}
	}
	if items, _ := q.List(); len(items) != 0 {
		t.Fatalf("invalid adds were stored: %v", items)
	}
}

func TestReorder(t *testing.T) {
	ctx := context.Background()
	q, _ := testQueue(t)
	var added []string
	for _, task := range []string{"a", "b", "c", "d"} {
		it, err := q.Add(ctx, QueueSpec{Task: task})
		if err != nil {
			t.Fatal(err)
		}
		added = append(added, it.ID)
	}
	a, b, c, d := added[0], added[1], added[2], added[3]
	// One item runs: reordering concerns waiting items only.
	if _, ok, err := q.ClaimNext(ctx); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	steps := []struct {
		name string
		do   func() error
		want []string
	}{
		{"d to the top", func() error { _, err := q.MoveTo(ctx, d, 0); return err }, []string{d, b, c}},
		{"d down one", func() error { _, err := q.MoveBy(ctx, d, 1); return err }, []string{b, d, c}},
		{"b up past the top is clamped", func() error { _, err := q.MoveBy(ctx, b, -5); return err }, []string{b, d, c}},
		{"b to position 99 is the tail", func() error { _, err := q.MoveTo(ctx, b, 99); return err }, []string{d, c, b}},
		{"c to position 1 stays", func() error { _, err := q.MoveTo(ctx, c, 1); return err }, []string{d, c, b}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		w, _ := q.Waiting()
		if got := ids(w); !slices.Equal(got, s.want) {
			t.Fatalf("%s: waiting order %v, want %v", s.name, got, s.want)
		}
	}
	if it, _ := q.Get(a); it.Status != QueueActive {
		t.Fatalf("the claimed item is %s", it.Status)
	}
	next, ok, _ := q.ClaimNext(ctx)
	if !ok || next.ID != d {
		t.Fatalf("next claimed %s, want %s (the head)", next.ID, d)
	}
}

func TestParkAnswerRequeueLifecycle(t *testing.T) {
	ctx := context.Background()
	q, _ := testQueue(t)
	first, _ := q.Add(ctx, QueueSpec{Task: "Set up the database", Effort: "quick"})
	other, _ := q.Add(ctx, QueueSpec{Task: "Other work"})
	it, _, _ := q.ClaimNext(ctx)
	if it.ID != first.ID || it.RunID != "" || it.StartedAt == nil {
		t.Fatalf("claimed %+v", it)
	}
	if _, err := q.MarkActive(ctx, it.ID, "run-20260101-120000"); err != nil {
		t.Fatal(err)
	}
	parked, err := q.Finish(ctx, it.ID, QueueOutcome{RunID: "run-20260101-120000", RunStatus: StatusNeedsClarification,
		Summary:  "Waiting for an answer to: Which database?",
		Question: &QueueQuestion{ID: "q1", Text: "Which database?", Options: []QueueOption{{Label: "Postgres"}, {Label: "SQLite"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if parked.Status != QueueNeedsInput || parked.Question.Text != "Which database?" || parked.ContinuesFrom != "run-20260101-120000" || parked.EndedAt == nil {
		t.Fatalf("parked item %+v", parked)
	}
	answered, err := q.Answer(ctx, first.ID, "Postgres")
	if err != nil {
		t.Fatal(err)
	}
	if answered.Status != QueueWaiting || answered.Answer != "Postgres" || answered.RunID != "" || answered.Effort != "quick" {
		t.Fatalf("answered item %+v", answered)
	}
	if w, _ := q.Waiting(); !slices.Equal(ids(w), []string{first.ID, other.ID}) {
		t.Fatalf("an answered item goes to the head: %v", ids(w))
	}
	want := "Set up the database\n\nOperator's answer to \"Which database?\": Postgres"
	if got := answered.DispatchTask(); got != want {
		t.Fatalf("dispatch task = %q, want %q", got, want)
	}

	// It runs again and fails; requeue keeps the id, goes to the tail and
	// continues from the failed attempt.
	it, _, _ = q.ClaimNext(ctx)
	_, _ = q.MarkActive(ctx, it.ID, "run-20260101-130000")
	failed, _ := q.Finish(ctx, it.ID, QueueOutcome{RunID: "run-20260101-130000", RunStatus: StatusError, Summary: "Could not connect", Error: "connection refused"})
	if failed.Status != QueueError || failed.Error != "connection refused" || failed.Summary != "Could not connect" {
		t.Fatalf("failed item %+v", failed)
	}
	again, err := q.Requeue(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || again.ContinuesFrom != "run-20260101-130000" || again.Error != "" ||
		!slices.Equal(again.Runs, []string{"run-20260101-120000", "run-20260101-130000"}) {
		t.Fatalf("requeued item %+v", again)
	}
	if w, _ := q.Waiting(); !slices.Equal(ids(w), []string{other.ID, first.ID}) {
		t.Fatalf("a requeued item goes to the tail: %v", ids(w))
	}
}

func TestMalformedQueueIsReportedAndPreserved(t *testing.T) {
	ctx := context.Background()
	cases := map[string]string{
		"not json":       `{"items": [ {"id": "q-1-1", "task": "half`,
		"unknown status": `{"items":[{"id":"q-1-1","task":"x","status":"paused"}]}`,
		"duplicate id":   `{"items":[{"id":"q-1-1","task":"x","status":"waiting"},{"id":"q-1-1","task":"y","status":"waiting"}]}`,
		"bad id":         `{"items":[{"id":"../x","task":"x","status":"waiting"}]}`,
		"empty task":     `{"items":[{"id":"q-1-1","task":" ","status":"waiting"}]}`,
		"bad run id":     `{"items":[{"id":"q-1-1","task":"x","status":"active","runId":"run-x"}]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			q, ws := testQueue(t)
			path := filepath.Join(ws.Orchestration(), QueueFile)
			_ = os.MkdirAll(ws.Orchestration(), 0o755)
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := q.List()
			var ce *QueueCorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrQueueCorrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("List = %v, want a corrupt-queue error naming %s", err, path)
			}
			if _, err := q.Add(ctx, QueueSpec{Task: "new"}); !errors.Is(err, ErrQueueCorrupt) {
				t.Fatalf("Add over a malformed queue = %v, want refusal", err)
			}
			if b, _ := os.ReadFile(path); string(b) != body {
				t.Fatalf("the malformed file was changed to %q", b)
			}
			moved, err := q.WithClock(func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }).Reset(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(moved) != "queue.json.corrupt-20260102-030405.000" {
				t.Fatalf("moved aside as %s", moved)
			}
			if b, _ := os.ReadFile(moved); string(b) != body {
				t.Fatalf("the moved file holds %q", b)
			}
			if _, err := q.Add(ctx, QueueSpec{Task: "new"}); err != nil {
				t.Fatalf("after reset: %v", err)
			}
		})
	}
}

func TestResetRefusesAWellFormedQueue(t *testing.T) {
	q, _ := testQueue(t)
	_, _ = q.Add(context.Background(), QueueSpec{Task: "keep me"})
	if _, err := q.Reset(context.Background()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Reset = %v", err)
	}
	if items, _ := q.List(); len(items) != 1 {
		t.Fatalf("items = %v", items)
	}
}

func TestBlankQueueFileIsEmpty(t *testing.T) {
	q, ws := testQueue(t)
	_ = os.MkdirAll(ws.Orchestration(), 0o755)
	_ = os.WriteFile(q.Path(), []byte("\n"), 0o644)
	if items, err := q.List(); err != nil || len(items) != 0 {
		t.Fatalf("List = %v %v", items, err)
	}
}

func TestSettledItemsArePruned(t *testing.T) {
	q, ws := testQueue(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var items []QueueItem
	for i := 0; i < MaxSettledQueueItems+5; i++ {
		at := base.Add(time.Duration(i) * time.Minute)
		items = append(items, QueueItem{ID: fmt.Sprintf("q-1-%d", i+1), Task: "t", Status: QueueDone, CreatedAt: at, UpdatedAt: at})
	}
	items = append([]QueueItem{{ID: "q-2-1", Task: "asks", Status: QueueNeedsInput, CreatedAt: base, UpdatedAt: base}}, items...)
	seedQueue(t, ws, items...)
	if _, err := q.Add(context.Background(), QueueSpec{Task: "new"}); err != nil {
		t.Fatal(err)
	}
	got, _ := q.List()
	if len(got) != MaxSettledQueueItems+2 {
		t.Fatalf("%d items after prune", len(got))
	}
	if got[0].ID != "q-2-1" || got[1].ID != "q-1-6" {
		t.Fatalf("pruned the wrong items: first %s, %s", got[0].ID, got[1].ID)
	}
}

func TestQueueLockHonoursContext(t *testing.T) {
	q, _ := testQueue(t)
	unlock, err := q.lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.Add(ctx, QueueSpec{Task: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add while locked with a cancelled context = %v", err)
	}
}
