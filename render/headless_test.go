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
