package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

func waitOutcome(t *testing.T, s *Session, limit time.Duration) Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	out, err := s.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v (health %+v)", err, s.Health())
	}
	return out
}

func statuses(t *testing.T, evs []event.Event) string {
	t.Helper()
	var out []string
	for _, e := range find(evs, event.RunStatus) {
		var p event.RunStatusPayload
		_ = e.Decode(&p)
		out = append(out, p.Status)
	}
	return strings.Join(out, ",")
}

// TestNeverAnsweredEndpointIsASetupProblem: an endpoint that never
// answered in this process is not suspended and probed forever. The run
// ends at once, marked, with no checkpoint to resume, and the outcome says
// what was tried.
func TestNeverAnsweredEndpointIsASetupProblem(t *testing.T) {
	down := fakellm.New()
	defer down.Close()
	down.SetDown(true)
	for name, base := range map[string]string{"closed port": fakellm.RefusedURL(t), "HTTP 503 everywhere": down.BaseURL()} {
		t.Run(name, func(t *testing.T) {
			s, dir := faultSessionWith(t, base, ProviderHealth{Retries: 3, SuspendAfter: 3, ProbeSeconds: 1}, false)
			id, err := s.Submit(context.Background(), Submission{Task: "go"})
			if err != nil {
				t.Fatal(err)
			}
			out := waitOutcome(t, s, 20*time.Second)
			if out.Endpoint == nil || out.Status != store.StatusError || out.Card == nil || out.Card.Error == nil || out.Card.Error.Kind != EndpointErrorKind {
				t.Fatalf("outcome = %+v", out)
			}
			msg := out.Card.Error.Message
			if !strings.Contains(msg, base) || !strings.Contains(msg, "POST "+base+"/chat/completions") || !strings.Contains(msg, "Usual causes") {
				t.Errorf("the message must name the URL and what was tried:\n%s", msg)
			}
			ws := testWS(dir)
			evs := readEvents(t, ws, id)
			if got := statuses(t, evs); got != "error" {
				t.Errorf("run_status sequence = %s, want error (never suspended)", got)
			}
			meta, _ := ws.ReadMeta(id)
			if meta.Status != store.StatusError || meta.Error == nil || meta.Error.Kind != EndpointErrorKind || meta.Suspension != nil {
				t.Errorf("meta = %+v", meta)
			}
			if _, err := os.Stat(filepath.Join(dir, ".orchestration", "runs", id, "state.json")); !os.IsNotExist(err) {
				t.Error("a run whose endpoint never answered must leave no checkpoint to resume")
			}
			rec, err := s.Reconcile()
			if err != nil || rec.Resumable != "" {
				t.Errorf("reconcile offers %q to resume (%v)", rec.Resumable, err)
			}
			if h := s.Health(); h.State == HealthSuspended {
				t.Errorf("health = %+v", h)
			}
		})
	}
}

