package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
)

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func timeNow() time.Time { return time.Now() }

// rejecting refuses prompts whose size (at 4 characters a token) exceeds
// limit, as an endpoint with a small context window does.
type rejecting struct {
	provider.Provider
	limit  int
	report bool
	seen   [][]provider.Message
}

func (p *rejecting) Complete(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	p.seen = append(p.seen, append([]provider.Message(nil), req.Messages...))
	if est := estimateTokens(req.Messages, 0.25); est > p.limit {
		e := &provider.Error{Category: provider.CategoryContextLength, StatusCode: 400, Err: fmt.Errorf("prompt too long")}
		if p.report {
			e.PromptTokens = est
		}
		return nil, e
	}
	return p.Provider.Complete(ctx, req, onDelta)
}

func usageTurn(prompt int, content string, calls ...provider.ScriptToolCall) provider.ScriptTurn {
	t := turn(content, calls...)
	t.Usage = &provider.ScriptUsage{PromptTokens: prompt, CompletionTokens: 20}
	return t
}

func TestChildHandsOffUnderPressure(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", call("agent", map[string]string{"role": "coder", "task": "big job"})),
			turn("", call("agent", map[string]string{"role": "coder", "task": "Continue: BRIEF-123"})),
			turn("", finishCall("success", "done after handoff")),
		},
		"coder": {
			usageTurn(27000, "", call("read_file", map[string]string{"path": "a"})),
			usageTurn(27500, "", call("finish", map[string]any{"status": "error", "summary": "BRIEF-123: did half", "error": map[string]string{"kind": "context_handoff"}})),
			usageTurn(1000, "", finishCall("success", "finished the rest")),
		},
	})
	out, evs, _ := h.run()
	if out.Status != "success" {
		t.Fatalf("status %s", out.Status)
	}
	press := find(evs, event.ContextPressure)
	if len(press) != 1 {
		t.Fatalf("context_pressure fires once per instance: %v", types(evs))
	}
	var p event.ContextPressurePayload
	_ = press[0].Decode(&p)
	if p.RoleID != "coder-1-2" || p.PromptTokens != 27000 || p.EffectiveBudget != 32768-4096 {
		t.Fatalf("context_pressure = %+v", p)
	}
	coder := h.rec.byRole("coder")
	second := coder[1].Messages
	if last := second[len(second)-1]; last.Role != "user" || last.Content != noticePressure {
		t.Fatalf("the notice must follow the turn's tool results; last message = %+v", last)
	}
	if prev := second[len(second)-2]; prev.Role != "tool" {
		t.Fatalf("the notice must not sit between a tool call and its result: %+v", prev)
	}
	if !strings.HasPrefix(noticePressure, "[Platform notice — context pressure]") {
		t.Fatal("notice header changed")
	}
	// The re-delegated instance is fresh and got the brief.
	if third := coder[2].Messages; len(third) != 2 || !strings.Contains(third[1].Content, "BRIEF-123") {
		t.Fatalf("fresh instance history = %+v", third)
	}
}

