package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
)

// planChange is a run whose coder ran a command that exited 1 ("1 passed,
// 1 failed") and was then stopped by an operator plan change.
func planChange(t *testing.T, w, h int) *Model {
	t.Helper()
	m, _ := console(t, loadEvents(t, "planchange.jsonl"), w, h)
	press(m, keys("esc")...)
	return m
}

// TestOutcomesAsTheyAreInTheConsole: the failed command reads failed and
// the interrupted coder reads interrupted in the flow graph, the sequence
// view, the inspector and the log screen.
func TestOutcomesAsTheyAreInTheConsole(t *testing.T) {
	m := planChange(t, 80, 24)
	flow := shot(t, m)
	mustContain(t, flow, "■ Coder", "Shell ×1 ✗1", "Read file ×1 ✗1")
	if strings.Contains(flow, "✗ Coder") || strings.Contains(flow, "✓ Coder") {
		t.Errorf("the interrupted coder is drawn as an error or a success:\n%s", flow)
	}
	golden(t, "outcomes_flow_80x24", flow)

	m.flowSel = "coder-1-2"
	press(m, keys("enter")...)
	insp := shot(t, m)
	mustContain(t, insp, "Outcome     ■ interrupted")
	golden(t, "outcomes_inspect_coder_80x24", insp)

	m = planChange(t, 80, 24)
	m.flowSel = "coder-1-2\x00tool:run_shell"
	press(m, keys("enter")...)
	golden(t, "outcomes_inspect_shell_80x24", shot(t, m))
	mustContain(t, inspectorText(t, m), "Calls by Coder: 1 (1 failed)", "#1 ✗ failed · 1 failed", "$ printf", "1 passed, 1 failed",
		"Latest call: Coder runs a command", "Outcome     ✗ failed · 1 failed")

	m = planChange(t, 80, 24)
	press(m, keys("tab")...)
	seq := shot(t, m)
	mustContain(t, seq, "✗◀ 1 failed", "■◀")
	if strings.Contains(seq, "✓◀ Shell") {
		t.Errorf("the failed command answers with a check:\n%s", seq)
	}
	golden(t, "outcomes_sequence_80x24", seq)

	m = planChange(t, 80, 24)
	press(m, keys("5")...)
	logv := shot(t, m)
	mustContain(t, logv, "← run_shell ✗ failed: 1 passed, 1 failed · exit 1", "■ coder-1-2 interrupted:", "← read_file ✗ not_found")
	golden(t, "outcomes_log_80x24", logv)
}

// TestInspectorToolNodeShowsItsOwnRolesCalls: in the demo both the coder
// and the acceptance reviewer run the tests. The coder's Tests node shows
// the coder's two calls, the first failed with its output, and its latest
// call is the coder's, not the reviewer's later one.
func TestInspectorToolNodeShowsItsOwnRolesCalls(t *testing.T) {
	m, _ := console(t, loadEvents(t, "demo.jsonl"), 80, 24)
	press(m, keys("esc")...)
	m.flowSel = "coder-1-3\x00tool:test"
	press(m, keys("enter")...)
	golden(t, "outcomes_inspect_tests_80x24", shot(t, m))
	all := inspectorText(t, m)
	mustContain(t, all, "Calls by Coder: 2 (1 failed)", "#2 ✓ success · 6 passed", "#1 ✗ failed · 2 failed", "4 passed, 2 failed",
		"Latest call: Coder runs the tests")
	if strings.Contains(all, "Acceptance") {
		t.Errorf("the coder's Tests node shows another role's call:\n%s", all)
	}
}

// inspectorText is every page of the open inspector.
func inspectorText(t *testing.T, m *Model) string {
	t.Helper()
	var pages []string
	for range 20 {
		page := shot(t, m)
		if len(pages) > 0 && page == pages[len(pages)-1] {
			break
		}
		pages = append(pages, page)
		press(m, tea.KeyMsg{Type: tea.KeyPgDown})
	}
	return strings.Join(pages, "\n")
}

// noActionRun is a run whose orchestrator answered in words at once.
func noActionRun(t *testing.T) []event.Event {
	rec := &eventLog{tb: t, t0: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), step: time.Second}
	add := rec.add
	card := event.Card{Status: "success", Summary: "Sure! I have added the CONTRIBUTING.md file."}
	add(event.RunStarted, event.RunStartedPayload{RunID: "run-20261201-090000", Task: "Add a CONTRIBUTING.md file", Effort: "standard", EntryRole: "orchestrator"})
	add(event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "Add a CONTRIBUTING.md file"})
	add(event.LLMCallStart, event.LLMCallStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1"})
	add(event.LLMCall, event.LLMCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Usage: event.Usage{PromptTokens: 900, CompletionTokens: 12, TotalTokens: 912}})
	add(event.TextToolCalls, event.TextToolCallsPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Format: "hermes",
		Message: "The model endpoint returns tool calls as text (Hermes/Qwen <tool_call>) instead of through the API; Guildhall did not run them. The usual cause: llama-server started without --jinja, or a chat template without tools."})
	add(event.ImplicitFinish, event.FailurePayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Status: "success", Message: "reply had no tool calls; its content is the summary"})
	add(event.RoleFinished, event.RoleFinishedPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Status: "success", Summary: card.Summary})
	add(event.RunStatus, event.RunStatusPayload{Status: "success", Card: &card, NoAction: true})
	return rec.events
}

// TestResultCardSaysTheModelDidNothing: a run whose model answered
// without any tool call is not shown as work done, and the note that the
// endpoint writes tool calls as text is on the banner and among the
// notes.
func TestResultCardSaysTheModelDidNothing(t *testing.T) {
	m, _ := console(t, noActionRun(t), 80, 24)
	loadCard(m)
	got := shot(t, m)
	mustContain(t, got, "The model answered without doing anything")
	golden(t, "outcomes_result_noaction_80x24", got)

	press(m, keys("esc")...)
	m.runNoteUnseen = true // a live run sets it when the note arrives
	mustContain(t, shot(t, m), "ℹ note (N): The model endpoint returns tool calls as text")
	press(m, keys("N")...)
	notes := strings.Join(strings.Fields(shot(t, m)), " ")
	mustContain(t, notes, "Notes (1)", "llama-server started without --jinja")
	if render.NoActionText == "" {
		t.Fatal("no text")
	}
}