// TestEmptyReplySaysWhyAndIsAnAnswer: an empty reply is retried with its
// reason on the event, and it counts as the endpoint answering (the
// model did, just uselessly).
func TestEmptyReplySaysWhyAndIsAnAnswer(t *testing.T) {
	f := fakellm.New()
	defer f.Close()
	f.Queue("orchestrator", fakellm.Reply{}, fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "ok"}}}})
	s, dir := faultSessionWith(t, f.BaseURL(), ProviderHealth{Retries: 3}, false)
	id, err := s.Submit(context.Background(), Submission{Task: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if out := waitOutcome(t, s, 20*time.Second); out.Status != store.StatusSuccess || out.Endpoint != nil {
		t.Fatalf("outcome = %+v", out)
	}
	fails := find(readEvents(t, testWS(dir), id), event.ProviderFailure)
	if len(fails) != 1 {
		t.Fatalf("%d provider failures, want 1", len(fails))
	}
	var p event.ProviderFailurePayload
	_ = fails[0].Decode(&p)
	if p.Category != "malformed" || !p.Retrying || !strings.Contains(p.Message, "ended its turn at once, with no text and no tool call") ||
		!strings.Contains(p.Message, `finish_reason "stop"`) {
		t.Fatalf("empty reply failure = %+v", p)
	}
}

// TestPermanentServerErrorStopsAfterBoundedRelapses: the model list says
// the server is fine but every call fails. The run resumes from each
// suspension, fails again, and after maxRelapses it stops with a clear
// card instead of looping forever. Every failure carries the server's own
// message.
func TestPermanentServerErrorStopsAfterBoundedRelapses(t *testing.T) {
	f := fakellm.New()
	defer f.Close()
	queueSimpleRun(f)
	const serverMsg = "Failed to parse tool call arguments as JSON"
	for range 40 {
		f.Inject(fakellm.Fault{Status: 500, Body: `{"error":{"code":500,"message":"` + serverMsg + `","type":"server_error"}}`})
	}
	s, dir := faultSession(t, f, ProviderHealth{Retries: 3, SuspendAfter: 3, ProbeSeconds: 1})
	id, err := s.Submit(context.Background(), Submission{Task: "go"})
	if err != nil {
		t.Fatal(err)
	}
	out := waitOutcome(t, s, 60*time.Second)
	if out.Status != store.StatusError || out.Card == nil || out.Card.Error == nil || out.Card.Error.Kind != "llm_unavailable" {
		t.Fatalf("outcome = %+v", out)
	}
	want := (maxRelapses + 1) * 3
	if msg := out.Card.Error.Message; !strings.Contains(msg, "kept failing") || !strings.Contains(msg, "HTTP 500") ||
		!strings.Contains(msg, "each of the 3 times") || strings.Contains(msg, serverMsg) {
		t.Errorf("card message (no provider text in it) = %s", msg)
	}
	evs := readEvents(t, testWS(dir), id)
	fails := find(evs, event.ProviderFailure)
	if len(fails) != want {
		t.Errorf("%d provider failures, want %d", len(fails), want)
	}
	for _, e := range fails {
		var p event.ProviderFailurePayload
		_ = e.Decode(&p)
		if p.Message != serverMsg || p.StatusCode != 500 {
			t.Fatalf("failure = %+v", p)
		}
	}
	if got, want := statuses(t, evs), "suspended,running,suspended,running,suspended,running,error"; got != want {
		t.Errorf("run_status sequence = %s, want %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, ".orchestration", "runs", id, "state.json")); !os.IsNotExist(err) {
		t.Error("the stopped run is finished: no checkpoint")
	}
}

// TestARecoveryResetsTheRelapseCount: relapses count only while nothing
// succeeds; a good call in between starts the count again.
func TestARecoveryResetsTheRelapseCount(t *testing.T) {
	f := fakellm.New()
	defer f.Close()
	queueSimpleRun(f)
	fault := fakellm.Fault{Status: 500, Body: `{"error":{"message":"flaky"}}`}
	// Two relapses (9 failures), then the orchestrator's first call
	// succeeds; the coder's call then meets two more relapses and succeeds.
	for range 9 {
		f.Inject(fault)
	}
	s, _ := faultSession(t, f, ProviderHealth{Retries: 3, SuspendAfter: 3, ProbeSeconds: 1})
	if _, err := s.Submit(context.Background(), Submission{Task: "go"}); err != nil {
		t.Fatal(err)
	}
	// Queue the second burst once the first reply went out.
	deadline := time.Now().Add(30 * time.Second)
	for len(f.RequestsFor("orchestrator")) < 10 {
		if time.Now().After(deadline) {
			t.Fatal("the orchestrator never got through")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for range 6 {
		f.Inject(fault)
	}
	if out := waitOutcome(t, s, 60*time.Second); out.Status != store.StatusSuccess {
		t.Fatalf("outcome = %+v", out)
	}
}

// TestToolCallsAfterFinishAreRecorded: calls a reply makes after its
// finish are not run, and the log says which and why.
func TestToolCallsAfterFinishAreRecorded(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": {turn("",
		call("read_file", map[string]string{"path": "a.txt"}),
		finishCall("success", "done"),
		call("read_file", map[string]string{"path": "b.txt"}),
		call("agent", map[string]string{"role": "coder", "task": "more"}),
		call("read_file", map[string]string{"path": "c.txt"}),
	)}})
	out, evs, _ := h.run()
	if out.Status != store.StatusSuccess {
		t.Fatalf("status %s", out.Status)
	}
	if n := len(find(evs, event.ToolCall)); n != 2 {
		t.Errorf("%d tool calls logged, want 2 (read_file and finish)", n)
	}
	ign := find(evs, event.ToolCallsIgnored)
	if len(ign) != 1 {
		t.Fatalf("%d tool_calls_ignored events, want 1", len(ign))
	}
	var p event.ToolCallsIgnoredPayload
	_ = ign[0].Decode(&p)
	if p.Count != 3 || p.After != "finish" || p.Role != "orchestrator" || len(p.Tools) != 2 ||
		p.Tools[0] != (event.ToolCount{Tool: "read_file", Count: 2}) || p.Tools[1] != (event.ToolCount{Tool: "agent", Count: 1}) || p.Reason == "" {
		t.Fatalf("ignored = %+v", p)
	}
	// It comes after the finish's result and before the role ends.
	var order []string
	for _, e := range evs {
		switch e.Type {
		case event.ToolResult, event.ToolCallsIgnored, event.RoleFinished:
			order = append(order, string(e.Type))
		}
	}
	if got := strings.Join(order, ","); got != "tool_result,tool_result,tool_calls_ignored,role_finished" {
		t.Errorf("order = %s", got)
	}
}