func TestEntryRoleCompactedByHandler(t *testing.T) {
	g := testGuild(t)
	g.Roles["context_manager"] = &Role{Name: "context_manager", Prompt: "[role:context_manager]", Tools: []string{"context_info", "edit_context", "finish"}}
	g.Manifests = withDefaults(t, g, "context_info", "edit_context")
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {
			usageTurn(1000, "", call("read_file", map[string]string{"path": "a"})),
			usageTurn(1000, "", call("read_file", map[string]string{"path": "b"})),
			usageTurn(27000, "", call("read_file", map[string]string{"path": "c"})),
			usageTurn(2000, "", finishCall("success", "done")),
		},
		"context_manager": {
			turn("", call("context_info", map[string]string{"targetRole": "orchestrator-0-1"})),
			turn("", call("edit_context", map[string]any{"targetRole": "orchestrator-0-1", "operations": []map[string]any{{"op": "drop", "start": 2, "end": 6}}})),
			turn("", finishCall("success", "Dropped the first two file reads.")),
		},
	})
	h.opts.Deployment.Executor.ContextHandlerRole = "context_manager"
	out, evs, _ := h.run()
	if out.Status != "success" {
		t.Fatalf("status %s: %v", out.Status, types(evs))
	}
	ip, rp := oneInterrupt(t, evs)
	if ip.Trigger != "context_pressure" || ip.Handler != "context_manager" || ip.Target != "orchestrator-0-1" || rp.Action != "compacted" {
		t.Fatalf("interrupt %+v resolved %+v", ip, rp)
	}
	if len(find(evs, event.Observe)) == 0 {
		t.Fatal("the handler's cross-role context_info should log observe")
	}
	last := h.rec.byRole("orchestrator")[3].Messages
	if len(last) != 2+2+1 {
		t.Fatalf("orchestrator history after compaction has %d messages: %+v", len(last), last)
	}
	if !strings.HasPrefix(last[len(last)-1].Content, "[Platform notice — context compacted]") || !strings.Contains(last[len(last)-1].Content, "Dropped the first two") {
		t.Fatalf("last message = %q", last[len(last)-1].Content)
	}
	if err := wellFormed(last); err != nil {
		t.Fatal(err)
	}
}

func withDefaults(t *testing.T, g *Guild, names ...string) map[string]tools.Manifest {
	t.Helper()
	fs := g.Manifests
	defs, err := tools.DefaultManifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		fs[n] = defs[n]
	}
	return fs
}

func TestBackstopCompactsWithoutHandler(t *testing.T) {
	for _, report := range []bool{true, false} {
		t.Run(fmt.Sprintf("reported=%v", report), func(t *testing.T) {
			g := testGuild(t)
			big := strings.Repeat("x", 6000)
			var turns []provider.ScriptTurn
			// Six different files: the same read six times in a row would
			// be stopped by the repetition check.
			for i := 0; i < 6; i++ {
				turns = append(turns, turn("", call("read_file", map[string]string{"path": fmt.Sprintf("big%d.txt", i)})))
			}
			turns = append(turns, turn("", finishCall("success", "survived")))
			h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": turns})
			for i := 0; i < 6; i++ {
				writeFile(t, h.dir, fmt.Sprintf("big%d.txt", i), big)
			}
			rej := &rejecting{Provider: h.opts.Provider, limit: 5000, report: report}
			h.opts.Provider = rej
			h.opts.Deployment.Model.ContextWindow = 6000
			h.opts.Deployment.Model.Generation.MaxTokens = 1000
			out, evs, _ := h.run()
			if out.Status != "success" {
				t.Fatalf("status %s: %v", out.Status, types(evs))
			}
			comp := find(evs, event.ContextCompacted)
			if len(comp) == 0 {
				t.Fatalf("want context_compacted: %v", types(evs))
			}
			var cp event.ContextCompactedPayload
			_ = comp[0].Decode(&cp)
			if cp.DroppedMessages == 0 || cp.EstimatedPromptTokens > 4200 {
				t.Fatalf("context_compacted = %+v", cp)
			}
			for i, msgs := range rej.seen {
				if err := wellFormed(msgs); err != nil {
					t.Fatalf("request %d was malformed: %v", i, err)
				}
				if msgs[0].Role != "system" || msgs[1].Content != "Do the thing" {
					t.Fatalf("request %d lost message 0 or 1", i)
				}
			}
			found := false
			for _, msgs := range rej.seen {
				for _, m := range msgs {
					if strings.HasPrefix(m.Content, "[Platform notice — context window exceeded]") {
						found = true
					}
				}
			}
			if !found {
				t.Fatal("the role must be told its context was compacted")
			}
		})
	}
}

