package runner

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

	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// queueHarness is a session over a scripted model in a fresh workspace.
type queueHarness struct {
	t    *testing.T
	dir  string
	ws   store.Workspace
	g    *Guild
	d    *Deployment
	rec  *recorder
	sess *Session
}

func newQueueHarness(t *testing.T, script map[string][]provider.ScriptTurn) *queueHarness {
	t.Helper()
	g := testGuild(t)
	d := DefaultDeployment()
	d.FitToGuild(g)
	dir := t.TempDir()
	return &queueHarness{t: t, dir: dir, ws: testWS(dir), g: g, d: d,
		rec: &recorder{Provider: provider.NewScripted(&provider.Script{Roles: script}, 0)}}
}

// open takes the workspace (after any crash state was prepared).
func (h *queueHarness) open(p provider.Provider) *Session {
	h.t.Helper()
	if p == nil {
		p = h.rec
	}
	sess := openSession(h.t, SessionConfig{Workspace: h.dir, Guild: h.g, Deployment: h.d, Provider: p})
	h.sess = sess
	return sess
}

func (h *queueHarness) drain(s *Scheduler) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Drain(ctx); err != nil {
		h.t.Fatalf("drain: %v", err)
	}
}

func (h *queueHarness) item(id string) store.QueueItem {
	h.t.Helper()
	it, err := h.ws.Queue().Get(id)
	if err != nil {
		h.t.Fatal(err)
	}
	return it
}

func (h *queueHarness) runs() []string {
	ids, _ := h.ws.ListRunIDs()
	return ids
}

// lastUserMessage is the task message of the n-th (0-based) entry-role
// request.
func (h *queueHarness) taskSent(n int) string {
	reqs := h.rec.byRole("orchestrator")
	if n >= len(reqs) {
		h.t.Fatalf("only %d orchestrator requests", len(reqs))
	}
	msgs := reqs[n].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

func askCall(q string) provider.ScriptToolCall {
	return call("ask_human", map[string]any{"question": q, "options": []map[string]string{{"label": "Postgres"}, {"label": "SQLite"}}})
}

func TestQueueParksThenAnswerRequeuesWithTheAnswer(t *testing.T) {
	h := newQueueHarness(t, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("I need to know first.", askCall("Which database?")),
			turn("", finishCall("success", "Set up Postgres")),
		},
	})
	s := NewScheduler(h.open(nil), SchedulerOptions{})
	ctx := context.Background()
	it, err := s.Add(ctx, store.QueueSpec{Task: "Set up the database", Effort: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	h.drain(s)

	parked := h.item(it.ID)
	if parked.Status != store.QueueNeedsInput || parked.Question == nil || parked.Question.Text != "Which database?" ||
		len(parked.Question.Options) != 2 || parked.Question.Options[0].Label != "Postgres" {
		t.Fatalf("parked item %+v (question %+v)", parked, parked.Question)
	}
	firstRun := parked.RunID
	if m, _ := h.ws.ReadMeta(firstRun); m == nil || m.Status != store.StatusNeedsClarification || m.Effort != "quick" {
		t.Fatalf("parked run meta %+v", m)
	}

	if _, err := s.Answer(ctx, it.ID, "Postgres"); err != nil {
		t.Fatal(err)
	}
	h.drain(s)

	done := h.item(it.ID)
	if done.Status != store.QueueDone || done.Summary != "Set up Postgres" || done.RunID == firstRun {
		t.Fatalf("answered item %+v", done)
	}
	if !slices.Equal(done.Runs, []string{firstRun, done.RunID}) {
		t.Fatalf("runs of the item %v", done.Runs)
	}
	m, err := h.ws.ReadMeta(done.RunID)
	if err != nil {
		t.Fatal(err)
	}
	answer := `Operator's answer to "Which database?": Postgres`
	if m.ContinuesFrom != firstRun || !strings.Contains(m.Task, answer) || m.Status != store.StatusSuccess {
		t.Fatalf("second run meta: continues %q, status %s, task %q", m.ContinuesFrom, m.Status, m.Task)
	}
	if sent := h.taskSent(1); !strings.Contains(sent, "Set up the database") || !strings.Contains(sent, answer) {
		t.Fatalf("the model was sent %q", sent)
	}
}

func TestQueueRunsItemsInOrderWithBriefings(t *testing.T) {
	h := newQueueHarness(t, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", finishCall("success", "Renamed the module")),
			turn("", finishCall("error", "The tests do not build")),
		},
	})
	var mu sync.Mutex
	var trail []string
	s := NewScheduler(h.open(nil), SchedulerOptions{
		OnDispatch: func(it store.QueueItem) { mu.Lock(); trail = append(trail, "start "+it.Task); mu.Unlock() },
		OnSettle:   func(it store.QueueItem) { mu.Lock(); trail = append(trail, it.Status+" "+it.Task); mu.Unlock() },
	})
	ctx := context.Background()
	a, _ := s.Add(ctx, store.QueueSpec{Task: "Rename the module"})
	b, _ := s.Add(ctx, store.QueueSpec{Task: "Fix the tests"})
	h.drain(s)

	want := []string{"start Rename the module", "done Rename the module", "start Fix the tests", "error Fix the tests"}
	if !slices.Equal(trail, want) {
		t.Fatalf("trail %v, want %v", trail, want)
	}
	first, second := h.item(a.ID), h.item(b.ID)
	if first.Summary != "Renamed the module" || second.Error != "The tests do not build" {
		t.Fatalf("items %+v / %+v", first, second)
	}
	if strings.Contains(h.taskSent(0), BriefingHeader) {
		t.Fatal("nothing ran before the first item: it needs no briefing")
	}
	brief := h.taskSent(1)
	if !strings.Contains(brief, BriefingHeader) || !strings.Contains(brief, first.RunID+" (success): Rename the module — Renamed the module") {
		t.Fatalf("second task lacks the briefing of the first run:\n%s", brief)
	}
	if m, _ := h.ws.ReadMeta(second.RunID); strings.Contains(m.Task, BriefingHeader) {
		t.Fatal("the briefing is platform context, not part of the recorded task")
	}
}