// TestQueueHoldsWhileTheEndpointNeverAnswered: a queued run whose endpoint
// never answered does not burn the queue: its item waits again at the head,
// nothing else is dispatched, and Drain says why; once the endpoint
// answers, the queue runs as before.
func TestQueueHoldsWhileTheEndpointNeverAnswered(t *testing.T) {
	h := newQueueHarness(t, map[string][]provider.ScriptTurn{"orchestrator": {turn("one done"), turn("two done")}})
	dead := provider.NewOpenAIChat(provider.Config{BaseURL: fakellm.RefusedURL(t)})
	sess := h.open(dead)
	ctx := context.Background()
	q := sess.Workspace().Queue()
	first, err := q.Add(ctx, store.QueueSpec{Task: "first"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := q.Add(ctx, store.QueueSpec{Task: "second"})
	if err != nil {
		t.Fatal(err)
	}
	sched := NewScheduler(sess, SchedulerOptions{})
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = sched.Drain(dctx)
	var held *EndpointError
	if !errors.As(err, &held) || !strings.Contains(err.Error(), "never answered") || !strings.Contains(err.Error(), "holds until the endpoint answers") {
		t.Fatalf("drain = %v", err)
	}
	if it := h.item(first.ID); it.Status != store.QueueWaiting {
		t.Errorf("the first item is %s, want waiting again", it.Status)
	}
	if it := h.item(second.ID); it.Status != store.QueueWaiting || len(it.Runs) != 0 {
		t.Errorf("the second item was dispatched: %+v", it)
	}
	if runs := h.runs(); len(runs) != 1 {
		t.Errorf("runs %v: only the first was tried", runs)
	}
	// The operator points the session at a working endpoint.
	if err := sess.Reconfigure(Endpoint{Deployment: h.d, Provider: h.rec, Answered: true}); err != nil {
		t.Fatal(err)
	}
	h.drain(sched)
	for _, id := range []string{first.ID, second.ID} {
		if it := h.item(id); it.Status != store.QueueDone {
			t.Errorf("%s is %s after the endpoint answered", id, it.Status)
		}
	}
}
