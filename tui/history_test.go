package tui

import (
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/store"
)

func TestHistoryResumesAnUnfinishedRun(t *testing.T) {
	f := newFakeSession(t, nil)
	m := New(f, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	now := time.Now()
	press(m, keyMsg("2"))
	m.Update(historyMsg{rows: []historyRow{
		{id: "run-20260101-000002", meta: &store.Meta{RunID: "run-20260101-000002", Status: store.StatusSuccess, StartedAt: now}, summary: "done one"},
		{id: "run-20260101-000001", meta: &store.Meta{RunID: "run-20260101-000001", Status: store.StatusRunning, StartedAt: now}, summary: "stopped one"},
	}})
	if !strings.Contains(m.View(), "r resume") {
		t.Fatalf("History should offer resume:\n%s", m.View())
	}
	press(m, keyMsg("r"))
	if len(f.resumed) != 0 || !strings.Contains(m.notice, "Only an unfinished run can be resumed") {
		t.Fatalf("a finished run must not be resumed; resumed %v", f.resumed)
	}
	m.screen = screenHistory
	press(m, keyMsg("j"), keyMsg("r"))
	if len(f.resumed) != 1 || f.resumed[0] != "run-20260101-000001" {
		t.Fatalf("resumed %v, want the stopped run", f.resumed)
	}
}

// TestHistoryResumesABudgetStoppedRun: a run its budget ended is status
// error, yet resumable (the console's --max-* flags give the new limits).
func TestHistoryResumesABudgetStoppedRun(t *testing.T) {
	f := newFakeSession(t, nil)
	m := New(f, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	press(m, keyMsg("2"))
	m.Update(historyMsg{rows: []historyRow{{id: "run-20260101-000001", summary: "spent", meta: &store.Meta{
		RunID: "run-20260101-000001", Status: store.StatusError, StartedAt: time.Now(),
		Error: &store.MetaError{Kind: "budget_exceeded", Message: "The run's budget is spent"}}}}})
	press(m, keyMsg("r"))
	if len(f.resumed) != 1 || f.resumed[0] != "run-20260101-000001" {
		t.Fatalf("resumed %v, notice %q; want the budget-stopped run", f.resumed, m.notice)
	}
}