// crashRun creates a run the way a dispatch does and abandons it before it
// executes, as a crash would: meta.json says running and a checkpoint
// exists.
func (h *queueHarness) crashRun(task string) string {
	h.t.Helper()
	r, err := Create(Options{Workspace: h.dir, Sealer: testSealer(h.dir), Guild: h.g, Deployment: h.d, Provider: h.rec, Task: task})
	if err != nil {
		h.t.Fatal(err)
	}
	r.close()
	return r.ID()
}

// finishedRun writes a finished run's meta.json.
func (h *queueHarness) finishedRun(at time.Time, task, status, summary string) string {
	h.t.Helper()
	id, err := h.ws.CreateRun(at)
	if err != nil {
		h.t.Fatal(err)
	}
	end := at.Add(time.Minute)
	m := &store.Meta{RunID: id, Task: task, Effort: "standard", Status: status, StartedAt: at.UTC(), EndedAt: &end}
	if status != store.StatusInterrupted {
		m.Result = &store.MetaResult{Status: status, Summary: summary}
	} else {
		m.Error = &store.MetaError{Kind: "interrupted", Message: "The run stopped before finishing."}
	}
	if err := h.ws.WriteMeta(m); err != nil {
		h.t.Fatal(err)
	}
	return id
}

// markActive records id as the run of the active item it, as the scheduler
// does once the run has started, and returns id.
func markActive(q *store.Queue, it store.QueueItem, id string) string {
	_, _ = q.MarkActive(context.Background(), it.ID, id)
	return id
}

