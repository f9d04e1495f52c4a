package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/runner/event"
)

// openQuestionEvents is the demo run up to its open question.
func openQuestionEvents(t testing.TB) []event.Event {
	t.Helper()
	evs := loadEvents(t, "demo.jsonl")
	for i, e := range evs {
		if e.Type == event.AskHuman {
			return evs[:i+1]
		}
	}
	t.Fatal("no question in demo.jsonl")
	return nil
}

// TestInquiryWhileAQuestionIsOpen: an inquiry sent while the run waits on
// a question is acknowledged (the banner says so beside the question) and
// i lists it as sent, until the run's event takes its place.
func TestInquiryWhileAQuestionIsOpen(t *testing.T) {
	m, _ := console(t, openQuestionEvents(t), 80, 24)
	if !m.questionVisible() {
		t.Fatalf("no question open:\n%s", ansi.Strip(m.View()))
	}
	press(m, keys("esc", "i")...)
	if m.interrupt == nil {
		t.Fatalf("i did not open the interrupt box:\n%s", ansi.Strip(m.View()))
	}
	press(m, keys("How far along are you?", "enter")...)
	got := strings.Join(strings.Fields(ansi.Strip(m.View())), " ")
	mustContain(t, got, "Inquiry sent: the run takes it after your answer.")
	press(m, keys("i")...)
	got = strings.Join(strings.Fields(ansi.Strip(m.View())), " ")
	mustContain(t, got, "You asked: How far along are you?", "sent: the run takes it once the open question is answered")
	if strings.Contains(got, "No inquiries yet.") {
		t.Errorf("i says there are no inquiries:\n%s", got)
	}
	// The run's own event replaces the sent one: listed once.
	e, err := event.New(time.Now(), event.Interrupt, event.InterruptPayload{Trigger: "inquiry", Message: "How far along are you?"})
	if err != nil {
		t.Fatal(err)
	}
	m.applyEvent(e)
	got = strings.Join(strings.Fields(ansi.Strip(m.View())), " ")
	if n := strings.Count(got, "How far along are you?"); n != 1 {
		t.Errorf("the inquiry is listed %d times:\n%s", n, got)
	}
	mustContain(t, got, "waiting for the answer")
}

// TestNoticesExpire: a notice ("Answer sent.", "Copied …") leaves the
// banner after a few health ticks (2 s each), a long one a little later,
// and a new notice starts its own time.
func TestNoticesExpire(t *testing.T) {
	m, _ := console(t, loadEvents(t, "demo.jsonl"), 80, 24)
	m.Update(copiedMsg{note: "Copied the result summary (1.2 kB) to the clipboard with OSC 52."})
	banner := func() string { return ansi.Strip(m.banner()) }
	if !strings.Contains(banner(), "Copied the result summary") {
		t.Fatalf("no notice: %q", banner())
	}
	m.Update(healthTickMsg{})
	m.Update(healthTickMsg{})
	if !strings.Contains(banner(), "Copied the result summary") {
		t.Fatalf("the notice left after two ticks: %q", banner())
	}
	m.Update(healthTickMsg{})
	if strings.Contains(banner(), "Copied") {
		t.Errorf("the notice stays after three ticks: %q", banner())
	}
	// A notice that replaces another gets its full time.
	m.Update(copiedMsg{note: "Answer sent."})
	m.Update(healthTickMsg{})
	m.Update(healthTickMsg{})
	m.Update(copiedMsg{note: "Copied the plan (10 bytes) to the clipboard with OSC 52."})
	m.Update(healthTickMsg{})
	m.Update(healthTickMsg{})
	if !strings.Contains(banner(), "Copied the plan") {
		t.Errorf("the newer notice left early: %q", banner())
	}
	long := "tmux's set-clipboard is external: the copy cannot reach your clipboard; set -g set-clipboard on, see docs/ssh.md; copied the plan to F instead."
	m.Update(copiedMsg{note: long})
	for i := 0; i < 4; i++ {
		m.Update(healthTickMsg{})
	}
	if !strings.Contains(banner(), "set-clipboard") {
		t.Errorf("a long notice left after 4 ticks: %q", banner())
	}
	m.Update(healthTickMsg{})
	if strings.Contains(banner(), "set-clipboard") {
		t.Errorf("a long notice stays after 5 ticks: %q", banner())
	}
}
