package tui

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

func ev(t testing.TB, typ event.Type, p any) event.Event {
	t.Helper()
	e, err := event.New(time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC), typ, p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// sgr matches the style sequences the program itself emits.
var sgr = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// assertTerminalSafe fails if a frame holds any terminal control besides
// SGR styling, newlines and tabs.
func assertTerminalSafe(t *testing.T, frame string) {
	t.Helper()
	rest := sgr.ReplaceAllString(frame, "")
	for i, r := range rest {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			t.Fatalf("control rune %U at byte %d in frame: %q", r, i, rest[max(0, i-20):min(len(rest), i+20)])
		}
	}
}

const hostile = "evil \x1b]52;c;cGF5bG9hZA==\x07 \x1b[2J\x1b]0;title\x07 \u009b31m \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ &#27;[31m end"

func questionRun(t *testing.T, q event.AskHumanPayload) []event.Event {
	return []event.Event{
		ev(t, event.RunStarted, event.RunStartedPayload{RunID: "run-20250314-093000", Task: "Task " + hostile, Effort: "standard", EntryRole: "orchestrator"}),
		ev(t, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: hostile}),
		ev(t, event.ToolCall, event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "ask_human", CallID: "q1", Arguments: "{}"}),
		ev(t, event.AskHuman, q),
	}
}

func TestQuestionModalIsSafeAndUsesFallback(t *testing.T) {
	q := event.AskHumanPayload{
		ID: "q-1", Role: "orchestrator", RoleID: "orchestrator-0-1",
		Question:      "Which **one**? " + hostile,
		AssistantText: "I looked at the README " + hostile,
		Options:       []event.Option{{Label: "First " + hostile, Description: "d " + hostile}, {Label: "Second"}},
	}
	m := New(newFakeSession(t, questionRun(t, q)), Options{Labels: seedLabels(t), NoAnimation: true})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	raw := m.View()
	assertTerminalSafe(t, raw)
	got := ansi.Strip(raw)
	mustContain(t, got, "Question", "run-20250314-093000 · Orchestrator asks", "Which",
		"Previous assistant message (no context was provided).", "I looked at the README", "1. First", "2. Second")

	// Pick the second option with a number key and send it.
	fs := m.sess.(*fakeSession)
	m.Update(keyMsg("2"))
	_, cmd := m.Update(keyMsg("enter"))
	if cmd == nil {
		t.Fatal("enter sent nothing")
	}
	m.Update(cmd())
	if fs.answers["q-1"] != "Second" {
		t.Fatalf("answer = %q, want Second", fs.answers["q-1"])
	}
}

func TestQuestionAnsweredElsewhereClosesWithNote(t *testing.T) {
	q := event.AskHumanPayload{ID: "q-1", Role: "orchestrator", RoleID: "orchestrator-0-1", Question: "Go on?", Context: "Some *context*."}
	m := New(newFakeSession(t, questionRun(t, q)), Options{Labels: seedLabels(t), NoAnimation: true})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	mustContain(t, ansi.Strip(m.View()), "Context", "context")
	fs := m.sess.(*fakeSession)
	fs.answers["q-1"] = "from the browser" // another client won
	m.Update(keyMsg("y"))
	m.Update(keyMsg("e"))
	m.Update(keyMsg("s"))
	_, cmd := m.Update(keyMsg("enter"))
	m.Update(cmd())
	got := ansi.Strip(m.View())
	if strings.Contains(got, "Go on?") {
		t.Errorf("the modal is still open:\n%s", got)
	}
	mustContain(t, got, "answered from another client")
}

