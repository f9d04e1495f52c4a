package render

import (
	"testing"

	"github.com/guildhall/guildhall/runner/event"
)

func TestOutcomeVerdict(t *testing.T) {
	cases := []struct {
		outcome, kind, detail string
		want                  string
	}{
		{"success", "", "", "✓ success"},
		{"success", "", "6 passed", "✓ success · 6 passed"},
		{OutcomeFailed, "", "exit 1", "✗ failed · exit 1"},
		{"error", "not_found", "", "✗ error · not_found"},
		{"error", "interrupted", "", "■ interrupted"},
		{OutcomeInterrupted, "", "", "■ interrupted"},
		{OutcomeTerminated, "", "", "■ terminated"},
		{"needs_clarification", "", "", "■ needs clarification"},
		{"", "", "", ""},
	}
	for _, c := range cases {
		if got := OutcomeVerdict(c.outcome, c.kind, c.detail).Text(); got != c.want {
			t.Errorf("OutcomeVerdict(%q, %q, %q) = %q, want %q", c.outcome, c.kind, c.detail, got, c.want)
		}
	}
}

// TestModelShowsOutcomesAsTheyAre: a tool that ran a failing command is a
// failed return with its detail, in the model every view reads; a role
// stopped by a plan change returns interrupted.
func TestModelShowsOutcomesAsTheyAre(t *testing.T) {
	evs := []event.Event{
		mkEvent(t, 0, event.RunStarted, event.RunStartedPayload{RunID: "run-1", Task: "fix", EntryRole: "orchestrator"}),
		mkEvent(t, 1, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1"}),
		mkEvent(t, 2, event.RoleStart, event.RoleStartPayload{Role: "coder", RoleID: "coder-1-2", Depth: 1, ParentID: "orchestrator-0-1"}),
		mkEvent(t, 3, event.ToolCall, event.ToolCallPayload{Role: "coder", RoleID: "coder-1-2", Tool: "test", CallID: "c1", Arguments: `{"commands":["sh test.sh"]}`}),
		mkEvent(t, 4, event.ToolResult, event.ToolResultPayload{Role: "coder", RoleID: "coder-1-2", Tool: "test", CallID: "c1", Kind: "success",
			Outcome: &event.ToolOutcome{Failed: true, ExitCode: 1, Commands: 1, FailedCommands: 1, ChecksPassed: 4, ChecksFailed: 2}}),
		mkEvent(t, 5, event.ToolCall, event.ToolCallPayload{Role: "coder", RoleID: "coder-1-2", Tool: "run_shell", CallID: "c2", Arguments: `{"command":"false"}`}),
		mkEvent(t, 6, event.ToolResult, event.ToolResultPayload{Role: "coder", RoleID: "coder-1-2", Tool: "run_shell", CallID: "c2", Kind: "success",
			Result: []byte(`{"kind":"success","data":{"exitCode":1,"stdout":"","stderr":""}}`)}),
		mkEvent(t, 7, event.RoleFinished, event.RoleFinishedPayload{Role: "coder", RoleID: "coder-1-2", Depth: 1, Status: "error",
			Summary: "stopped", Error: &event.ErrorInfo{Kind: "interrupted"}}),
	}
	m := replay(evs)
	var got []string
	for _, op := range m.Operations {
		if op.Kind == OpReturn {
			got = append(got, op.Outcome+"/"+op.OutcomeDetail)
		}
	}
	want := []string{"failed/2 failed", "failed/exit 1", "interrupted/"}
	if len(got) != len(want) {
		t.Fatalf("returns %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("return %d = %s, want %s", i, got[i], want[i])
		}
	}
}
