package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// budgetScript: the orchestrator delegates to a coder whose one turn
// reads three files, then whose next turns read one file each.
func budgetScript() map[string][]provider.ScriptTurn {
	read := func(p string) provider.ScriptToolCall { return call("read_file", map[string]string{"path": p}) }
	return map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", call("agent", map[string]string{"role": "coder", "task": "read the files"})),
			turn("", finishCall("success", "all read")),
		},
		"coder": {
			turn("", read("f1"), read("f2"), read("f3")),
			turn("", read("f4")),
			turn("", read("f5")),
			turn("", finishCall("success", "read five")),
		},
	}
}

// budgetHarness is a harness whose scripted provider keeps its position
// in the checkpoint, so a resume replays nothing.
func budgetHarness(t *testing.T, b Budget) *harness {
	t.Helper()
	h := newHarness(t, testGuild(t), budgetScript())
	h.opts.Provider = provider.NewScripted(&provider.Script{Roles: budgetScript()}, 0)
	h.opts.Deployment.Executor.Budget = b
	return h
}

// readPaths are the paths of the read_file calls in the log, in order.
func readPaths(t *testing.T, evs []event.Event) []string {
	t.Helper()
	var out []string
	for _, e := range find(evs, event.ToolCall) {
		var p event.ToolCallPayload
		_ = e.Decode(&p)
		if p.Tool == "read_file" {
			var a struct{ Path string }
			_ = json.Unmarshal([]byte(p.Arguments), &a)
			out = append(out, a.Path)
		}
	}
	return out
}

// TestBudgetToolCallsStopMidTurnAndResume: the limit is reached inside a
// child's turn; the run ends budget_exceeded with the checkpoint kept,
// and a resume with a higher limit dispatches the rest of that turn, once.
func TestBudgetToolCallsStopMidTurnAndResume(t *testing.T) {
	h := budgetHarness(t, Budget{MaxToolCalls: 3}) // the agent call and two reads
	out, evs, meta := h.run()
	if out.Status != store.StatusError || out.Card == nil || out.Card.Error.Kind != BudgetErrorKind {
		t.Fatalf("outcome %+v", out)
	}
	msg := out.Card.Error.Message
	if !strings.Contains(msg, "it made 3 tool calls, and its limit is 3 tool calls (the built-in default)") ||
		!strings.Contains(msg, "`guildhall resume "+out.RunID+" --max-tool-calls 6`") {
		t.Errorf("message: %s", msg)
	}
	if got := strings.Join(readPaths(t, evs), ","); got != "f1,f2" {
		t.Errorf("reads before the stop: %s", got)
	}
	if !BudgetStopped(meta) || meta.Error.Message != msg || len(meta.Error.Detail) == 0 {
		t.Errorf("meta: %+v %+v", meta, meta.Error)
	}
	var last event.RunStatusPayload
	_ = find(evs, event.RunStatus)[len(find(evs, event.RunStatus))-1].Decode(&last)
	if last.Status != store.StatusError || last.Card == nil || last.Card.Error.Kind != BudgetErrorKind {
		t.Errorf("the log's last run_status: %+v", last)
	}
	ws := testWS(h.dir)
	if err := Resumable(ws, out.RunID, h.opts.Guild); err != nil {
		t.Fatalf("a budget-stopped run must be resumable: %v", err)
	}
	// Not marked interrupted at startup, checkpoint kept.
	if rec, err := Reconcile(ws, h.opts.Guild, time.Now()); err != nil || len(rec.Interrupted) != 0 || rec.Resumable != "" {
		t.Errorf("reconcile: %+v %v", rec, err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, ".orchestration/runs", out.RunID, "state.json")); err != nil {
		t.Fatalf("the checkpoint is gone: %v", err)
	}

	// The totals survive: 3 used, a limit of 5 lets two more calls run.
	h.opts.Deployment.Executor.Budget.MaxToolCalls = 5
	out2, evs2 := resumeRun(t, h, out.RunID, budgetScript())
	if out2.Card == nil || out2.Card.Error == nil || !strings.Contains(out2.Card.Error.Message, "made 5 tool calls") {
		t.Fatalf("second stop: %+v", out2.Card)
	}
	if got := strings.Join(readPaths(t, evs2), ","); got != "f1,f2,f3,f4" {
		t.Errorf("reads after the first resume: %s", got)
	}
	h.opts.Deployment.Executor.Budget.MaxToolCalls = 0
	out3, evs3 := resumeRun(t, h, out.RunID, budgetScript())
	if out3.Status != store.StatusSuccess {
		t.Fatalf("final outcome %+v", out3)
	}
	if got := strings.Join(readPaths(t, evs3), ","); got != "f1,f2,f3,f4,f5" {
		t.Errorf("every read ran exactly once: %s", got)
	}
	m, _ := ws.ReadMeta(out.RunID)
	if m.Status != store.StatusSuccess || m.Error != nil || m.Result == nil || m.Result.Summary != "all read" {
		t.Errorf("the finished run's meta: %+v", m)
	}
}