func TestResultCardErrorDetailsCollapsed(t *testing.T) {
	detail := json.RawMessage(`{"body":"upstream said \u001b[31mno"}`)
	events := []event.Event{
		ev(t, event.RunStarted, event.RunStartedPayload{RunID: "run-20250314-093000", Task: "T", EntryRole: "orchestrator"}),
		ev(t, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "T"}),
		ev(t, event.RoleFinished, event.RoleFinishedPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Status: "error"}),
		ev(t, event.RunStatus, event.RunStatusPayload{Status: "error", Card: &event.Card{Status: "error", Summary: "It broke " + hostile, Artifacts: []string{"a/b.go", "evil\x1b[2J.go"}},
			Error: &event.ErrorInfo{Kind: "llm_unavailable", Message: "The model went away " + hostile, Details: detail}}),
	}
	m := New(newFakeSession(t, events), Options{Labels: seedLabels(t), NoAnimation: true})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	raw := m.View()
	assertTerminalSafe(t, raw)
	got := ansi.Strip(raw)
	mustContain(t, got, "Status: ✗ error", "It broke", "a/b.go", "evil.go", "The model went away", "▸ Technical details")
	if strings.Contains(got, "upstream said") || strings.Contains(got, "llm_unavailable") {
		t.Errorf("technical detail or error kind shown while collapsed:\n%s", got)
	}
	m.Update(keyMsg("d"))
	raw = m.View()
	assertTerminalSafe(t, raw)
	mustContain(t, ansi.Strip(raw), "▾ Technical details", "upstream said")
}

func TestInterruptModalShowsInquiryHistoryAndAnswerCard(t *testing.T) {
	events := loadEvents(t, "inquiry.jsonl")
	// Stop before the run's end so the run is live.
	var live []event.Event
	for _, e := range events {
		if e.Type == event.RunStatus {
			break
		}
		live = append(live, e)
	}
	m := New(newFakeSession(t, live[:10]), Options{Labels: seedLabels(t), NoAnimation: true})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	m.Update(eventsMsg{live[10:]})
	got := ansi.Strip(m.View())
	mustContain(t, got, "Answer from the run", "What is the coder doing right now?", "writing table tests")
	m.Update(keyMsg("esc"))
	m.Update(keyMsg("i"))
	got = ansi.Strip(m.View())
	mustContain(t, got, "Interrupt run-20250314-110000", "Ask the run a question", "You asked: What is the coder doing right now?", "writing table tests")
	m.Update(keyMsg("tab"))
	mustContain(t, ansi.Strip(m.View()), "▸ Change its plan")
}

func TestHelpListsEveryKeyAndScrolls(t *testing.T) {
	m := New(newFakeSession(t, nil), Options{Labels: seedLabels(t), NoAnimation: true})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(keyMsg("?"))
	seen := ansi.Strip(m.View())
	for i := 0; i < 6; i++ {
		m.Update(tea.KeyMsg{Type: tea.KeyPgDown})
		seen += ansi.Strip(m.View())
	}
	for _, k := range []string{"toggle Flow / Sequence", "submit the answer", "ctrl+s", "quit (asks first", "close the overlay", "copy raw"} {
		if !strings.Contains(seen, k) {
			t.Errorf("help never shows %q", k)
		}
	}
	m.Update(keyMsg("esc"))
	if strings.Contains(ansi.Strip(m.View()), "Keys · esc closes") {
		t.Error("esc did not close the help")
	}
}

func TestQuitAsksWhileLive(t *testing.T) {
	m := New(newFakeSession(t, loadEvents(t, "interrupt_live.jsonl")), Options{Labels: seedLabels(t), NoAnimation: true})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if _, cmd := m.Update(keyMsg("q")); cmd != nil {
		t.Fatal("q quit at once during a live run")
	}
	mustContain(t, ansi.Strip(m.View()), "A run is live. Quit?")
	_, cmd := m.Update(keyMsg("y"))
	if cmd == nil {
		t.Fatal("y did not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("y did not quit")
	}
}

func TestHistoryAndContinuationReference(t *testing.T) {
	fs := newFakeSession(t, nil)
	ws := fs.ws
	end := time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)
	meta := &store.Meta{RunID: "run-20250314-093000", Task: "Fix **everything** " + hostile, Effort: "standard", Status: "error",
		StartedAt: end.Add(-time.Minute), EndedAt: &end,
		Result: &store.MetaResult{Status: "error", Summary: "Half done " + hostile, Artifacts: []string{"x.go"}},
		Error:  &store.MetaError{Kind: "llm_unavailable", Message: "Provider down " + hostile, Detail: json.RawMessage(`{"status":503}`)}}
	writeMeta(t, ws, meta)
	m := New(fs, Options{Labels: seedLabels(t), NoAnimation: true})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	m.Update(keyMsg("H"))
	m.Update(loadHistory(ws)())
	m.Update(keyMsg("enter"))
	raw := m.View()
	assertTerminalSafe(t, raw)
	mustContain(t, ansi.Strip(raw), "run-20250314-093000", "✗ error", "Half done", "Provider down", "everything")

	m.Update(keyMsg("n"))
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlO})
	m.Update(keyMsg("enter"))
	raw = m.View()
	assertTerminalSafe(t, raw)
	got := ansi.Strip(raw)
	mustContain(t, got, "Continue from run-20250314-093000", "Prior task", "Result summary", "x.go", "Provider down", "▸ Technical details")
	if strings.Contains(got, `"status": 503`) {
		t.Errorf("technical detail shown while collapsed:\n%s", got)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlD})
	mustContain(t, ansi.Strip(m.View()), "▾ Technical details", `"status": 503`)
}

