package render

import (
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/golden"

	"github.com/guildhall/guildhall/runner/event"
)

var fixtures = []string{"delegation", "loopcheck", "inquiry", "handoff", "resumed", "malformed", "planchange", "noaction"}

func TestModelGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			events, _ := loadLog(t, name+".jsonl")
			m := replay(events)
			golden.Check(t, filepath.Join("testdata", "model", name+".golden.json"), renderGolden(t, m))
		})
	}
}

func TestModelDelegationRun(t *testing.T) {
	events, bad := loadLog(t, "delegation.jsonl")
	if bad != 0 {
		t.Fatalf("fixture has %d bad lines", bad)
	}
	m := replay(events)

	wantParticipants := []string{"human", "orchestrator-0-1", "planner-1-2", "tool:read_file", "coder-1-3", "human:answerer:1", "tool:write_file", "tool:run_shell"}
	if got := participantIDs(m); !slices.Equal(got, wantParticipants) {
		t.Errorf("participants\n got %q\nwant %q", got, wantParticipants)
	}
	// agent, ask_human and finish tool calls are drawn by their own events,
	// never as tool nodes.
	for _, p := range m.Participants {
		if p.Kind == KindTool && controlTool(p.Role) {
			t.Errorf("control tool %q became a participant", p.Role)
		}
	}
	wantOps := []string{
		"call human -> orchestrator-0-1 [main]",
		"call orchestrator-0-1 -> planner-1-2 [main]",
		"call planner-1-2 -> tool:read_file [main]",
		"return tool:read_file -> planner-1-2 [main] success",
		"return planner-1-2 -> orchestrator-0-1 [main] success",
		"call orchestrator-0-1 -> coder-1-3 [main]",
		"call coder-1-3 -> human:answerer:1 [main]",
		"return human:answerer:1 -> coder-1-3 [main] success",
		"call coder-1-3 -> tool:write_file [main]",
		"return tool:write_file -> coder-1-3 [main] success",
		"call coder-1-3 -> tool:run_shell [main]",
		"return tool:run_shell -> coder-1-3 [main] error/timeout",
		"call coder-1-3 -> tool:run_shell [main]",
		"return tool:run_shell -> coder-1-3 [main] success",
		"return coder-1-3 -> orchestrator-0-1 [main] success",
		"return orchestrator-0-1 -> human [main] success",
	}
	if got := opLines(m); !slices.Equal(got, wantOps) {
		t.Errorf("operations\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(wantOps, "\n     "))
	}
	for _, op := range m.Operations {
		if op.Lifecycle != Settled || op.Open || op.SettledAt == nil {
			t.Errorf("%s of a finished run is %s open=%v", op.ID, op.Lifecycle, op.Open)
		}
		if op.Kind == OpCall {
			if ret, ok := m.Operation(op.ClosedBy); !ok || ret.Kind != OpReturn || ret.Source != op.Destination || ret.Destination != op.Source {
				t.Errorf("%s is not paired with its return (closedBy %q)", op.ID, op.ClosedBy)
			}
		}
	}
	if m.Status != "success" || m.RunID != "run-20250314-093000" || m.Version != int64(len(events)) {
		t.Errorf("status %q run %q version %d", m.Status, m.RunID, m.Version)
	}

	// Metrics: each role invocation sums its own model calls, and the run
	// totals sum all of them.
	perRole := map[string]Metrics{}
	var total Metrics
	for _, e := range events {
		if e.Type != event.LLMCall {
			continue
		}
		var p event.LLMCallPayload
		if err := e.Decode(&p); err != nil {
			t.Fatal(err)
		}
		d := Metrics{Tokens: p.Usage.TotalTokens, CachedPromptTokens: p.Usage.CachedPromptTokens, ElapsedSeconds: float64(p.ElapsedMs) / 1000}
		x := perRole[p.RoleID]
		x.add(d)
		perRole[p.RoleID] = x
		total.add(d)
	}
	for id, want := range perRole {
		oi := m.roleCall[id]
		if got := m.Operations[oi].Metrics; got.Tokens != want.Tokens || got.CachedPromptTokens != want.CachedPromptTokens || !near(got.ElapsedSeconds, want.ElapsedSeconds) {
			t.Errorf("%s invocation metrics %+v, want %+v", id, got, want)
		}
		p, _ := m.Participant(id)
		if p.Metrics.Tokens != want.Tokens {
			t.Errorf("%s participant tokens %d, want %d", id, p.Metrics.Tokens, want.Tokens)
		}
	}
	if m.Totals.Tokens != total.Tokens || m.Totals.CachedPromptTokens != total.CachedPromptTokens || m.Totals.ModelCalls != 9 || m.Totals.ToolCalls != 4 {
		t.Errorf("totals %+v, want tokens %d cached %d", m.Totals, total.Tokens, total.CachedPromptTokens)
	}
	if p, _ := m.Participant("tool:run_shell"); p.Invocations != 2 || !near(p.Metrics.ElapsedSeconds, 31.4) {
		t.Errorf("run_shell participant %+v, want 2 invocations and 31.4s", p)
	}

	// Details: the inspector's bodies.
	wantDetails := map[string][]string{
		"op-1":  {"**Task**", "Add a `--verbose` flag"},
		"op-3":  {"**Arguments**", "```json\n{\n  \"path\": \"cmd/main.go\"\n}\n```"},
		"op-7":  {"**Question**", "Should `--verbose` also enable debug logs?", "- No — only step lines", "Previous assistant message (no context was provided)", "two logging paths"},
		"op-8":  {"**Answer (terminal)**", "Yes, both."},
		"op-9":  {"````json"}, // content holding ``` gets a longer fence
		"op-12": {"\"kind\": \"timeout\""},
		"op-15": {"**Summary**", "Added `--verbose`", "**Artifacts**", "- cmd/main.go"},
	}
	for id, wants := range wantDetails {
		op, ok := m.OperationDetails(id)
		if !ok || !op.HasDetails {
			t.Fatalf("%s has no details", id)
		}
		for _, w := range wants {
			if !strings.Contains(op.Details, w) {
				t.Errorf("%s details lack %q:\n%s", id, w, op.Details)
			}
		}
	}
	// Details never ride the model itself.
	if strings.Contains(mustJSON(t, m.State()), "two logging paths") {
		t.Error("details leaked into the serialised model")
	}
	if _, ok := m.OperationDetails("op-999"); ok {
		t.Error("unknown operation id resolved")
	}
	if _, ok := m.OperationDetails("op-01"); ok {
		t.Error("non-canonical operation id resolved")
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

func TestModelLoopCheckInterrupt(t *testing.T) {
	events, _ := loadLog(t, "loopcheck.jsonl")
	m := NewModel()
	firstObserve := -1
	for i, e := range events {
		m.Apply(e)
		if e.Type == event.Observe && firstObserve < 0 {
			firstObserve = i
			// Mid-interlude: the main stack is paused under the interrupt.
			main, _ := m.StackByID("main")
			intr, _ := m.StackByID("interrupt-1")
			if !main.Paused || intr.Paused || intr.Resolved || intr.Root != "interrupt:1" || intr.ParentStack != "main" || intr.Trigger != "loop_check" {
				t.Errorf("during the interlude: main %+v interrupt %+v", main, intr)
			}
			if m.ActiveStack != "interrupt-1" {
				t.Errorf("active stack %q during the interlude", m.ActiveStack)
			}
			// The paused stack keeps its open chain; nothing on it animates.
			chain := m.OpenCalls("main")
			if len(chain) != 2 || chain[1].Destination != "coder-1-2" {
				t.Errorf("paused chain %v", chain)
			}
			for _, op := range m.Operations {
				if op.Stack == "main" && IsAnimated(m, op) {
					t.Errorf("%s animates on a paused stack", op.ID)
				}
			}
			if got := m.OpenCalls("interrupt-1"); len(got) != 2 || got[0].Source != "interrupt:1" || got[0].Destination != "loop_detector-2-3" || got[1].Destination != "tool:recent_role_tool_calls" {
				t.Errorf("interrupt chain %v", got)
			}
		}
	}
	var observes []Operation
	for _, op := range m.Operations {
		if op.Kind == OpObserve {
			observes = append(observes, op)
		}
	}
	if len(observes) != 2 {
		t.Fatalf("%d observe operations, want 2", len(observes))
	}
	for i, want := range []string{"tool:recent_role_tool_calls", "tool:read_message_window"} {
		o := observes[i]
		if o.Source != want || o.Destination != "coder-1-2" || o.Stack != "interrupt-1" || o.Lifecycle != Settled || !o.SettledAt.Equal(o.StartedAt) || o.Outcome != "" {
			t.Errorf("observe %d: %s %+v", i, opLine(o), o)
		}
	}
	main, _ := m.StackByID("main")
	intr, _ := m.StackByID("interrupt-1")
	if main.Paused || !intr.Resolved || intr.Action != "redirect" || intr.ResolvedAt == nil {
		t.Errorf("after resolution: main %+v interrupt %+v", main, intr)
	}
	// The handler's return carries its summary once and the resolution.
	ret, _ := m.OperationDetails("op-18")
	if ret.Kind != OpReturn || ret.Source != "loop_detector-2-3" || ret.Destination != "interrupt:1" {
		t.Fatalf("op-18 is %s", opLine(ret))
	}
	if strings.Count(ret.Details, "repeats `go test`") != 1 || !strings.Contains(ret.Details, "**Resolution:** redirect (handler success)") {
		t.Errorf("handler return details:\n%s", ret.Details)
	}
	// After the interlude the coder's work lands back on main.
	if last := m.Operations[len(m.Operations)-1]; last.Stack != "main" || m.ActiveStack != "main" {
		t.Errorf("last op %s, active %s", opLine(last), m.ActiveStack)
	}
}

func TestModelInquiryInterlude(t *testing.T) {
	events, _ := loadLog(t, "inquiry.jsonl")
	m := replay(events)
	asker, ok := m.Participant("human:asker:1")
	if !ok || asker.Kind != KindHuman || asker.Role != "human" {
		t.Fatalf("asker %+v", asker)
	}
	s, _ := m.StackByID("interrupt-1")
	if s.Root != "human:asker:1" || s.Trigger != "inquiry" || !s.Resolved || s.Action != "answered" {
		t.Errorf("inquiry stack %+v", s)
	}
	q, _ := m.OperationDetails("op-3")
	if q.Source != "human:asker:1" || q.Destination != "inquiry_responder-1-3" || q.Stack != "interrupt-1" {
		t.Errorf("question op %s", opLine(q))
	}
	if !strings.Contains(q.Details, "**Operator inquiry**\n\nWhat is the coder doing right now?") || !strings.Contains(q.Details, "**Task**") {
		t.Errorf("question details:\n%s", q.Details)
	}
	a, _ := m.OperationDetails("op-6")
	if a.Kind != OpReturn || a.Destination != "human:asker:1" || strings.Count(a.Details, "writing table tests") != 1 {
		t.Errorf("answer op %s details:\n%s", opLine(a), a.Details)
	}
}

func TestModelContextHandoff(t *testing.T) {
	events, _ := loadLog(t, "handoff.jsonl")
	m := replay(events)
	first, _ := m.OperationDetails("op-5")
	if first.Source != "coder-1-2" || first.Outcome != "error" || first.ErrorKind != "context_handoff" || !strings.Contains(first.Details, "Handoff brief") {
		t.Errorf("handoff return %s:\n%s", opLine(first), first.Details)
	}
	call := m.Operations[m.roleCall["coder-1-2"]]
	if len(call.Annotations) != 1 || call.Annotations[0].Type != event.ContextPressure || call.Annotations[0].PromptTokens != 26500 || call.Annotations[0].EffectiveBudget != 28672 {
		t.Errorf("pressure annotation %+v", call.Annotations)
	}
	tree := RoleTree(m)
	if len(tree) != 1 || tree[0].ID != "orchestrator-0-1" || len(tree[0].Children) != 2 {
		t.Fatalf("role tree %+v", tree)
	}
	kids := tree[0].Children
	if kids[0].ID != "coder-1-2" || kids[0].Outcome != "error" || kids[0].ErrorKind != "context_handoff" || kids[1].ID != "coder-1-3" || kids[1].Outcome != "success" {
		t.Errorf("children %+v", kids)
	}
	slots := TopBar(m)
	if len(slots) != 4 || slots[1].Role != "coder" || slots[1].Instances != 2 || slots[1].Invocations != 2 {
		t.Errorf("top bar %+v", slots)
	}
}

func TestModelResumedRun(t *testing.T) {
	events, _ := loadLog(t, "resumed.jsonl")
	m := replay(events)
	if m.Resumes != 1 || m.Status != "success" {
		t.Errorf("resumes %d status %q", m.Resumes, m.Status)
	}
	coder, _ := m.Participant("coder-1-2")
	if coder.Invocations != 1 || coder.Turns != 4 {
		t.Errorf("coder %+v: a resumed instance continues its call", coder)
	}
	var coderCalls int
	for _, op := range m.Operations {
		if op.Kind == OpCall && op.Destination == "coder-1-2" {
			coderCalls++
		}
	}
	if coderCalls != 1 {
		t.Errorf("%d calls into coder-1-2, want 1", coderCalls)
	}
	// The read in flight at the crash is closed as interrupted.
	lost := m.Operations[2]
	if lost.Tool != "read_file" || lost.Open || lost.Outcome != OutcomeInterrupted || lost.ClosedBy != "" {
		t.Errorf("lost call %+v", lost)
	}
	// Post-resume model calls add to the same invocation.
	call := m.Operations[m.roleCall["coder-1-2"]]
	if call.Metrics.Tokens != 1500+1620+1610+2100 {
		t.Errorf("coder invocation tokens %d", call.Metrics.Tokens)
	}
	if len(call.Annotations) != 1 || call.Annotations[0].Category != "server" {
		t.Errorf("annotations %+v", call.Annotations)
	}
	// A provider body never reaches the model or any details.
	all := string(renderGolden(t, m))
	if strings.Contains(all, "PROVIDER-BODY") || strings.Contains(all, "exploded") {
		t.Error("provider body leaked into the model")
	}
}

func TestModelMalformedLog(t *testing.T) {
	events, bad := loadLog(t, "malformed.jsonl")
	if bad != 2 {
		t.Errorf("%d unreadable lines, want 2", bad)
	}
	m := replay(events)
	if m.Skipped != 7 {
		t.Errorf("skipped %d events, want 7", m.Skipped)
	}
	if m.Status != "running" || len(m.Stacks) != 1 {
		t.Errorf("status %q stacks %d", m.Status, len(m.Stacks))
	}
	want := []string{
		"call human -> orchestrator-0-1 [main]",
		"call orchestrator-0-1 -> coder-1-2 [main]",
		"call coder-1-2 -> tool:search_text [main]",
		"return tool:search_text -> coder-1-2 [main] success",
	}
	if got := opLines(m); !slices.Equal(got, want) {
		t.Errorf("operations %q", got)
	}
	// The live run: the return leg is still travelling to the coder.
	if op, _ := ActiveOperation(m); op.ID != "op-4" || op.Lifecycle != InFlight || !IsAnimated(m, op) {
		t.Errorf("active %+v", op)
	}
}

// TestModelEventTable covers event sequences the fixtures do not.
func TestModelEventTable(t *testing.T) {
	start := func(t *testing.T) []event.Event {
		return []event.Event{
			mkEvent(t, 0, event.RunStarted, event.RunStartedPayload{RunID: "r", Task: "t", EntryRole: "orchestrator"}),
			mkEvent(t, 1, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "t"}),
			mkEvent(t, 2, event.RoleStart, event.RoleStartPayload{Role: "coder", RoleID: "coder-1-2", Depth: 1, Parent: "orchestrator", ParentID: "orchestrator-0-1"}),
		}
	}
	tests := []struct {
		name  string
		more  func(t *testing.T) []event.Event
		check func(t *testing.T, m *Model)
	}{
		{
			name: "terminate closes the named call on the paused stack",
			more: func(t *testing.T) []event.Event {
				return []event.Event{
					mkEvent(t, 3, event.Interrupt, event.InterruptPayload{Trigger: "loop_check", Handler: "recovery", Target: "coder-1-2"}),
					mkEvent(t, 4, event.RoleStart, event.RoleStartPayload{Role: "recovery", RoleID: "recovery-2-3"}),
					mkEvent(t, 5, event.Terminate, event.TerminatePayload{Role: "coder", Details: "rewound"}),
				}
			},
			check: func(t *testing.T, m *Model) {
				term := m.Operations[len(m.Operations)-1]
				if term.Kind != OpTerminate || term.Source != "recovery-2-3" || term.Destination != "coder-1-2" || term.Stack != "interrupt-1" {
					t.Fatalf("terminate op %s", opLine(term))
				}
				killed := m.Operations[m.roleCall["coder-1-2"]]
				if killed.Open || killed.Outcome != OutcomeTerminated || killed.ClosedBy != term.ID {
					t.Errorf("terminated call %+v", killed)
				}
				if chain := m.OpenCalls("main"); len(chain) != 1 {
					t.Errorf("main chain after terminate %v", chain)
				}
				// Terminate never takes activity from the interrupt's call.
				if op, _ := ActiveOperation(m); op.Destination != "recovery-2-3" {
					t.Errorf("active %s", opLine(op))
				}
			},
		},
		{
			name: "nested interrupts pause and resume in order",
			more: func(t *testing.T) []event.Event {
				return []event.Event{
					mkEvent(t, 3, event.Interrupt, event.InterruptPayload{Trigger: "loop_check", Handler: "loop_detector", Target: "coder-1-2"}),
					mkEvent(t, 4, event.RoleStart, event.RoleStartPayload{Role: "loop_detector", RoleID: "loop_detector-2-3"}),
					mkEvent(t, 5, event.Interrupt, event.InterruptPayload{Trigger: "inquiry", Handler: "inquiry_responder", Message: "status?"}),
					mkEvent(t, 6, event.RoleStart, event.RoleStartPayload{Role: "inquiry_responder", RoleID: "inquiry_responder-1-4"}),
				}
			},
			check: func(t *testing.T, m *Model) {
				var paused []bool
				for _, s := range m.Stacks {
					paused = append(paused, s.Paused)
				}
				if !slices.Equal(paused, []bool{true, true, false}) || m.ActiveStack != "interrupt-2" || m.Stacks[2].ParentStack != "interrupt-1" {
					t.Errorf("stacks %+v", m.Stacks)
				}
				m.Apply(mkEvent(t, 7, event.RoleFinished, event.RoleFinishedPayload{Role: "inquiry_responder", RoleID: "inquiry_responder-1-4", Status: "success", Summary: "fine"}))
				m.Apply(mkEvent(t, 8, event.InterruptResolved, event.InterruptResolvedPayload{Trigger: "inquiry", Action: "answered", Summary: "fine"}))
				if m.ActiveStack != "interrupt-1" || m.Stacks[1].Paused || !m.Stacks[0].Paused {
					t.Errorf("after the inner resolution %+v", m.Stacks)
				}
			},
		},
		{
			name: "a second answer to a question is ignored",
			more: func(t *testing.T) []event.Event {
				return []event.Event{
					mkEvent(t, 3, event.AskHuman, event.AskHumanPayload{ID: "q", RoleID: "coder-1-2", Question: "?", Context: "ctx"}),
					mkEvent(t, 4, event.HumanAnswer, event.HumanAnswerPayload{ID: "q", Answer: "first", Source: "browser"}),
					mkEvent(t, 5, event.HumanAnswer, event.HumanAnswerPayload{ID: "q", Answer: "second", Source: "terminal"}),
				}
			},
			check: func(t *testing.T, m *Model) {
				if len(m.Operations) != 4 || m.Skipped != 1 {
					t.Fatalf("ops %q skipped %d", opLines(m), m.Skipped)
				}
				q, _ := m.OperationDetails("op-3")
				if !strings.Contains(q.Details, "**Context**\n\nctx") || strings.Contains(q.Details, "Previous assistant") {
					t.Errorf("question details %q", q.Details)
				}
				a, _ := m.OperationDetails("op-4")
				if !strings.Contains(a.Details, "first") || strings.Contains(a.Details, "second") {
					t.Errorf("answer details %q", a.Details)
				}
			},
		},
		{
			name: "a pending question is in flight until answered",
			more: func(t *testing.T) []event.Event {
				return []event.Event{mkEvent(t, 3, event.AskHuman, event.AskHumanPayload{ID: "q", RoleID: "coder-1-2", Question: "?"})}
			},
			check: func(t *testing.T, m *Model) {
				op, _ := ActiveOperation(m)
				dst, _ := m.Participant(op.Destination)
				if op.Kind != OpCall || op.Lifecycle != InFlight || dst.Kind != KindHuman || op.QuestionID != "q" {
					t.Errorf("active %+v dst %+v", op, dst)
				}
			},
		},
		{
			name: "a finished run settles what is in flight",
			more: func(t *testing.T) []event.Event {
				return []event.Event{
					mkEvent(t, 3, event.ToolCall, event.ToolCallPayload{RoleID: "coder-1-2", Tool: "run_shell", CallID: "x"}),
					mkEvent(t, 4, event.RunStatus, event.RunStatusPayload{Status: "interrupted"}),
				}
			},
			check: func(t *testing.T, m *Model) {
				for _, op := range m.Operations {
					if op.Lifecycle != Settled {
						t.Errorf("%s still in flight", op.ID)
					}
				}
				if !m.Operations[2].Open {
					t.Error("the interrupted call should stay open where the run stopped")
				}
			},
		},
		{
			name: "unknown and ephemeral events",
			more: func(t *testing.T) []event.Event {
				d := mkEvent(t, 3, event.LLMDelta, event.LLMDeltaPayload{RoleID: "coder-1-2", Content: "hi"})
				d.Ephemeral = true
				return []event.Event{d, mkEvent(t, 4, "brand_new_type", map[string]int{"x": 1}), mkEvent(t, 5, event.OperatorNotice, event.OperatorNoticePayload{Message: "wind down"})}
			},
			check: func(t *testing.T, m *Model) {
				if m.Version != 5 || m.Skipped != 0 || len(m.Operations) != 2 {
					t.Errorf("version %d skipped %d ops %d", m.Version, m.Skipped, len(m.Operations))
				}
			},
		},
		{
			name: "a role_start repeated for a live instance continues it",
			more: func(t *testing.T) []event.Event {
				return []event.Event{mkEvent(t, 3, event.RoleStart, event.RoleStartPayload{Role: "coder", RoleID: "coder-1-2"})}
			},
			check: func(t *testing.T, m *Model) {
				if len(m.Operations) != 2 {
					t.Errorf("ops %q", opLines(m))
				}
			},
		},
		{
			name: "a parent finishing closes children left open",
			more: func(t *testing.T) []event.Event {
				return []event.Event{mkEvent(t, 3, event.RoleFinished, event.RoleFinishedPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Status: "error", Error: &event.ErrorInfo{Kind: "llm_unavailable", Message: "endpoint down", Details: json.RawMessage(`"BODY-SECRET"`)}})}
			},
			check: func(t *testing.T, m *Model) {
				child := m.Operations[1]
				if child.Open || child.Outcome != OutcomeInterrupted {
					t.Errorf("child %+v", child)
				}
				ret, _ := m.OperationDetails("op-3")
				if ret.Outcome != "error" || ret.ErrorKind != "llm_unavailable" || !strings.Contains(ret.Details, "endpoint down") || strings.Contains(ret.Details, "BODY-SECRET") {
					t.Errorf("return %+v", ret)
				}
			},
		},
		{
			name: "a long tool result is cut with a marker",
			more: func(t *testing.T) []event.Event {
				big := `{"kind":"success","data":"` + strings.Repeat("é", 5000) + `"}`
				return []event.Event{
					mkEvent(t, 3, event.ToolCall, event.ToolCallPayload{RoleID: "coder-1-2", Tool: "read_file", CallID: "x", Arguments: "not json"}),
					mkEvent(t, 4, event.ToolResult, event.ToolResultPayload{RoleID: "coder-1-2", Tool: "read_file", CallID: "x", Kind: "success", Result: json.RawMessage(big)}),
				}
			},
			check: func(t *testing.T, m *Model) {
				call, _ := m.OperationDetails("op-3")
				if !strings.Contains(call.Details, "```\nnot json\n```") {
					t.Errorf("non-JSON arguments %q", call.Details)
				}
				ret, _ := m.OperationDetails("op-4")
				if len(ret.Details) > detailsJSONCap+200 || !strings.Contains(ret.Details, "_(truncated: ") || !strings.Contains(ret.Details, "\n```\n") {
					t.Errorf("result details (%d bytes) %q", len(ret.Details), ret.Details[len(ret.Details)-120:])
				}
				if !json.Valid([]byte(mustJSON(t, ret))) || strings.ContainsRune(ret.Details, '\uFFFD') {
					t.Error("cut split a rune")
				}
			},
		},
		{
			name: "events before run_started still build a model",
			more: func(t *testing.T) []event.Event { return nil },
			check: func(t *testing.T, m *Model) {
				m2 := NewModel()
				m2.Apply(mkEvent(t, 0, event.RoleStart, event.RoleStartPayload{Role: "solo"}))
				m2.Apply(mkEvent(t, 1, event.Observe, event.ObservePayload{Role: "solo"}))
				if len(m2.Operations) != 1 || m2.Operations[0].Source != "human" || m2.Skipped != 1 {
					t.Errorf("ops %q skipped %d", opLines(m2), m2.Skipped)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := replay(append(start(t), tc.more(t)...))
			tc.check(t, m)
		})
	}
}

// TestModelDeterminism: the model is a pure function of the log. Applying
// the same events twice, or the events as a live bus delivers them (other
// time zones, interleaved ephemeral deltas), gives the same JSON.
func TestModelDeterminism(t *testing.T) {
	zone := time.FixedZone("X", 5*3600+1800)
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			events, _ := loadLog(t, name+".jsonl")
			a, b := renderGolden(t, replay(events)), renderGolden(t, replay(events))
			var live []event.Event
			for _, e := range events {
				e.Timestamp = e.Timestamp.In(zone)
				live = append(live, e, event.Event{Type: event.LLMDelta, Ephemeral: true, Payload: json.RawMessage(`{"roleId":"x","content":"…"}`)})
			}
			c := renderGolden(t, replay(live))
			if string(a) != string(b) || string(a) != string(c) {
				t.Error("same log, different models")
			}
		})
	}
}

// TestModelNeverPanics feeds every prefix of every fixture with events
// shuffled and payloads corrupted.
func TestModelNeverPanics(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range fixtures {
		events, _ := loadLog(t, name+".jsonl")
		for round := 0; round < 50; round++ {
			evs := slices.Clone(events)
			r.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
			for i := range evs {
				if r.IntN(5) == 0 {
					p := slices.Clone(evs[i].Payload)
					if len(p) > 2 {
						p = p[:r.IntN(len(p))]
					}
					evs[i].Payload = p
				}
			}
			m := replay(evs)
			_ = NowCaption(m, NewLabelResolver(LabelSet{}, TierWhimsical))
			_ = RoleTree(m)
			if !reflect.DeepEqual(Merge(ModelState{}, m.Since(0, 0)), m.State()) {
				t.Fatal("snapshot does not reproduce the state")
			}
		}
	}
}
