package web

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// A resumed run becomes the live view at its run_resumed event, built once
// from the lines of its log before that event; what follows comes from the
// session, once each, even when the log already holds it.
func TestResumedRunBecomesTheLiveView(t *testing.T) {
	ws, id, path, lw := newLoggedRun(t)
	var evs []event.Event
	add := func(typ event.Type, p any) event.Event {
		e, err := event.New(t0.Add(time.Duration(len(evs))*time.Second), typ, p)
		if err != nil {
			t.Fatal(err)
		}
		if e.Seq, err = lw.Append(e.AppendJSON(nil)); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
		return e
	}
	add(event.RunStarted, event.RunStartedPayload{RunID: id, Task: "t", EntryRole: "orchestrator"})
	add(event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "t"})
	add(event.ToolCall, event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", CallID: "c1", Arguments: `{"path":"a"}`})
	add(event.ToolResult, event.ToolResultPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", CallID: "c1", Kind: "success", Result: json.RawMessage(`{"kind":"success"}`)})
	resumed := add(event.RunResumed, event.RunResumedPayload{RunID: id, ResumedFrames: 1, ResumedRoleIDs: []string{"orchestrator-0-1"}})
	// Already in the log when the server reads it, but not yet delivered.
	later := add(event.ToolCall, event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "list_directory", CallID: "c2", Arguments: `{"path":"."}`})
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}

	c := newViewCache(ws, render.LabelSet{})
	if got := c.applyLive(resumed); got != id {
		t.Fatalf("after run_resumed the live run is %q, want %s", got, id)
	}
	if c.live.logPath == "" {
		t.Fatal("the resumed run's log was read before anyone asked for its view")
	}
	live, err := c.get(id)
	if err != nil || live != c.live {
		t.Fatalf("a flow request for the resumed run got another view (%v)", err)
	}
	if got, want := envelopeOf(t, live), envelopeOf(t, mustBuild(t, id, path, resumed.Seq+1)); got != want {
		t.Fatalf("the live view after run_resumed:\n%s\nwant the log's lines up to it:\n%s", got, want)
	}
	c.applyLive(later)
	if got, want := envelopeOf(t, live), envelopeOf(t, mustBuild(t, id, path, -1)); got != want {
		t.Fatalf("the live view after the next event:\n%s\nwant the whole log:\n%s", got, want)
	}

	// Events that arrive before anyone asks are read from the log then,
	// once each.
	c2 := newViewCache(ws, render.LabelSet{})
	c2.applyLive(resumed)
	c2.applyLive(later)
	v2, err := c2.get(id)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := envelopeOf(t, v2), envelopeOf(t, mustBuild(t, id, path, -1)); got != want {
		t.Fatalf("the live view read after two events:\n%s\nwant the whole log:\n%s", got, want)
	}
	// A second run_resumed of the live run (the same session resuming
	// again) keeps the view it has.
	again := resumed
	again.Seq = later.Seq + 1
	c.applyLive(again)
	if c.live != live {
		t.Fatal("a second run_resumed rebuilt the live view")
	}

	// A past-run build that finds the run went live meanwhile hands its
	// view, the whole log, to the live view instead of reading the log a
	// second time; the events the build holds are not applied again.
	c3 := newViewCache(ws, render.LabelSet{})
	c3.applyLive(resumed)
	v3, err := c3.build(id, path)
	if err != nil || v3 != c3.live {
		t.Fatalf("a build of the run that went live returned another view (%v)", err)
	}
	whole := envelopeOf(t, mustBuild(t, id, path, -1))
	if got := envelopeOf(t, v3); got != whole {
		t.Fatalf("the live view given the build:\n%s\nwant the whole log:\n%s", got, whole)
	}
	c3.applyLive(later)
	if got := envelopeOf(t, v3); got != whole {
		t.Fatalf("an event the build held was applied again:\n%s\nwant the whole log:\n%s", got, whole)
	}
}

// A run_resumed naming no valid run changes nothing.
func TestRunResumedWithABadRunIDIsIgnored(t *testing.T) {
	c := newViewCache(store.Workspace{Dir: t.TempDir()}, render.LabelSet{})
	for _, bad := range []string{"", "../run-20260102-030405", "run-2026", "run-20261399-000000"} {
		e, err := event.New(time.Now(), event.RunResumed, event.RunResumedPayload{RunID: bad})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.applyLive(e); got != "" || c.live != nil {
			t.Fatalf("run_resumed of %q made %q live", bad, got)
		}
	}
}

