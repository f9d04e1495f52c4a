package runner

import (
	"strings"
	"testing"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
)

func loopGuild(t *testing.T) *Guild {
	g := testGuild(t)
	g.Roles["loop_detector"] = &Role{Name: "loop_detector", Prompt: "[role:loop_detector]",
		Tools: []string{"recent_role_tool_calls", "trigger_interrupt", "finish"}}
	g.Manifests = withDefaults(t, g, "recent_role_tool_calls", "trigger_interrupt")
	return g
}

func loopingTurns(n int, then ...provider.ScriptTurn) []provider.ScriptTurn {
	var out []provider.ScriptTurn
	for i := 0; i < n; i++ {
		out = append(out, turn("", call("read_file", map[string]string{"path": "same.txt"})))
	}
	return append(out, then...)
}

func TestLoopDetectorRedirects(t *testing.T) {
	g := loopGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": loopingTurns(4, turn("", finishCall("success", "stopped looping"))),
		"loop_detector": {
			turn("", call("recent_role_tool_calls", map[string]any{"targetRole": "orchestrator-0-1"})),
			turn("", call("trigger_interrupt", map[string]string{"targetRole": "orchestrator-0-1", "action": "redirect", "reason": "You keep reading same.txt; finish now."})),
			turn("", finishCall("success", "redirected")),
		},
	})
	h.opts.Deployment.Executor.InterruptTriggers = &InterruptTriggers{HandlerRole: "loop_detector", EveryToolCalls: 1}
	h.opts.Effort = "quick" // threshold 1 × 2 = 2 tool calls
	out, evs, _ := h.run()
	if out.Status != "success" {
		t.Fatalf("status %s", out.Status)
	}
	res := find(evs, event.InterruptResolved)
	if len(res) == 0 {
		t.Fatalf("no loop check ran: %v", types(evs))
	}
	var rp event.InterruptResolvedPayload
	_ = res[0].Decode(&rp)
	if rp.Trigger != "loop_check" || rp.Action != "redirect" {
		t.Fatalf("interrupt_resolved = %+v", rp)
	}
	var ip event.InterruptPayload
	_ = find(evs, event.Interrupt)[0].Decode(&ip)
	if ip.Target != "orchestrator-0-1" || ip.Handler != "loop_detector" {
		t.Fatalf("interrupt = %+v", ip)
	}
	found := false
	for _, r := range h.rec.byRole("orchestrator") {
		for _, m := range r.Messages {
			if m.Role == "user" && strings.Contains(m.Content, "You keep reading same.txt") {
				found = true
			}
		}
	}
	if !found {
		t.Fatal("the redirect reason must reach the target as a user message")
	}
	if len(find(evs, event.Observe)) == 0 {
		t.Fatal("the detector's cross-role read should log observe")
	}
	// The detector saw a loop signature: identical hashes.
	for _, e := range find(evs, event.ToolResult) {
		var p event.ToolResultPayload
		_ = e.Decode(&p)
		if p.Tool == "recent_role_tool_calls" && strings.Count(string(p.Result), `"tool":"read_file"`) < 2 {
			t.Fatalf("recent_role_tool_calls = %s", p.Result)
		}
	}
}

func TestLoopDetectorAborts(t *testing.T) {
	g := loopGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", call("agent", map[string]string{"role": "coder", "task": "loop"})),
			turn("", finishCall("success", "recovered from the abort")),
		},
		"coder": loopingTurns(20),
		"loop_detector": {
			turn("", call("trigger_interrupt", map[string]string{"targetRole": "coder-1-2", "action": "abort", "reason": "stuck on same.txt"})),
			turn("", finishCall("success", "aborted")),
		},
	})
	g.Roles["coder"].Tools = append(g.Roles["coder"].Tools, "read_file")
	h.opts.Deployment.Executor.InterruptTriggers = &InterruptTriggers{HandlerRole: "loop_detector", EveryToolCalls: 2}
	h.opts.Effort = "quick"
	out, evs, _ := h.run()
	if out.Status != "success" {
		t.Fatalf("status %s", out.Status)
	}
	for _, e := range find(evs, event.RoleFinished) {
		var p event.RoleFinishedPayload
		_ = e.Decode(&p)
		if p.RoleID == "coder-1-2" && (p.Error == nil || p.Error.Kind != "loop_detected") {
			t.Fatalf("coder finished %+v, want loop_detected", p)
		}
	}
	calls := 0
	for _, r := range h.rec.byRole("coder") {
		_ = r
		calls++
	}
	if calls > 5 {
		t.Fatalf("the coder made %d calls; the abort should stop it after the check at 4 tool calls", calls)
	}
}