func TestQueueRecoversFromACrash(t *testing.T) {
	cases := []struct {
		name string
		// crash prepares the workspace for the active item it and returns
		// the run the item must end up with ("" for a fresh run).
		crash      func(h *queueHarness, q *store.Queue, it store.QueueItem) string
		wantRuns   int
		wantStatus string
		summary    string
	}{
		{"claimed but the run never started", func(h *queueHarness, q *store.Queue, it store.QueueItem) string {
			return ""
		}, 1, store.QueueDone, "Did it"},
		{"the run finished but the item was not settled", func(h *queueHarness, q *store.Queue, it store.QueueItem) string {
			return markActive(q, it, h.finishedRun(time.Now(), it.Task, store.StatusSuccess, "Finished before the crash"))
		}, 1, store.QueueDone, "Finished before the crash"},
		{"the run's folder is gone", func(h *queueHarness, q *store.Queue, it store.QueueItem) string {
			markActive(q, it, "run-20200101-000000")
			return ""
		}, 1, store.QueueDone, "Did it"},
		{"the run can resume", func(h *queueHarness, q *store.Queue, it store.QueueItem) string {
			return markActive(q, it, h.crashRun(it.DispatchTask()))
		}, 1, store.QueueDone, "Did it"},
		{"the run started but its id was never recorded", func(h *queueHarness, q *store.Queue, it store.QueueItem) string {
			return h.crashRun(it.DispatchTask())
		}, 1, store.QueueDone, "Did it"},
		{"the run died and cannot resume", func(h *queueHarness, q *store.Queue, it store.QueueItem) string {
			markActive(q, it, h.finishedRun(time.Now().Add(-time.Hour), it.Task, store.StatusInterrupted, ""))
			return ""
		}, 2, store.QueueDone, "Did it"},
		{"the run failed before the crash", func(h *queueHarness, q *store.Queue, it store.QueueItem) string {
			return markActive(q, it, h.finishedRun(time.Now(), it.Task, store.StatusError, "It broke"))
		}, 1, store.QueueError, "It broke"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newQueueHarness(t, map[string][]provider.ScriptTurn{"orchestrator": {turn("", finishCall("success", "Did it"))}})
			q := h.ws.Queue()
			ctx := context.Background()
			added, _ := q.Add(ctx, store.QueueSpec{Task: "Do the thing"})
			claimed, ok, err := q.ClaimNext(ctx)
			if err != nil || !ok || claimed.ID != added.ID {
				t.Fatalf("claim: %v %v", ok, err)
			}
			wantRun := c.crash(h, q, claimed)

			s := NewScheduler(h.open(nil), SchedulerOptions{})
			h.drain(s)
			got := h.item(added.ID)
			if got.Status != c.wantStatus || got.Summary != c.summary {
				t.Fatalf("item after recovery %+v", got)
			}
			if wantRun != "" && got.RunID != wantRun {
				t.Fatalf("item ran as %s, want its surviving run %s", got.RunID, wantRun)
			}
			if n := len(h.runs()); n != c.wantRuns {
				t.Fatalf("%d runs in the workspace, want %d (no duplicate dispatch)", n, c.wantRuns)
			}
		})
	}
}

func TestQueueBriefingListsWhatRanWhileWaitingCapped(t *testing.T) {
	h := newQueueHarness(t, nil)
	queued := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	h.finishedRun(queued.Add(-time.Hour), "Before it was queued", store.StatusSuccess, "old")
	var after []string
	for i := 1; i <= 25; i++ {
		after = append(after, h.finishedRun(queued.Add(time.Duration(i)*time.Minute), fmt.Sprintf("Task %d\nsecond line", i), store.StatusSuccess, fmt.Sprintf("Summary %d", i)))
	}
	own := h.finishedRun(queued.Add(30*time.Minute), "Its own attempt", store.StatusNeedsClarification, "Waiting")
	live := queued.Add(40 * time.Minute)
	liveID, _ := h.ws.CreateRun(live)
	_ = h.ws.WriteMeta(&store.Meta{RunID: liveID, Task: "Still running", Status: store.StatusRunning, StartedAt: live})

	item := store.QueueItem{ID: "q-1-1", Task: "Later task", CreatedAt: queued, Runs: []string{own}}
	b := QueueBriefing(h.ws, item)
	lines := strings.Split(b, "\n")
	if lines[0] != BriefingHeader {
		t.Fatalf("briefing starts %q", lines[0])
	}
	var listed []string
	for _, l := range lines {
		if strings.HasPrefix(l, "- ") {
			listed = append(listed, l)
		}
	}
	if len(listed) != MaxBriefingRuns {
		t.Fatalf("%d runs listed, want %d:\n%s", len(listed), MaxBriefingRuns, b)
	}
	// The latest twenty, oldest first: runs 6..25.
	if want := "- " + after[5] + " (success): Task 6 — Summary 6"; listed[0] != want {
		t.Fatalf("first line %q, want %q", listed[0], want)
	}
	if !strings.HasPrefix(listed[19], "- "+after[24]+" ") {
		t.Fatalf("last line %q", listed[19])
	}
	for _, absent := range []string{"Before it was queued", "Its own attempt", "Still running", "second line"} {
		if strings.Contains(b, absent) {
			t.Fatalf("briefing mentions %q:\n%s", absent, b)
		}
	}
	if !strings.Contains(b, "Only the latest 20") || !strings.Contains(b, "2026-03-01 09:00 UTC") {
		t.Fatalf("briefing lacks the cap note or the queue time:\n%s", b)
	}
	if QueueBriefing(h.ws, store.QueueItem{ID: "q-1-2", Task: "x", CreatedAt: queued.Add(time.Hour)}) != "" {
		t.Fatal("nothing finished after this item was queued: no briefing")
	}
}

