package thread

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/golden"

	"github.com/guildhall/guildhall/runner/event"
)

// logBuilder writes a realistic run log one event at a time.
type logBuilder struct {
	t   *testing.T
	at  time.Time
	evs []event.Event
}

func newLog(t *testing.T, start time.Time) *logBuilder { return &logBuilder{t: t, at: start} }

func (b *logBuilder) add(typ event.Type, payload any) *logBuilder {
	b.t.Helper()
	b.at = b.at.Add(time.Second)
	e, err := event.New(b.at, typ, payload)
	if err != nil {
		b.t.Fatal(err)
	}
	e.Seq = int64(len(b.evs))
	b.evs = append(b.evs, e)
	return b
}

func (b *logBuilder) start(runID, task, continues string) *logBuilder {
	return b.add(event.RunStarted, event.RunStartedPayload{RunID: runID, Task: task, Effort: "standard", ContinuesFrom: continues, EntryRole: "orchestrator"}).
		add(event.EffortSet, event.EffortSetPayload{Effort: "standard"}).
		add(event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Depth: 0, Task: task})
}

func (b *logBuilder) finish(summary string) *logBuilder {
	card := event.Card{Status: "success", Summary: summary}
	return b.add(event.RoleFinished, event.RoleFinishedPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Status: "success", Summary: summary}).
		add(event.RunStatus, event.RunStatusPayload{Status: "success", Card: &card})
}

func marshalThread(t *testing.T, th Thread) []byte {
	t.Helper()
	b, err := json.Marshal(th)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func kinds(th Thread) string {
	var k []string
	for _, e := range th.Entries {
		s := e.Kind
		if e.Kind == Marker {
			s += ":" + e.Label
		}
		k = append(k, s)
	}
	return strings.Join(k, " ")
}

// Strings of the real demo run that are not human-facing: a tool result,
// a child role's messages and result, reasoning, internal turns of the
// entry role, a system prompt and tool arguments.
var demoExcluded = []string{
	"A tiny, dependency-free shell library", // read_file result (README)
	"Verdict: findings",                     // acceptance reviewer's finish
	"Plan written to",                       // planner's finish
	"Reading the library and its test script",
	"One question is worth asking",        // orchestrator reasoning
	"for this run. Before anyone changes", // orchestrator internal turn
	"You are the orchestrator",            // system prompt
	`\"path\"`,                            // tool arguments
	"orchestrator-0-1",                    // instance ids are not thread text
}

func TestThreadOfTheDemoRun(t *testing.T) {
	evs, bad := loadLogFrom(t, "thread", "demo.jsonl")
	if bad != 0 || len(evs) < 50 {
		t.Fatalf("fixture: %d events, %d bad lines", len(evs), bad)
	}
	var started event.RunStartedPayload
	_ = evs[0].Decode(&started)
	th := Derive([]Run{{RunID: started.RunID, Task: started.Task, Status: "success", Events: evs}})
	if got, want := kinds(th), "marker:started human question answer orchestrator marker:finished"; got != want {
		t.Fatalf("entries = %s, want %s", got, want)
	}
	id := th.Identity
	if id.Runs != 1 || id.Continuations != 0 || id.Questions != 1 || id.Answered != 1 {
		t.Fatalf("identity = %+v", id)
	}
	if !strings.HasPrefix(id.FirstTask, "The tests in this project fail.") || id.LatestHumanText != "Only fix the failing tests" {
		t.Fatalf("identity texts = %q / %q", id.FirstTask, id.LatestHumanText)
	}
	q := th.Entries[2]
	if !strings.Contains(q.Text, "accented letters") || !strings.Contains(q.Context, "transliterate") {
		t.Fatalf("question entry = %+v", q)
	}
	res := th.Entries[4]
	if !strings.HasPrefix(res.Text, "## Slug tests fixed") || res.Label != "success" {
		t.Fatalf("result entry = %+v", res)
	}
	b := marshalThread(t, th)
	for _, s := range demoExcluded {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("the thread carries excluded content %q", s)
		}
	}
	pretty, _ := json.MarshalIndent(th, "", "  ")
	golden.Check(t, filepath.Join("testdata", "thread", "demo.golden.json"), append(pretty, '\n'))
}