// newLoggedRun creates a run in a fresh workspace and opens its log.
func newLoggedRun(t *testing.T) (ws store.Workspace, id, path string, lw *store.LogWriter) {
	t.Helper()
	ws = store.Workspace{Dir: t.TempDir()}
	id, err := ws.CreateRun(t0)
	if err != nil {
		t.Fatal(err)
	}
	if path, err = ws.LogPath(id); err != nil {
		t.Fatal(err)
	}
	if lw, err = store.OpenLog(path); err != nil {
		t.Fatal(err)
	}
	return ws, id, path, lw
}

// readingRun adds, through add, the events of run id: its start, and an
// orchestrator that reads a file n times.
func readingRun(id string, n int, add func(event.Type, any)) {
	add(event.RunStarted, event.RunStartedPayload{RunID: id, Task: "t", EntryRole: "orchestrator"})
	add(event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "t"})
	for i := range n {
		cid := "c" + strconv.Itoa(i)
		add(event.ToolCall, event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", CallID: cid, Arguments: `{"path":"a"}`})
		add(event.ToolResult, event.ToolResultPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", CallID: cid, Kind: "success", Result: json.RawMessage(`{"kind":"success"}`)})
	}
}

// t0 is when the runs of these tests start.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func mustBuild(t *testing.T, id, path string, before int64) *runView {
	t.Helper()
	v, err := buildView(id, path, before)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func envelopeOf(t *testing.T, v *runView) string {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	b, err := json.Marshal(v.model.Since(0, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Requests that arrive together for a past run share one build of its
// view, instead of each reading the whole log.
func TestConcurrentRequestsShareOneBuild(t *testing.T) {
	ws, id, _, lw := newLoggedRun(t)
	readingRun(id, 20000, func(typ event.Type, p any) {
		e, err := event.New(t0, typ, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lw.Append(e.AppendJSON(nil)); err != nil {
			t.Fatal(err)
		}
	})
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	c := newViewCache(ws, render.LabelSet{})
	const n = 8
	views := make(chan *runView, n)
	start := make(chan struct{})
	for range n {
		go func() {
			<-start
			v, err := c.get(id)
			if err != nil {
				t.Error(err)
			}
			views <- v
		}()
	}
	close(start)
	first := <-views
	for range n - 1 {
		if v := <-views; v != first {
			t.Fatal("concurrent requests for one run built separate views")
		}
	}
	if len(c.building) != 0 {
		t.Fatalf("%d builds left registered", len(c.building))
	}
}

// A run that starts while nobody watches is not folded: its events are
// counted, and its view is read from the log at the first request, then
// follows the session. A run whose log is not on disk is folded at once.
func TestStartedRunIsFoldedOnlyOnceSomeoneAsks(t *testing.T) {
	ws, id, path, lw := newLoggedRun(t)
	c := newViewCache(ws, render.LabelSet{})
	n := 0
	emit := func(typ event.Type, p any) {
		e, err := event.New(t0.Add(time.Duration(n)*time.Second), typ, p)
		if err != nil {
			t.Fatal(err)
		}
		if e.Seq, err = lw.Append(e.AppendJSON(nil)); err != nil {
			t.Fatal(err)
		}
		n++
		c.applyLive(e) // appended, then published, as the runner does
	}
	readingRun(id, 3, emit)
	if c.liveID() != id {
		t.Fatalf("the live run is %q, want %s", c.liveID(), id)
	}
	if c.live.logPath == "" || len(c.live.model.Operations) != 0 {
		t.Fatal("the started run was folded before anyone asked for its view")
	}
	live, err := c.get(id)
	if err != nil || live != c.live {
		t.Fatalf("a flow request for the live run got another view (%v)", err)
	}
	if got, want := envelopeOf(t, live), envelopeOf(t, mustBuild(t, id, path, -1)); got != want {
		t.Fatalf("the live view at the first request:\n%s\nwant the log so far:\n%s", got, want)
	}
	emit(event.RoleFinished, event.RoleFinishedPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Status: "success", Summary: "done"})
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := envelopeOf(t, live), envelopeOf(t, mustBuild(t, id, path, -1)); got != want {
		t.Fatalf("the live view after a later event:\n%s\nwant the whole log:\n%s", got, want)
	}

	// No log on disk: folded as the events come.
	c2 := newViewCache(store.Workspace{Dir: t.TempDir()}, render.LabelSet{})
	e, _ := event.New(t0, event.RunStarted, event.RunStartedPayload{RunID: id, Task: "t", EntryRole: "orchestrator"})
	c2.applyLive(e)
	if c2.live == nil || c2.live.logPath != "" {
		t.Fatal("a run with no log on disk was left to be read from it")
	}
}
