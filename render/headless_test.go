package render

import (
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
)

func TestHeadlessEgressLines(t *testing.T) {
	cases := []struct {
		p    event.EgressPayload
		want string
	}{
		{event.EgressPayload{Host: "proxy.golang.org", Port: 443, Allowed: true, Via: "proxy", RoleID: "coder-1-2"},
			"  ⇄ egress allowed: proxy.golang.org:443 (coder-1-2 via proxy)"},
		{event.EgressPayload{Host: "evil.example", Port: 80, Via: "fetch_url", RoleID: "researcher-1-3", Reason: "not on the sandbox's network allowlist"},
			"  ⛔ egress denied: evil.example:80 (researcher-1-3 via fetch_url): not on the sandbox's network allowlist"},
		{event.EgressPayload{Host: "x\x1b]52;c;cHduZWQ=\x07.example", Port: 443, Via: "proxy", Reason: "\x1b[2Jcleared"},
			"  ⛔ egress denied: x.example:443 (via proxy): cleared"},
	}
	for _, c := range cases {
		e, err := event.New(time.Now(), event.Egress, c.p)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := HeadlessLine(e)
		if !ok || got != c.want {
			t.Errorf("HeadlessLine(%+v) = %q, %v; want %q", c.p, got, ok, c.want)
		}
		if strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("control bytes in %q", got)
		}
	}
}

func TestHeadlessLinesSayWhatHappened(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ev := func(typ event.Type, p any) event.Event {
		e, err := event.New(at, typ, p)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	long := strings.Repeat("x", 400)
	cases := []struct {
		name string
		e    event.Event
		want string
	}{
		{"server error with its own message", ev(event.ProviderFailure, event.ProviderFailurePayload{Category: "server", StatusCode: 500, Attempt: 1, Retrying: true,
			Message: "Failed to parse tool call arguments as JSON", Body: "BODY-NOT-SHOWN"}),
			"! provider server (attempt 1) HTTP 500: Failed to parse tool call arguments as JSON, retrying"},
		{"empty reply says why", ev(event.ProviderFailure, event.ProviderFailurePayload{Category: "malformed", Attempt: 2, Retrying: true,
			Message: "empty reply: the model ended its turn at once, with no text and no tool call"}),
			"! provider malformed (attempt 2): empty reply: the model ended its turn at once, with no text and no tool call, retrying"},
		{"a hostile message stays inert and short", ev(event.ProviderFailure, event.ProviderFailurePayload{Category: "server", Attempt: 3,
			Message: "boom\x1b]52;c;SGVsbG8=\x07\x1b[2J\nsecond line " + long}),
			"! provider server (attempt 3): boom second line " + strings.Repeat("x", 200-len("boom second line ")-1) + "…"},
		{"no message, as before", ev(event.ProviderFailure, event.ProviderFailurePayload{Category: "network", Attempt: 1, Retrying: true}),
			"! provider network (attempt 1), retrying"},
		{"calls after finish", ev(event.ToolCallsIgnored, event.ToolCallsIgnoredPayload{Role: "coder", RoleID: "coder-1-2", After: "finish", Count: 50,
			Tools: []event.ToolCount{{Tool: "read_file", Count: 48}, {Tool: "write\x1b[31m_file", Count: 2}}, Reason: "finish ended the role"}),
			"! coder-1-2: 50 tool calls after finish were not run (read_file ×48, write_file ×2): finish ended the role"},
		{"a test that exited 1 is failed", ev(event.ToolResult, event.ToolResultPayload{RoleID: "coder-1-3", Tool: "test", Kind: "success",
			Outcome: &event.ToolOutcome{Failed: true, ExitCode: 1, Commands: 1, FailedCommands: 1, ChecksPassed: 4, ChecksFailed: 2}}),
			"  coder-1-3 ← test ✗ failed: 4 passed, 2 failed · exit 1"},
		{"an old log's body says it failed", ev(event.ToolResult, event.ToolResultPayload{RoleID: "coder-1-2", Tool: "run_shell", Kind: "success",
			Result: []byte(`{"kind":"success","data":{"exitCode":2,"stdout":"","stderr":"boom"}}`)}),
			"  coder-1-2 ← run_shell ✗ failed: exit 2"},
		{"passing checks", ev(event.ToolResult, event.ToolResultPayload{RoleID: "coder-1-3", Tool: "test", Kind: "success",
			Outcome: &event.ToolOutcome{Commands: 1, ChecksPassed: 6}}),
			"  coder-1-3 ← test success · 6 passed"},
		{"a tool error", ev(event.ToolResult, event.ToolResultPayload{RoleID: "coder-1-3", Tool: "read_file", Kind: "not_found",
			Result: []byte(`{"kind":"not_found","message":"x.go: not found"}`)}),
			"  coder-1-3 ← read_file ✗ not_found: x.go: not found"},
		{"a role stopped by a plan change is interrupted", ev(event.RoleFinished, event.RoleFinishedPayload{RoleID: "coder-1-3", Depth: 1, Status: "error",
			Summary: "Stopped: the operator changed the plan.", Error: &event.ErrorInfo{Kind: "interrupted"}}),
			"  ■ coder-1-3 interrupted: Stopped: the operator changed the plan."},
		{"a role error", ev(event.RoleFinished, event.RoleFinishedPayload{RoleID: "coder-1-3", Depth: 1, Status: "error",
			Summary: "no", Error: &event.ErrorInfo{Kind: "empty_reply"}}),
			"  ✗ coder-1-3 error: no [empty_reply]"},
		{"calls written as text", ev(event.TextToolCalls, event.TextToolCallsPayload{RoleID: "solo-0-1", Format: "hermes", Executed: true,
			Message: "The model endpoint returns tool calls as text\x1b]0;t\x07 (Hermes/Qwen <tool_call>)"}),
			"! solo-0-1: The model endpoint returns tool calls as text (Hermes/Qwen <tool_call>)"},
		{"repetition", ev(event.Repetition, event.RepetitionPayload{RoleID: "coder-1-3", Count: 4, Tool: "read_file", Action: "stopped"}),
			"! coder-1-3 sent the same read_file call 4 times in a row: stopped (loop_detected)"},
		{"a window too small is on the first line", ev(event.RunStarted, event.RunStartedPayload{RunID: "run-20261201-100000", Effort: "standard", Task: "Say hello",
			WindowWarning: "the 4096-token context window is too small"}),
			"run run-20261201-100000 started (effort standard): Say hello · ⚠ the 4096-token context window is too small"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := HeadlessLine(c.e)
			if !ok || got != c.want {
				t.Errorf("line =\n%q\nwant\n%q", got, c.want)
			}
			if strings.ContainsAny(got, "\x1b\x07\n") || strings.Contains(got, "BODY-NOT-SHOWN") {
				t.Errorf("unsafe line %q", got)
			}
		})
	}
}
