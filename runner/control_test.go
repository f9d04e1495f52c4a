package runner

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// hooked runs fn before the n-th model call of role (1-based).
type hooked struct {
	provider.Provider
	mu    sync.Mutex
	count map[string]int
	hooks map[string]map[int]func()
}

func (h *hooked) on(role string, n int, fn func()) {
	if h.hooks == nil {
		h.hooks, h.count = map[string]map[int]func(){}, map[string]int{}
	}
	if h.hooks[role] == nil {
		h.hooks[role] = map[int]func(){}
	}
	h.hooks[role][n] = fn
}

func (h *hooked) Complete(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	h.mu.Lock()
	h.count[req.Role]++
	fn := h.hooks[req.Role][h.count[req.Role]]
	h.mu.Unlock()
	if fn != nil {
		fn()
	}
	return h.Provider.Complete(ctx, req, onDelta)
}

// threeLevelGuild has orchestrator → planner → coder.
func threeLevelGuild(t *testing.T) *Guild {
	g := testGuild(t)
	g.Roles["planner"] = &Role{Name: "planner", Prompt: "[role:planner]", Tools: []string{"agent", "finish"}}
	g.Roles["inquiry_responder"] = &Role{Name: "inquiry_responder", Prompt: "[role:inquiry_responder]", Tools: []string{"finish", "read_file"}}
	return g
}

func startRun(t *testing.T, h *harness) (*Run, chan Outcome) {
	t.Helper()
	r, err := Create(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Outcome, 1)
	go func() {
		out, err := r.Execute(context.Background())
		if err != nil {
			t.Errorf("execute: %v", err)
		}
		done <- out
	}()
	return r, done
}

// startRunActing starts the harness's run and has act do something to it
// just before role's n-th model call. hk lets a test add hooks later.
func startRunActing(t *testing.T, h *harness, role string, n int, act func(r *Run)) (r *Run, hk *hooked, done chan Outcome) {
	t.Helper()
	hk = &hooked{Provider: h.opts.Provider}
	h.opts.Provider = hk
	ready := make(chan struct{}) // r is set before any hook reads it
	hk.on(role, n, func() { <-ready; act(r) })
	r, done = startRun(t, h)
	close(ready)
	return r, hk, done
}

// oneInterrupt is the run's only interrupt and its resolution; a run with
// another number of either fails the test.
func oneInterrupt(t *testing.T, evs []event.Event) (event.InterruptPayload, event.InterruptResolvedPayload) {
	t.Helper()
	ints, res := find(evs, event.Interrupt), find(evs, event.InterruptResolved)
	if len(ints) != 1 || len(res) != 1 {
		t.Fatalf("want one interrupt pair: %v", types(evs))
	}
	var ip event.InterruptPayload
	var rp event.InterruptResolvedPayload
	if err := ints[0].Decode(&ip); err != nil {
		t.Fatal(err)
	}
	if err := res[0].Decode(&rp); err != nil {
		t.Fatal(err)
	}
	return ip, rp
}

func wait(t *testing.T, done chan Outcome) Outcome {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(20 * time.Second):
		t.Fatal("run did not end")
		return Outcome{}
	}
}

func TestPlanModificationUnwindsTwoLevels(t *testing.T) {
	g := threeLevelGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", call("agent", map[string]string{"role": "planner", "task": "plan"})),
			turn("", finishCall("success", "replanned")),
		},
		"planner": {
			turn("", call("agent", map[string]string{"role": "coder", "task": "code"})),
			turn("", finishCall("success", "planner should not get here")),
		},
		"coder": {
			turn("", call("read_file", map[string]string{"path": "a"}), call("read_file", map[string]string{"path": "b"})),
			turn("", finishCall("success", "coder should not get here")),
		},
	})
	h.opts.Deployment.Executor.InterruptTriggers = &InterruptTriggers{PlanOwnerRole: "orchestrator"}
	_, _, done := startRunActing(t, h, "coder", 1, func(r *Run) {
		if err := r.RequestInterrupt("plan_modification", "Use Rust instead"); err != nil {
			t.Error(err)
		}
	})
	out := wait(t, done)
	if out.Status != "success" {
		t.Fatalf("status %s", out.Status)
	}
	evs := readEvents(t, testWS(h.dir), out.RunID)
	var pm event.PlanModificationPayload
	pms := find(evs, event.PlanModification)
	if len(pms) != 1 {
		t.Fatalf("plan_modification events: %v", types(evs))
	}
	_ = pms[0].Decode(&pm)
	if pm.Target != "orchestrator-0-1" || strings.Join(pm.Aborted, ",") != "planner-1-2,coder-2-3" {
		t.Fatalf("plan_modification = %+v", pm)
	}
	for _, e := range find(evs, event.RoleFinished) {
		var p event.RoleFinishedPayload
		_ = e.Decode(&p)
		if p.Role != "orchestrator" && (p.Error == nil || p.Error.Kind != "interrupted") {
			t.Errorf("%s finished %+v, want interrupted", p.RoleID, p)
		}
	}
	// The owner received the marked message before its next call.
	reqs := h.rec.byRole("orchestrator")
	found := false
	for _, m := range reqs[len(reqs)-1].Messages {
		if strings.HasPrefix(m.Content, "[Operator plan modification") && strings.Contains(m.Content, "Use Rust instead") {
			found = true
		}
	}
	if !found {
		t.Fatalf("owner never received the plan modification")
	}
}