func TestThreeRejectionsEndTheRole(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": {turn("", finishCall("success", "never"))}})
	rej := &rejecting{Provider: h.opts.Provider, limit: 1, report: true}
	h.opts.Provider = rej
	out, evs, meta := h.run()
	if out.Status != "error" || meta.Error == nil || meta.Error.Kind != "context_budget_exceeded" {
		t.Fatalf("status %s meta error %+v", out.Status, meta.Error)
	}
	if n := len(find(evs, event.ContextBudgetExceeded)); n < 1 || n > 3 {
		t.Fatalf("context_budget_exceeded events = %d: %v", n, types(evs))
	}
}

func TestCompactHistoryProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 500; iter++ {
		msgs := randomConversation(rng, 3+rng.IntN(60))
		keep := 1
		target := 50 + rng.IntN(3000)
		out, st, fits := compactHistory(msgs, keep, target, 0.25)
		if err := wellFormed(out); err != nil {
			t.Fatalf("iter %d: malformed output: %v", iter, err)
		}
		if out[0].Content != msgs[0].Content || out[1].Content != msgs[1].Content {
			t.Fatalf("iter %d: messages 0 and 1 must survive", iter)
		}
		if fits && estimateTokens(out, 0.25) > target {
			t.Fatalf("iter %d: claims to fit but %d > %d", iter, estimateTokens(out, 0.25), target)
		}
		if st.Estimated != estimateTokens(out, 0.25) {
			t.Fatalf("iter %d: stats estimate is wrong", iter)
		}
		lastIn, lastOut := msgs[len(msgs)-1], out[len(out)-1]
		if lastIn.Role != lastOut.Role || lastIn.ToolCallID != lastOut.ToolCallID {
			t.Fatalf("iter %d: the last turn must be kept", iter)
		}
	}
}

func randomConversation(rng *rand.Rand, turns int) []provider.Message {
	msgs := []provider.Message{{Role: "system", Content: strings.Repeat("s", 50+rng.IntN(200))}, {Role: "user", Content: "task"}}
	id := 0
	for i := 0; i < turns; i++ {
		if rng.IntN(5) == 0 {
			msgs = append(msgs, provider.Message{Role: "user", Content: strings.Repeat("u", rng.IntN(300))})
			continue
		}
		n := rng.IntN(3)
		a := provider.Message{Role: "assistant", Content: strings.Repeat("a", rng.IntN(400)), Reasoning: strings.Repeat("r", rng.IntN(400))}
		var results []provider.Message
		for j := 0; j < n; j++ {
			id++
			cid := fmt.Sprintf("c%d", id)
			a.ToolCalls = append(a.ToolCalls, provider.ToolCall{ID: cid, Name: "read_file", Arguments: `{"path":"x"}`})
			results = append(results, provider.Message{Role: "tool", ToolCallID: cid, Content: strings.Repeat("t", rng.IntN(5000))})
		}
		msgs = append(msgs, a)
		msgs = append(msgs, results...)
	}
	return msgs
}

// inspectionRun is a run whose stack holds target and, above it, the loop
// detector (caller) the inspection tools are called as.
func inspectionRun(t *testing.T, target *Frame) (r *Run, caller *Frame) {
	t.Helper()
	r = &Run{opts: Options{Deployment: DefaultDeployment()}}
	caller = &Frame{Role: "loop_detector", RoleID: "loop_detector-0-3"}
	r.stack = []*Frame{target, caller}
	r.log, _ = store.OpenLog(t.TempDir() + "/log.jsonl")
	r.opts.Bus = NewBus()
	r.now = timeNow
	t.Cleanup(func() { _ = r.log.Close() })
	return r, caller
}

