package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/runner/event"
)

// setupConsole is a 120×30 console that runs with setup, on a run of task
// whose orchestrator has just started.
func setupConsole(t *testing.T, setup, task string) *Model {
	t.Helper()
	evs := []event.Event{
		ev(t, event.RunStarted, event.RunStartedPayload{RunID: "run-20250314-093000", Task: task, Effort: "standard", EntryRole: "orchestrator"}),
		ev(t, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: task}),
	}
	m := New(newFakeSession(t, evs), Options{Labels: seedLabels(t), NoAnimation: true, Setup: setup})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	return m
}

// TestHeaderShowsSetupThenEgress: the header's second line says what the
// console runs with (sandbox, workspace trust) until something needs the
// line; a denied egress attempt then takes it, naming the host and the
// role, as inert text.
func TestHeaderShowsSetupThenEgress(t *testing.T) {
	setup := "sandbox: workspace-write, network allowlist (2 hosts) · workspace config ignored (not trusted yet)"
	m := setupConsole(t, setup, "Fetch modules")
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	if !strings.Contains(lines[1], setup) {
		t.Fatalf("header line 2 = %q, want the setup", lines[1])
	}
	m.applyEvent(ev(t, event.Egress, event.EgressPayload{Host: "evil\x1b]0;pwned\x07.example", Port: 443, Via: "proxy",
		RoleID: "coder-1-2", Reason: "not on the sandbox's network allowlist"}))
	raw := m.View()
	assertTerminalSafe(t, raw)
	lines = strings.Split(ansi.Strip(raw), "\n")
	if !strings.Contains(lines[1], "egress denied: evil.example:443 (coder-1-2 via proxy)") {
		t.Errorf("header line 2 = %q, want the denied egress", lines[1])
	}
}

// TestHeaderShowsAFailedMCPServer: an MCP server that stopped answering
// takes the header's second line, with its own message as inert text; one
// that came up does not.
func TestHeaderShowsAFailedMCPServer(t *testing.T) {
	setup := "sandbox: workspace-write, network off"
	m := setupConsole(t, setup, "Search issues")
	m.applyEvent(ev(t, event.MCPServer, event.MCPServerPayload{Server: "github", State: "ready", Tools: 12}))
	if lines := strings.Split(ansi.Strip(m.View()), "\n"); !strings.Contains(lines[1], setup) {
		t.Fatalf("header line 2 = %q after a server came up, want the setup still", lines[1])
	}
	m.applyEvent(ev(t, event.MCPServer, event.MCPServerPayload{Server: "git\x1b]52;c;cHduZWQ=\x07hub", State: "exited",
		Message: "exit status 1\x1b[2J: token refused"}))
	raw := m.View()
	assertTerminalSafe(t, raw)
	lines := strings.Split(ansi.Strip(raw), "\n")
	if !strings.Contains(lines[1], "mcp server github exited: exit status 1") || !strings.Contains(lines[1], "token refused") {
		t.Errorf("header line 2 = %q, want the failed server and its message", lines[1])
	}
}