func TestInquiryAnsweredMidRun(t *testing.T) {
	g := threeLevelGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator":      {turn("", call("read_file", map[string]string{"path": "x"})), turn("", finishCall("success", "done"))},
		"inquiry_responder": {turn("", finishCall("success", "It is reading file x."))},
	})
	h.opts.Deployment.Executor.InquiryHandlerRole = "inquiry_responder"
	_, _, done := startRunActing(t, h, "orchestrator", 1, func(r *Run) { _ = r.RequestInterrupt("inquiry", "What are you doing?") })
	out := wait(t, done)
	evs := readEvents(t, testWS(h.dir), out.RunID)
	ip, rp := oneInterrupt(t, evs)
	if ip.Trigger != "inquiry" || ip.Message != "What are you doing?" || ip.Target != "orchestrator-0-1" {
		t.Fatalf("interrupt = %+v", ip)
	}
	if rp.Action != "answered" || rp.Summary != "It is reading file x." {
		t.Fatalf("interrupt_resolved = %+v", rp)
	}
	if out.Status != "success" {
		t.Fatalf("the run must continue after an inquiry: %s", out.Status)
	}
}

func TestInquiryDroppedWithoutHandler(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {turn("", call("read_file", map[string]string{"path": "x"})), turn("", finishCall("success", "done"))},
	})
	_, _, done := startRunActing(t, h, "orchestrator", 1, func(r *Run) { _ = r.RequestInterrupt("inquiry", "hello?") })
	out := wait(t, done)
	evs := readEvents(t, testWS(h.dir), out.RunID)
	if len(find(evs, event.InquiryDropped)) != 1 || out.Status != "success" {
		t.Fatalf("want inquiry_dropped and success: %s %v", out.Status, types(evs))
	}
}

func TestPauseResumeTerminate(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", call("read_file", map[string]string{"path": "x"})),
			turn("", call("read_file", map[string]string{"path": "y"})),
			turn("", finishCall("success", "never")),
		},
	})
	r, hk, done := startRunActing(t, h, "orchestrator", 1, (*Run).RequestPause)
	deadline := time.Now().Add(10 * time.Second)
	for !r.Paused() {
		if time.Now().After(deadline) {
			t.Fatal("run never paused")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ws := testWS(h.dir)
	if m, _ := ws.ReadMeta(r.ID()); m.Status != store.StatusPaused {
		t.Fatalf("meta status while paused = %s", m.Status)
	}
	if !r.ResumeFromPause() {
		t.Fatal("resume should report the run was paused")
	}
	hk.on("orchestrator", 2, nil)
	r.RequestTerminate()
	out := wait(t, done)
	m, _ := ws.ReadMeta(r.ID())
	if m.Status != store.StatusInterrupted || m.Error == nil || m.Error.Kind != "interrupted" {
		t.Fatalf("terminated run meta = %+v", m)
	}
	if out.Stopped {
		t.Fatal("a terminated run is final, not resumable")
	}
	evs := readEvents(t, ws, r.ID())
	var statuses []string
	for _, e := range find(evs, event.RunStatus) {
		var p event.RunStatusPayload
		_ = e.Decode(&p)
		statuses = append(statuses, p.Status)
	}
	if got := strings.Join(statuses, ","); got != "paused,running,interrupted" {
		t.Fatalf("run_status sequence = %s", got)
	}
}

func (h *hooked) SaveState() json.RawMessage { return h.Provider.(Stateful).SaveState() }
func (h *hooked) RestoreState(b json.RawMessage) error {
	return h.Provider.(Stateful).RestoreState(b)
}
func (r *recorder) SaveState() json.RawMessage { return r.Provider.(Stateful).SaveState() }
func (r *recorder) RestoreState(b json.RawMessage) error {
	return r.Provider.(Stateful).RestoreState(b)
}

func TestParkedQuestionEndsQueuedRun(t *testing.T) {
	g := threeLevelGuild(t)
	g.Roles["orchestrator"].Tools = append(g.Roles["orchestrator"].Tools, "ask_human")
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", call("agent", map[string]string{"role": "planner", "task": "plan"})),
			turn("", finishCall("success", "never")),
		},
		"planner": {turn("I need to know.", call("ask_human", map[string]string{"question": "Which database?"}))},
	})
	g.Roles["planner"].Tools = append(g.Roles["planner"].Tools, "ask_human")
	h.opts.NoInput, h.opts.Park = false, true
	out, evs, meta := h.run()
	if out.Status != store.StatusNeedsClarification || out.Parked == nil || out.Parked.Question != "Which database?" {
		t.Fatalf("outcome = %+v", out)
	}
	if meta.Status != store.StatusNeedsClarification {
		t.Fatalf("meta status %s", meta.Status)
	}
	if n := len(find(evs, event.RoleFinished)); n != 2 {
		t.Fatalf("every started role must finish: %v", types(evs))
	}

	// Once a writer (the coder) has started, a question waits as usual.
	h2 := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", call("agent", map[string]string{"role": "coder", "task": "code"})),
			turn("", call("ask_human", map[string]string{"question": "Ship it?"})),
			turn("", finishCall("success", "shipped")),
		},
		"coder": {turn("", finishCall("success", "coded"))},
	})
	h2.opts.Park = true
	h2.onFirstQuestion(func(broker *Broker, q event.AskHumanPayload) { _ = broker.Answer(q.ID, "yes", "terminal") })
	out2, _, _ := h2.run()
	if out2.Status != "success" || out2.Parked != nil {
		t.Fatalf("a question after a writer started must wait, got %+v", out2)
	}
}