// gated holds the first model call until the gate opens.
type gated struct {
	provider.Provider
	gate chan struct{}
	once sync.Once
}

func (g *gated) Complete(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	g.once.Do(func() {
		select {
		case <-g.gate:
		case <-ctx.Done():
		}
	})
	return g.Provider.Complete(ctx, req, onDelta)
}

func TestSubmitOrQueue(t *testing.T) {
	h := newQueueHarness(t, map[string][]provider.ScriptTurn{"orchestrator": {
		turn("", finishCall("success", "first")),
		turn("", finishCall("success", "second")),
	}})
	g := &gated{Provider: h.rec, gate: make(chan struct{})}
	s := NewScheduler(h.open(g), SchedulerOptions{})
	ctx := context.Background()

	runID, queued, err := s.SubmitOrQueue(ctx, Submission{Task: "Start now"})
	if err != nil || runID == "" || queued != nil {
		t.Fatalf("idle submit: %q %v %v", runID, queued, err)
	}
	runID2, queued2, err := s.SubmitOrQueue(ctx, Submission{Task: "Then this", Effort: "thorough"})
	if err != nil || runID2 != "" || queued2 == nil || queued2.Status != store.QueueWaiting || queued2.Effort != "thorough" {
		t.Fatalf("busy submit: %q %+v %v", runID2, queued2, err)
	}
	close(g.gate)
	h.drain(s)
	if m, _ := h.ws.ReadMeta(runID); m.Status != store.StatusSuccess || m.Result.Summary != "first" {
		t.Fatalf("the direct run %+v", m)
	}
	it := h.item(queued2.ID)
	if it.Status != store.QueueDone || it.Summary != "second" || it.RunID == runID {
		t.Fatalf("the queued item %+v", it)
	}
	if m, _ := h.ws.ReadMeta(it.RunID); m.Effort != "thorough" {
		t.Fatalf("the queued run's effort is %s", m.Effort)
	}
}

func TestStartedSchedulerPicksUpAdds(t *testing.T) {
	h := newQueueHarness(t, map[string][]provider.ScriptTurn{"orchestrator": {turn("", finishCall("success", "done"))}})
	s := NewScheduler(h.open(nil), SchedulerOptions{Poll: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes, stop := s.Watch()
	defer stop()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil {
		t.Fatal("a second Start on a running scheduler must fail")
	}
	it, err := s.Add(ctx, store.QueueSpec{Task: "Wake up"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second) // a hang guard, not a timing assertion
	for h.item(it.ID).Status != store.QueueDone {
		select {
		case <-changes:
		case <-deadline:
			t.Fatalf("the item never ran: %+v (problem %v)", h.item(it.ID), s.Problem())
		}
	}
	cancel()
	<-s.Done()
}

func TestSchedulerReportsAMalformedQueue(t *testing.T) {
	h := newQueueHarness(t, nil)
	s := NewScheduler(h.open(nil), SchedulerOptions{})
	if err := writeQueueFile(h.ws.Queue().Path(), "{not json"); err != nil {
		t.Fatal(err)
	}
	err := s.Drain(context.Background())
	if !errors.Is(err, store.ErrQueueCorrupt) {
		t.Fatalf("Drain over a malformed queue = %v", err)
	}
}

func writeQueueFile(path, body string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(body), 0o644)
}
