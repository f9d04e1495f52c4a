package tui

import (
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/runner/event"
)

// syntheticRun builds a live run of about ops operations: the orchestrator
// delegates to a coder again and again, and each coder calls tools.
func syntheticRun(tb testing.TB, ops int) []event.Event {
	tb.Helper()
	rec := &eventLog{tb: tb, t0: time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC), step: time.Millisecond}
	add := rec.add
	add(event.RunStarted, event.RunStartedPayload{RunID: "run-20250314-093000", Task: "Synthetic long run", Effort: "standard", EntryRole: "orchestrator"})
	add(event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "Synthetic long run"})
	n := 1
	for k := 0; n < ops; k++ {
		child := fmt.Sprintf("coder-1-%d", k+2)
		add(event.ToolCall, event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "agent", CallID: "a" + child, Arguments: `{"role":"coder","task":"step"}`})
		add(event.AgentCall, event.AgentCallPayload{Parent: "orchestrator", ParentID: "orchestrator-0-1", Child: "coder", Depth: 1, Task: "step"})
		add(event.RoleStart, event.RoleStartPayload{Role: "coder", RoleID: child, Depth: 1, Task: "step", Parent: "orchestrator", ParentID: "orchestrator-0-1"})
		n++
		for i := 0; i < 24 && n < ops; i++ {
			add(event.LLMCall, event.LLMCallPayload{Role: "coder", RoleID: child, Usage: event.Usage{TotalTokens: 1000}, ElapsedMs: 900})
			tool := [...]string{"read_file", "run_shell", "edit_file"}[i%3]
			id := fmt.Sprintf("c%d-%d", k, i)
			add(event.ToolCall, event.ToolCallPayload{Role: "coder", RoleID: child, Tool: tool, CallID: id, Arguments: `{"path":"x.go"}`})
			add(event.ToolResult, event.ToolResultPayload{Role: "coder", RoleID: child, Tool: tool, CallID: id, Kind: "success", Result: []byte(`{"kind":"success","data":"ok"}`), ElapsedMs: 12})
			n += 2
		}
		if n >= ops {
			break // leave the last coder working: a live run
		}
		add(event.RoleFinished, event.RoleFinishedPayload{Role: "coder", RoleID: child, Depth: 1, Status: "success", Summary: "done", Parent: "orchestrator", ParentID: "orchestrator-0-1"})
		add(event.ToolResult, event.ToolResultPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "agent", CallID: "a" + child, Kind: "success", Result: []byte(`{"kind":"success"}`)})
		n++
	}
	return rec.events
}

func benchFrame(b *testing.B, ops int, seq bool) {
	events := syntheticRun(b, ops)
	m := New(newFakeSession(b, events), Options{Labels: seedLabels(b), NoAnimation: true, MarkdownStyle: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	if seq {
		m.Update(keyMsg("tab"))
	}
	if got := len(m.view.model.Operations); got < ops*9/10 {
		b.Fatalf("built %d operations, want about %d", got, ops)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.phase = i
		_ = m.View()
	}
}

func BenchmarkFrameFlow1k(b *testing.B)      { benchFrame(b, 1_000, false) }
func BenchmarkFrameFlow10k(b *testing.B)     { benchFrame(b, 10_000, false) }
func BenchmarkFrameSequence1k(b *testing.B)  { benchFrame(b, 1_000, true) }
func BenchmarkFrameSequence10k(b *testing.B) { benchFrame(b, 10_000, true) }

// BenchmarkStartupDemo is model construction plus the first frame for the
// demo's recorded events.
func BenchmarkStartupDemo(b *testing.B) {
	events := loadEvents(b, "delegation.jsonl")
	labels := seedLabels(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := New(newFakeSession(b, events), Options{Labels: labels, NoAnimation: true, MarkdownStyle: "notty"})
		m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		_ = m.View()
	}
}

func BenchmarkFrameSequence100k(b *testing.B) { benchFrame(b, 100_000, true) }

// BenchmarkLogFrame100k is one frame of the Log screen of a run of about
// 100,000 events, scrolled a page each frame: the cost of paging through
// a long run's log.
func BenchmarkLogFrame100k(b *testing.B) {
	events := syntheticRun(b, 100_000) // about 100k log lines
	m := New(newFakeSession(b, events), Options{Labels: seedLabels(b), NoAnimation: true, MarkdownStyle: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	m.Update(keyMsg("esc"))
	m.Update(keyMsg("5"))
	if n := len(m.view.log); n < 95_000 {
		b.Fatalf("%d log lines, want about 100k", n)
	}
	b.ReportMetric(float64(len(events)), "events")
	b.ReportMetric(float64(len(m.view.log)), "lines")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%200 < 100 {
			m.Update(tea.KeyMsg{Type: tea.KeyPgUp})
		} else {
			m.Update(tea.KeyMsg{Type: tea.KeyPgDown})
		}
		_ = m.View()
	}
}

// BenchmarkLogSearch100k is a search of a 100k-event log and its first
// frame; BenchmarkLogSearchNext100k moves to the next match.
func BenchmarkLogSearch100k(b *testing.B) {
	m := logConsole(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(keyMsg("/"))
		m.Update(keyMsg("edit_file"))
		m.Update(keyMsg("enter"))
		_ = m.View()
	}
}

func BenchmarkLogSearchNext100k(b *testing.B) {
	m := logConsole(b)
	m.Update(keyMsg("/"))
	m.Update(keyMsg("edit_file"))
	m.Update(keyMsg("enter"))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(keyMsg("n"))
		_ = m.View()
	}
}

func logConsole(b *testing.B) *Model {
	events := syntheticRun(b, 100_000)
	m := New(newFakeSession(b, events), Options{Labels: seedLabels(b), NoAnimation: true, MarkdownStyle: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	m.Update(keyMsg("esc"))
	m.Update(keyMsg("5"))
	return m
}
