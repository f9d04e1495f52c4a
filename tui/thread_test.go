package tui

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// writeMeta puts a run's folder and its meta.json on disk.
func writeMeta(t *testing.T, ws store.Workspace, meta *store.Meta) {
	t.Helper()
	dir, err := ws.RunDir(meta.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteMeta(meta); err != nil {
		t.Fatal(err)
	}
}

// writeRun puts a run's meta.json and log.jsonl on disk.
func writeRun(t *testing.T, ws store.Workspace, meta *store.Meta, events []event.Event) {
	t.Helper()
	writeMeta(t, ws, meta)
	var b strings.Builder
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path, _ := ws.LogPath(meta.RunID)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// threadRun is a run whose task, question and answer carry hostile text.
func threadRun(t *testing.T) []event.Event {
	q := event.AskHumanPayload{ID: "q-1", Role: "orchestrator", RoleID: "orchestrator-0-1",
		Question: "Which **format**? " + hostile, Context: "The docs say *JSON* " + hostile}
	evs := questionRun(t, q)
	evs[0] = ev(t, event.RunStarted, event.RunStartedPayload{RunID: "run-20250314-093000", Task: "Export the **report** " + hostile + "\nwith details", Effort: "standard", EntryRole: "orchestrator"})
	evs = append(evs, ev(t, event.HumanAnswer, event.HumanAnswerPayload{ID: "q-1", Answer: "CSV please " + hostile, Source: "terminal"}))
	for i := range evs {
		evs[i].Seq = int64(i)
	}
	return evs
}

func threadConsole(t *testing.T, summarize func(context.Context, string) (string, string, error)) (*Model, store.Workspace) {
	t.Helper()
	evs := threadRun(t)
	fs := newFakeSession(t, evs)
	writeRun(t, fs.ws, &store.Meta{RunID: "run-20250314-093000", Task: "Export the **report** " + hostile + "\nwith details", Effort: "standard",
		Status: "running", StartedAt: time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)}, evs)
	m := New(fs, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Summarize: summarize})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	run(m, m.refreshThread("run-20250314-093000"))
	return m, fs.ws
}

func TestIdentityHeaderIsPlainDeterministicIdentity(t *testing.T) {
	m, _ := threadConsole(t, nil)
	m.Update(keyMsg("esc")) // the question modal
	raw := m.View()
	assertTerminalSafe(t, raw)
	header := strings.Split(ansi.Strip(raw), "\n")[2]
	if !strings.HasPrefix(header, "◆ Export the **report** evil") || !strings.Contains(header, "· You: CSV please evil") {
		t.Fatalf("header %q", header)
	}
	if strings.Contains(header, "with details") {
		t.Errorf("the header is more than the first line: %q", header)
	}
}

func TestIdentityHeaderPrefersTheSummary(t *testing.T) {
	calls := 0
	m, _ := threadConsole(t, func(_ context.Context, id string) (string, string, error) {
		calls++
		return "Report export " + hostile, "Exports the report as CSV.", nil
	})
	m.Update(keyMsg("esc"))
	raw := m.View()
	assertTerminalSafe(t, raw)
	header := strings.Split(ansi.Strip(raw), "\n")[2]
	if !strings.HasPrefix(header, "◆ Report export evil") || !strings.Contains(header, "— Exports the report as CSV.") {
		t.Fatalf("header %q", header)
	}
	// Cached: another load of an unchanged live thread asks no more.
	run(m, m.refreshThread("run-20250314-093000"))
	if calls != 1 {
		t.Errorf("summarised %d times", calls)
	}
}

func TestThreadDrawerShowsEntries(t *testing.T) {
	m, _ := threadConsole(t, nil)
	m.Update(keyMsg("esc"))
	press(m, keyMsg("h"))
	raw := m.View()
	assertTerminalSafe(t, raw)
	got := ansi.Strip(raw)
	mustContain(t, got, "Task history · run-20250314-093000", "You", "Export the", "report", "with details",
		"Question", "Which", "format", "Context", "The docs say", "Your answer", "CSV please evil")
	// notty Markdown keeps the emphasis markers as text; a real style
	// renders them. Either way no live control reaches the frame.
	press(m, tea.KeyMsg{Type: tea.KeyPgUp}, keyMsg("k"))
	if m.drawer == nil || m.drawer.follow {
		t.Fatal("scrolling did not leave follow mode")
	}
	press(m, keyMsg("esc"))
	if m.drawer != nil {
		t.Fatal("esc did not close the drawer")
	}
}