// TestBudgetTokens: each model call reports 110 tokens; a limit of 250 is
// reached with the third call, and the run stops at the next safe point.
func TestBudgetTokens(t *testing.T) {
	h := budgetHarness(t, Budget{MaxTokens: 250})
	out, evs, _ := h.run()
	if out.Card == nil || out.Card.Error == nil || out.Card.Error.Kind != BudgetErrorKind ||
		!strings.Contains(out.Card.Error.Message, "used 330 tokens") {
		t.Fatalf("outcome %+v", out.Card)
	}
	if n := len(find(evs, event.LLMCall)); n != 3 {
		t.Errorf("%d model calls, want 3", n)
	}
}

// TestBudgetFinishIsNeverHeldBack: a role that calls finish once the
// limit is reached still finishes.
func TestBudgetFinishIsNeverHeldBack(t *testing.T) {
	h := newHarness(t, testGuild(t), map[string][]provider.ScriptTurn{
		"orchestrator": {turn("", call("read_file", map[string]string{"path": "x"}), finishCall("success", "done"))},
	})
	h.opts.Deployment.Executor.Budget = Budget{MaxToolCalls: 1}
	if out, _, _ := h.run(); out.Status != store.StatusSuccess {
		t.Fatalf("outcome %+v", out.Card)
	}
}

// TestBudgetWallHoldsPauses: the working time leaves out what was held
// (paused, suspended) and adds the earlier executions'.
func TestBudgetWallHoldsPauses(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	var b budgetState
	b.resume(&Usage{WallMs: 5000})
	_ = b.usage(now)
	now = now.Add(2 * time.Second)
	release := b.hold(clock)
	now = now.Add(time.Hour)
	if u := b.usage(now); u.WallMs != 7000 {
		t.Errorf("while held: %d ms", u.WallMs)
	}
	release()
	now = now.Add(3 * time.Second)
	if u := b.usage(now); u.WallMs != 10000 {
		t.Errorf("after the hold: %d ms", u.WallMs)
	}
}

// TestBudgetDeploymentValues: the defaults, a file's 0 (no limit), and a
// negative value refused at its position.
func TestBudgetDeploymentValues(t *testing.T) {
	if b := DefaultDeployment().Executor.Budget; b != (Budget{MaxToolCalls: 2000}) {
		t.Errorf("defaults %+v", b)
	}
	d := parseDeployment(t, `{"executor": {"budget": {"maxToolCalls": 0, "maxTokens": 500000}}}`)
	if b := d.Executor.Budget; b != (Budget{MaxTokens: 500000}) || d.Origin("executor.budget.maxTokens") != "d.json" {
		t.Errorf("from a file: %+v", b)
	}
	_, err := ParseDeployment("d.json", []byte("{\"executor\": {\"budget\": {\n  \"maxWallSeconds\": -1}}}"))
	if err == nil || !strings.Contains(err.Error(), "d.json:2:") || !strings.Contains(err.Error(), "executor.budget.maxWallSeconds must be 0 (no limit) or a positive number") {
		t.Errorf("negative: %v", err)
	}
}