func TestInspectionToolsStayWithinCaps(t *testing.T) {
	big := &Frame{Role: "coder", RoleID: "coder-1-2"}
	big.History = []provider.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "t"}}
	chunk := strings.Repeat("needle haystack ", 4000) // 64k chars
	for i := 0; i < 16; i++ {                         // ~1M chars ≈ 256k tokens
		big.History = append(big.History, provider.Message{Role: "assistant", Content: chunk, Reasoning: chunk})
	}
	r, caller := inspectionRun(t, big)
	get := func(name string, args any) map[string]any {
		b, _ := json.Marshal(args)
		res := r.internalTools()[name](context.Background(), caller, b)
		if res.Failed() {
			t.Fatalf("%s: %s", name, res.Message)
		}
		out, _ := json.Marshal(res)
		var m map[string]any
		_ = json.Unmarshal(out, &m)
		return m["data"].(map[string]any)
	}
	w := get("read_message_window", map[string]any{"targetRole": "coder-1-2", "index": 3, "field": "content", "start": 0, "end": 1 << 30})
	if n := len([]rune(w["text"].(string))); n != maxWindowChars {
		t.Fatalf("read_message_window returned %d chars, cap is %d", n, maxWindowChars)
	}
	s := get("search_role_blocks", map[string]any{"targetRole": "coder-1-2", "query": "needle", "maxMatches": 25})
	ms := s["matches"].([]any)
	if len(ms) != 25 || s["more"] != true {
		t.Fatalf("search_role_blocks returned %d matches", len(ms))
	}
	for _, m := range ms {
		if n := len([]rune(m.(map[string]any)["snippet"].(string))); n > 2*searchContext+len("needle") {
			t.Fatalf("snippet of %d chars exceeds ±%d", n, searchContext)
		}
	}
	l := get("list_role_messages", map[string]any{"targetRole": "coder-1-2"})
	if b, _ := json.Marshal(l); len(b) > 10000 {
		t.Fatalf("list_role_messages is %d bytes; it must be an index, not content", len(b))
	}
	if r.internalTools()["read_message_window"](context.Background(), caller, json.RawMessage(`{"targetRole":"ghost-1-9","index":0,"field":"content"}`)).Kind != "not_found" {
		t.Fatal("an unregistered target must be refused")
	}
}

func TestEditContextProtectsMessagesZeroAndOne(t *testing.T) {
	h := []provider.Message{{Role: "system"}, {Role: "user"}, {Role: "assistant", ToolCalls: []provider.ToolCall{{ID: "a"}}}, {Role: "tool", ToolCallID: "a"}, {Role: "user"}}
	cases := []struct {
		ops  []editOp
		want string
	}{
		{[]editOp{{Op: "drop", Start: ip(1), End: ip(2)}}, "protected"},
		{[]editOp{{Op: "drop", Start: ip(3), End: ip(5)}, {Op: "replace", Index: ip(0), Content: "x"}}, "protected"},
		{[]editOp{{Op: "drop", Start: ip(2), End: ip(3)}}, "without their call"},
		{[]editOp{{Op: "drop", Start: ip(3), End: ip(4)}}, "tool result"},
		{[]editOp{{Op: "drop", Start: ip(2), End: ip(9)}}, "must be non-empty"},
		{[]editOp{{Op: "drop", Start: ip(2), End: ip(4)}}, ""},
		// The original's range is [start, end): [2, 4] is messages 2
		// and 3, and [2, 3] would strand the tool result at 3.
		{[]editOp{{Type: "drop", Range: []int{2, 4}}}, ""},
		{[]editOp{{Op: "drop", Range: []int{2, 3}}}, "without their call"},
		{[]editOp{{Op: "strip_reasoning", Range: []int{2, 2}}}, "must be non-empty"},
	}
	for i, c := range cases {
		got := validateEdits(h, len(h), c.ops)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("case %d: validateEdits = %q, want containing %q", i, got, c.want)
		}
	}
	out := applyEdits(h, []editOp{{Type: "drop", Range: []int{2, 4}}})
	if len(out) != 3 || out[2].Role != "user" || wellFormed(out) != nil {
		t.Fatalf("original-style half-open range drop: %+v", out)
	}
}

func ip(i int) *int { return &i }

func BenchmarkCompact256k(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	msgs := randomConversation(rng, 1200)
	for estimateTokens(msgs, 0.25) < 256000 {
		msgs = append(msgs, randomConversation(rng, 200)[2:]...)
	}
	b.ReportMetric(float64(len(msgs)), "messages")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		compactHistory(msgs, 1, 22937, 0.25)
	}
}
