package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/runner/event"
)

// Whether this console's answer won is told by the answer's own outcome,
// not by the event's source: two attached terminals both answer as
// "attach", and the winner must not be told another client answered.
func TestAnswerOutcomeDecidesTheNotice(t *testing.T) {
	q := event.AskHumanPayload{ID: "q-1", Role: "orchestrator", RoleID: "orchestrator-0-1", Question: "Go on?"}
	for _, tc := range []struct {
		name       string
		othersWon  bool
		eventFirst bool // the human_answer event arrives before the answer's outcome
		want       string
		notWant    string
	}{
		{name: "won, outcome first", want: "Answer sent.", notWant: "another client"},
		{name: "won, event first", eventFirst: true, want: "Answer sent.", notWant: "another client"},
		{name: "lost", othersWon: true, want: "Already answered from another client: your answer was not used."},
		{name: "lost, event first", othersWon: true, eventFirst: true, want: "Already answered from another client: your answer was not used."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(newFakeSession(t, questionRun(t, q)), Options{Labels: seedLabels(t), NoAnimation: true})
			m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
			fs := m.sess.(*fakeSession)
			if tc.othersWon {
				fs.answers["q-1"] = "from another terminal"
			}
			m.Update(keyMsg("y"))
			_, cmd := m.Update(keyMsg("enter"))
			if cmd == nil {
				t.Fatal("enter sent nothing")
			}
			answered := event.HumanAnswerPayload{ID: "q-1", Answer: "y", Source: "attach"}
			if tc.othersWon {
				answered.Answer = "from another terminal"
			}
			news := eventsMsg{[]event.Event{ev(t, event.HumanAnswer, answered)}}
			if tc.eventFirst {
				m.Update(news)
				m.Update(cmd())
			} else {
				m.Update(cmd())
				m.Update(news)
			}
			got := ansi.Strip(m.View())
			mustContain(t, got, tc.want)
			if tc.notWant != "" && strings.Contains(got, tc.notWant) {
				t.Errorf("the screen says %q:\n%s", tc.notWant, got)
			}
			if strings.Contains(got, "Go on?") {
				t.Errorf("the question is still open:\n%s", got)
			}
		})
	}
}
