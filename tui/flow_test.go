package tui

import (
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// lineWith returns the frame's line holding sub.
func lineWith(t *testing.T, frame, sub string) string {
	t.Helper()
	for _, l := range strings.Split(frame, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	t.Fatalf("no line holds %q:\n%s", sub, frame)
	return ""
}

// TestFlowTreeAttachesCalleesToTheirCaller: the planner's read and the
// coder's tools are in the same column, but each hangs off its own caller.
func TestFlowTreeAttachesCalleesToTheirCaller(t *testing.T) {
	got := frame(t, loadEvents(t, "delegation.jsonl"), 100, 30, "esc")
	planner := lineWith(t, got, "Planner 2.7k")
	if !strings.Contains(planner, "└▶✓ Planner 2.7k ──▶⚙ Read file ×1") {
		t.Errorf("the planner's read is not on the planner's row: %q", planner)
	}
	coder := lineWith(t, got, "Coder 9.3k")
	if !strings.Contains(coder, "─┬▶✓ Coder 9.3k") || !strings.Contains(coder, "─┬▶⚙ Shell ×2") {
		t.Errorf("coder row: %q", coder)
	}
	write := lineWith(t, got, "⚙ Write file")
	if strings.Contains(write, "Planner") || !strings.Contains(write, "├▶⚙ Write file ×1") {
		t.Errorf("write row: %q", write)
	}
	// The orchestrator's bracket passes the coder's subtree down to the
	// planner, in the cell column of its tee.
	col := ansi.StringWidth(coder[:strings.Index(coder, "┬▶✓ Coder")])
	if cut := ansi.Cut(write, col, col+1); cut != "│" {
		t.Errorf("no bracket under the orchestrator's tee on %q (found %q)", write, cut)
	}
}

func TestFlowNarrowCollapsesShallowColumns(t *testing.T) {
	got := frame(t, loadEvents(t, "delegation.jsonl"), 30, 16, "esc")
	for i, l := range strings.Split(got, "\n") {
		if ansi.StringWidth(l) > 30 {
			t.Errorf("line %d is %d cells wide: %q", i, ansi.StringWidth(l), l)
		}
	}
	// Token counts go before labels are cut, and no figure is ever cut.
	mustContain(t, got, "… ✓ Coder", "─┬▶⚙ Shell ×2", "⚙ Read file ×1")
	if cut := regexp.MustCompile(`[0-9][.,]?…`).FindString(got); cut != "" {
		t.Errorf("a figure is cut (%q):\n%s", cut, got)
	}
}

func TestFlowCountsWhatDoesNotFit(t *testing.T) {
	m := New(newFakeSession(t, syntheticRun(t, 300)), Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	got := ansi.Strip(m.View())
	if !regexp.MustCompile(`── Main run · \+\d+ more ─`).MatchString(got) {
		t.Errorf("no +N more on the lane:\n%s", got)
	}
	// The working coder (on the open chain) is first under the orchestrator.
	mustContain(t, got, "──▶● Orchestrator ─┬▶● Coder")
}

func TestFlowSelectionFollowsTheTree(t *testing.T) {
	m := New(newFakeSession(t, loadEvents(t, "delegation.jsonl")), Options{Labels: seedLabels(t), NoAnimation: true})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(keyMsg("esc"))
	m.flowSel = "coder-1-3"
	m.Update(keyMsg("right"))
	if flowPID(m.flowSel) != "tool:run_shell" || !strings.HasPrefix(m.flowSel, "coder-1-3\x00") {
		t.Fatalf("right went to %q", m.flowSel)
	}
	m.Update(keyMsg("left"))
	m.Update(keyMsg("left"))
	if !strings.HasPrefix(m.flowSel, "orchestrator") {
		t.Fatalf("left twice went to %q", m.flowSel)
	}
	// The inspector shows the participant behind a tool node.
	m.flowSel = "coder-1-3\x00tool:run_shell"
	m.Update(keyMsg("enter"))
	mustContain(t, ansi.Strip(m.View()), "Invocations")
}