func TestComposeSubmitReportsRunInProgress(t *testing.T) {
	m := New(newFakeSession(t, nil), Options{Labels: seedLabels(t), NoAnimation: true})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(keyMsg("n"))
	for _, r := range "Add a flag" {
		m.Update(keyMsg(string(r)))
	}
	m.Update(tea.KeyMsg{Type: tea.KeyEnter, Alt: true})
	m.Update(keyMsg("x"))
	if got := m.compose.editor.Value(); got != "Add a flag\nx" {
		t.Fatalf("editor = %q", got)
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	m.Update(cmd())
	mustContain(t, ansi.Strip(m.View()), "a run is in progress")
}

func TestTranscriptWindowedAndSearchable(t *testing.T) {
	events := loadEvents(t, "delegation.jsonl")
	var tr transcript
	for _, e := range events {
		tr.add(e, "coder-1-3")
	}
	if len(tr.entries) == 0 {
		t.Fatal("no transcript entries for coder-1-3")
	}
	m := New(newFakeSession(t, events), Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(keyMsg("esc"))
	m.flowSel = "coder-1-3"
	m.Update(keyMsg("enter"))
	_, cmd := m.Update(keyMsg("t"))
	if cmd == nil {
		t.Fatal("t opened nothing")
	}
	m.transcript.entries, m.transcript.loaded = tr.entries, true
	m.transcript.prepare(m.overlayWidth()-4, m.overlayBodyH(), m.md)
	got := ansi.Strip(m.View())
	mustContain(t, got, "Transcript · Coder")
	last := tr.entries[len(tr.entries)-1].title
	m.Update(keyMsg("/"))
	for _, r := range strings.Fields(last)[0] {
		m.Update(keyMsg(string(r)))
	}
	m.Update(keyMsg("enter"))
	if m.transcript.top == 0 && len(tr.entries) > 1 && !strings.HasPrefix(tr.entries[0].title, strings.Fields(last)[0]) {
		t.Errorf("search did not move the window")
	}
}

func TestResyncFromLogKeepsEveryEvent(t *testing.T) {
	events := loadEvents(t, "delegation.jsonl")
	full := newRunView("")
	for _, e := range events {
		full.apply(e)
	}
	m := New(newFakeSession(t, events[:20]), Options{Labels: seedLabels(t), NoAnimation: true})
	// Events 20..29 arrive live while the log read covers only 0..24.
	m.Update(eventsMsg{events[20:30]})
	fromLog := newRunView(m.live.id)
	for _, e := range events[:25] {
		fromLog.apply(e)
	}
	m.Update(resyncMsg{run: fromLog})
	m.Update(eventsMsg{events[30:]})
	if got, want := len(m.live.model.Operations), len(full.model.Operations); got != want {
		t.Fatalf("after resync: %d operations, want %d", got, want)
	}
	if m.view != m.live || m.live.model.Version != full.model.Version {
		t.Fatalf("version %d, want %d", m.live.model.Version, full.model.Version)
	}
}