func TestThreadExcludesEverythingThatIsNotHumanFacing(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	b := newLog(t, t0).start("run-20260301-100000", "Fix the parser", "")
	b.add(event.LLMCallStart, event.LLMCallStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1"})
	b.add(event.ProviderFailure, event.ProviderFailurePayload{RoleID: "orchestrator-0-1", Category: "server", StatusCode: 500, Body: "PROVIDER-BODY-CANARY"})
	b.add(event.LLMCall, event.LLMCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", MessageCount: 2,
		Sent:     []event.WireMessage{{Role: "system", Content: "SYSTEM-PROMPT-CANARY"}, {Role: "user", Content: "Fix the parser"}},
		Received: &event.Received{Content: "INTERNAL-TURN-CANARY", Reasoning: "REASONING-CANARY", ToolCalls: []event.WireToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"TOOL-ARG-CANARY"}`}}},
		Usage:    event.Usage{PromptTokens: 123456789}})
	b.add(event.ToolCall, event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", Arguments: `{"path":"TOOL-ARG-CANARY"}`})
	b.add(event.ToolResult, event.ToolResultPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", Kind: "success",
		Result: json.RawMessage(`{"kind":"success","data":{"content":"TOOL-RESULT-CANARY"}}`)})
	// A child role: its task, question, the answer to it, and its result.
	b.add(event.AgentCall, event.AgentCallPayload{Parent: "orchestrator", ParentID: "orchestrator-0-1", Child: "coder", Depth: 1, Task: "CHILD-TASK-CANARY"})
	b.add(event.RoleStart, event.RoleStartPayload{Role: "coder", RoleID: "coder-1-2", Depth: 1, Task: "CHILD-TASK-CANARY", Parent: "orchestrator", ParentID: "orchestrator-0-1"})
	b.add(event.AskHuman, event.AskHumanPayload{ID: "q-child", Role: "coder", RoleID: "coder-1-2", Question: "CHILD-QUESTION-CANARY"})
	b.add(event.HumanAnswer, event.HumanAnswerPayload{ID: "q-child", Answer: "CHILD-ANSWER-CANARY"})
	b.add(event.ContextPressure, event.ContextPressurePayload{Role: "coder", RoleID: "coder-1-2", PromptTokens: 987654321})
	b.add(event.RoleFinished, event.RoleFinishedPayload{Role: "coder", RoleID: "coder-1-2", Depth: 1, Status: "success", Summary: "CHILD-SUMMARY-CANARY"})
	// A handler interlude whose role shares the entry role's name and depth.
	b.add(event.Interrupt, event.InterruptPayload{Trigger: "loop_check", Handler: "orchestrator", Target: "orchestrator-0-1"})
	b.add(event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-3", Depth: 0, Task: "HANDLER-TASK-CANARY"})
	b.add(event.Observe, event.ObservePayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Details: "OBSERVE-CANARY"})
	b.add(event.RoleFinished, event.RoleFinishedPayload{Role: "orchestrator", RoleID: "orchestrator-0-3", Depth: 0, Status: "success", Summary: "HANDLER-SUMMARY-CANARY"})
	b.add(event.InterruptResolved, event.InterruptResolvedPayload{Trigger: "loop_check", Handler: "orchestrator", Target: "orchestrator-0-1", Action: "continue", Summary: "HANDLER-RESOLVED-CANARY"})
	// An operator inquiry: the operator's words are kept, the handler's
	// answer (a child conversation) is not.
	b.add(event.Interrupt, event.InterruptPayload{Trigger: "inquiry", Handler: "inquiry_responder", Target: "orchestrator-0-1", Message: "How far along are you?"})
	b.add(event.RoleStart, event.RoleStartPayload{Role: "inquiry_responder", RoleID: "inquiry_responder-0-4", Depth: 0, Task: "INQUIRY-TASK-CANARY"})
	b.add(event.RoleFinished, event.RoleFinishedPayload{Role: "inquiry_responder", RoleID: "inquiry_responder-0-4", Depth: 0, Status: "success", Summary: "INQUIRY-ANSWER-CANARY"})
	b.add(event.InterruptResolved, event.InterruptResolvedPayload{Trigger: "inquiry", Handler: "inquiry_responder", Target: "orchestrator-0-1", Action: "answered", Summary: "INQUIRY-ANSWER-CANARY"})
	// The entry role's own question, with its visible text as context.
	b.add(event.AskHuman, event.AskHumanPayload{ID: "q-entry", Role: "orchestrator", RoleID: "orchestrator-0-1", Question: "Keep the old API?",
		AssistantText: "Both are possible.", Options: []event.Option{{Label: "OPTION-CANARY"}}})
	b.add(event.HumanAnswer, event.HumanAnswerPayload{ID: "q-entry", Answer: "Yes, keep it", Source: "browser"})
	b.add(event.ContextCompacted, event.ContextCompactedPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", DroppedMessages: 424242})
	card := event.Card{Status: "error", Summary: "The parser is half done.",
		Error: &event.ErrorInfo{Kind: "llm_unavailable", Message: "The model stopped answering.", Details: json.RawMessage(`{"body":"ERROR-DETAIL-CANARY"}`)}}
	b.add(event.RoleFinished, event.RoleFinishedPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Status: "error", Summary: card.Summary, Error: card.Error})
	b.add(event.RunStatus, event.RunStatusPayload{Status: "error", Card: &card, Error: card.Error})

	th := Derive([]Run{{RunID: "run-20260301-100000", Task: "Fix the parser", Status: "error", Events: b.evs}})
	raw := marshalThread(t, th)
	for _, canary := range []string{"PROVIDER-BODY", "SYSTEM-PROMPT", "INTERNAL-TURN", "REASONING", "TOOL-ARG", "TOOL-RESULT",
		"CHILD-TASK", "CHILD-QUESTION", "CHILD-ANSWER", "CHILD-SUMMARY", "HANDLER-TASK", "HANDLER-SUMMARY", "HANDLER-RESOLVED",
		"OBSERVE", "INQUIRY-TASK", "INQUIRY-ANSWER", "OPTION", "ERROR-DETAIL", "123456789", "987654321", "424242", "coder-1-2"} {
		if bytes.Contains(raw, []byte(canary)) {
			t.Errorf("excluded content %q crossed into the thread: %s", canary, raw)
		}
	}
	if got, want := kinds(th), "marker:started human marker:inquiry marker:inquiry question answer orchestrator marker:finished"; got != want {
		t.Fatalf("entries = %s, want %s", got, want)
	}
	e := th.Entries
	if e[2].Text != "Operator inquiry: How far along are you?" || e[3].Text != "The inquiry was answered" {
		t.Errorf("inquiry markers = %q, %q", e[2].Text, e[3].Text)
	}
	if e[4].Text != "Keep the old API?" || e[4].Context != "Both are possible." {
		t.Errorf("question = %+v", e[4])
	}
	if e[5].Text != "Yes, keep it" || e[5].Label != "browser" {
		t.Errorf("answer = %+v", e[5])
	}
	if e[6].Text != "The parser is half done." || e[6].Context != "The model stopped answering." || e[6].Label != "error" {
		t.Errorf("result = %+v", e[6])
	}
	if e[7].Text != "Run finished: error" {
		t.Errorf("final marker = %q", e[7].Text)
	}
	if id := th.Identity; id.Questions != 1 || id.Answered != 1 || id.LatestHumanText != "Yes, keep it" {
		t.Errorf("identity = %+v (child questions never count)", id)
	}
}

func chain(t *testing.T) []Run {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	r1 := newLog(t, t0).start("run-20260301-100000", "Write the tokenizer", "").finish("Tokenizer written.")
	r2 := newLog(t, t0.Add(time.Hour)).start("run-20260301-110000", "Now add **tests**", "run-20260301-100000")
	r2.add(event.AskHuman, event.AskHumanPayload{ID: "q1", Role: "orchestrator", RoleID: "orchestrator-0-1", Question: "Table tests?", Context: "Either works."})
	card := event.Card{Status: "needs_clarification", Summary: "Waiting for an answer to: Table tests?"}
	r2.add(event.RoleFinished, event.RoleFinishedPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Status: card.Status, Summary: card.Summary})
	r2.add(event.RunStatus, event.RunStatusPayload{Status: card.Status, Card: &card})
	r3 := newLog(t, t0.Add(2*time.Hour)).start("run-20260301-120000", "Yes, table tests", "run-20260301-110000").finish("Tests written.")
	return []Run{
		{RunID: "run-20260301-100000", Task: "Write the tokenizer", Status: "success", StartedAt: t0, Events: r1.evs},
		{RunID: "run-20260301-110000", Task: "Now add **tests**", Status: "needs_clarification", ContinuesFrom: "run-20260301-100000", Events: r2.evs},
		{RunID: "run-20260301-120000", Task: "Yes, table tests", Status: "success", ContinuesFrom: "run-20260301-110000", Events: r3.evs},
	}
}

func TestThreadOfAContinuationChain(t *testing.T) {
	th := Derive(chain(t))
	id := th.Identity
	if id.FirstTask != "Write the tokenizer" || id.Runs != 3 || id.Continuations != 2 || id.Questions != 1 || id.Answered != 0 ||
		id.LatestHumanText != "Yes, table tests" {
		t.Fatalf("identity = %+v", id)
	}
	want := "marker:started human orchestrator marker:finished " +
		"marker:continued human question orchestrator marker:finished " +
		"marker:continued human orchestrator marker:finished"
	if got := kinds(th); got != want {
		t.Fatalf("entries =\n%s\nwant\n%s", got, want)
	}
	var runs []string
	for _, e := range th.Entries {
		if e.Kind == Human {
			runs = append(runs, e.RunID)
		}
	}
	if strings.Join(runs, ",") != "run-20260301-100000,run-20260301-110000,run-20260301-120000" {
		t.Fatalf("tasks by run = %v", runs)
	}
	if got := th.Entries[4].Text; got != "Run run-20260301-110000 started, continuing run-20260301-100000" {
		t.Fatalf("continuation marker = %q", got)
	}
	for i := 1; i < len(th.Entries); i++ {
		if th.Entries[i].At.Before(th.Entries[i-1].At) {
			t.Fatalf("entries out of order at %d", i)
		}
	}
}

func TestThreadIsDeterministic(t *testing.T) {
	a := marshalThread(t, Derive(chain(t)))
	for i := 0; i < 5; i++ {
		if b := marshalThread(t, Derive(chain(t))); !bytes.Equal(a, b) {
			t.Fatalf("derivation %d differs:\n%s\n%s", i, a, b)
		}
	}
	var empty Thread
	if err := json.Unmarshal(marshalThread(t, Derive(nil)), &empty); err != nil || empty.Entries == nil {
		t.Fatalf("an empty chain serialises entries as [] (got %v, %v)", empty.Entries, err)
	}
}

func TestThreadMarkers(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	b := newLog(t, t0).start("run-20260301-100000", "Long job", "")
	b.add(event.RunStatus, event.RunStatusPayload{Status: "paused", Reason: "paused by the operator"})
	b.add(event.RunStatus, event.RunStatusPayload{Status: "running", Reason: "resumed by the operator"})
	b.add(event.RunStatus, event.RunStatusPayload{Status: "suspended", Reason: "PLATFORM-REASON"})
	b.add(event.RunStatus, event.RunStatusPayload{Status: "running"})
	b.add(event.RunStatus, event.RunStatusPayload{Status: "interrupted", Reason: "stopped"})
	b.add(event.RunResumed, event.RunResumedPayload{RunID: "run-20260301-100000", ResumedFrames: 1})
	b.add(event.PlanModification, event.PlanModificationPayload{Target: "orchestrator-0-1", TargetRole: "orchestrator", Message: "Skip the docs"})
	card := event.Card{Status: "error", Summary: "The operator terminated the run.", Error: &event.ErrorInfo{Kind: "interrupted", Message: "The operator terminated the run."}}
	b.add(event.RoleFinished, event.RoleFinishedPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Status: "error", Summary: card.Summary, Error: card.Error})
	b.add(event.RunStatus, event.RunStatusPayload{Status: "interrupted", Card: &card})
	th := Derive([]Run{{RunID: "run-20260301-100000", Status: "interrupted", Events: b.evs}})
	want := "marker:started human marker:paused marker:resumed marker:suspended marker:resumed marker:interrupted marker:resumed marker:plan_modification orchestrator marker:terminated"
	if got := kinds(th); got != want {
		t.Fatalf("entries =\n%s\nwant\n%s", got, want)
	}
	raw := marshalThread(t, th)
	if bytes.Contains(raw, []byte("PLATFORM-REASON")) {
		t.Error("markers are fixed labels, not log reasons")
	}
	if th.Entries[8].Text != "Operator plan modification: Skip the docs" {
		t.Errorf("plan modification marker = %q", th.Entries[8].Text)
	}
	if th.Entries[9].Context != "" {
		t.Errorf("an error message equal to the summary is not repeated: %+v", th.Entries[9])
	}
}

func TestThreadOfARunWithoutALog(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	th := Derive([]Run{{RunID: "run-20260301-100000", Task: "Lost log", Status: "interrupted", StartedAt: t0}})
	if got := kinds(th); got != "marker:started human marker:interrupted" {
		t.Fatalf("entries = %s", got)
	}
	if th.Identity.FirstTask != "Lost log" || !th.Entries[1].At.Equal(t0) {
		t.Fatalf("thread = %+v", th)
	}
}

// loadLogFrom reads a log.jsonl fixture under testdata/dir.
func loadLogFrom(t *testing.T, dir, name string) (events []event.Event, badLines int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e event.Event
		if err := json.Unmarshal(line, &e); err != nil {
			badLines++
			continue
		}
		e.Seq = int64(len(events))
		events = append(events, e)
	}
	return events, badLines
}
