package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/runner/event"
)

// multiLineTask is a task whose first line stops mid-sentence.
const multiLineTask = "Fix the\nfailing slug test in `lib/slugify.sh`, and keep the public API as it is: WHOLETASKEND"

// crashedEvents is the demo run with multiLineTask, resumed after a crash
// between its first two tool calls.
func crashedEvents(t *testing.T) []event.Event {
	t.Helper()
	evs := loadEvents(t, "demo.jsonl")
	var p map[string]any
	if err := json.Unmarshal(evs[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	p["task"] = multiLineTask
	b, _ := json.Marshal(p)
	evs[0].Payload = b
	var out []event.Event
	for i, e := range evs {
		out = append(out, e)
		if i == 6 { // after the first tool result
			r, err := event.New(e.Timestamp.Add(time.Second), event.RunResumed, event.RunResumedPayload{RunID: "run-20261201-104723", ResumedFrames: 1})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
	}
	for i := range out {
		out[i].Seq = int64(i)
	}
	return out
}

// TestTaskLineSaysItIsCut: at 80 and 120 columns the task line of a task
// that goes on past its first line ends with "…", and h shows it whole.
func TestTaskLineSaysItIsCut(t *testing.T) {
	for _, w := range []int{80, 120} {
		m, _ := console(t, crashedEvents(t), w, 30)
		press(m, keys("esc")...) // the result card
		lines := strings.Split(ansi.Strip(m.View()), "\n")
		var task string
		for _, l := range lines {
			if strings.HasPrefix(l, "◆ ") {
				task = strings.TrimRight(l, " ")
			}
		}
		if !strings.HasPrefix(task, "◆ Fix the") || !strings.HasSuffix(task, "…") {
			t.Errorf("at %d columns the task line is %q, want it to end with …", w, task)
		}
		press(m, keys("h")...)
		got := strings.Join(strings.Fields(ansi.Strip(m.View())), " ")
		mustContain(t, got, "Task", "WHOLETASKEND")
	}
}

// TestLogShowsTheResumeMarker: the Log screen shows the restart boundary
// between the command before the crash and the one after it.
func TestLogShowsTheResumeMarker(t *testing.T) {
	m, _ := console(t, crashedEvents(t), 100, 40)
	press(m, keys("esc", "5", "g")...)
	got := ansi.Strip(m.View())
	marker := strings.Index(got, "Run resumed from its checkpoint")
	before := strings.Index(got, "list_directory")
	after := strings.Index(got, "README.md")
	if marker < 0 || before < 0 || after < 0 || !(before < marker && marker < after) {
		t.Fatalf("want list_directory, then the resume marker, then the README read:\n%s", got)
	}
}

// TestDemoQuitPromisesNoResume: on the demo's temporary workspace, which
// is removed when it ends, the quit prompt does not promise a resume.
func TestDemoQuitPromisesNoResume(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	m := New(newFakeSession(t, until(demo, event.RunStatus)), Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Ephemeral: true})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, keys("esc", "q")...)
	flat := strings.Join(strings.Fields(strings.ReplaceAll(ansi.Strip(m.View()), "│", " ")), " ")
	mustContain(t, flat, "its temporary workspace is removed, so it cannot be resumed.")
	if strings.Contains(flat, "can be resumed later") {
		t.Errorf("the demo's quit prompt promises a resume:\n%s", flat)
	}
}

// TestLogRoleFilterKeepsTheResumeMarker: filtered to one role, the Log
// still shows where the run restarted.
func TestLogRoleFilterKeepsTheResumeMarker(t *testing.T) {
	m, _ := console(t, crashedEvents(t), 100, 40)
	press(m, keys("esc", "5")...)
	if len(m.view.logRoleList) == 0 {
		t.Fatal("the crashed run's log names no role to filter by")
	}
	for range len(m.view.logRoleList) {
		press(m, keys("f")...)
		got := ansi.Strip(m.View())
		if m.logv.role == "" {
			continue
		}
		if !strings.Contains(got, "Run resumed from its checkpoint") {
			t.Errorf("under the %s filter the resume marker is gone:\n%s", m.logv.role, got)
		}
	}
}
