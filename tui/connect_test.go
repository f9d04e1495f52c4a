package tui

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
)

// TestConnectingHoldsTheTaskUntilTheProbeReports: while Connect runs the
// footer says so and the task given waits;
// a problem opens the endpoint dialog and the task keeps waiting;
// an answer starts it.
func TestConnectingHoldsTheTaskUntilTheProbeReports(t *testing.T) {
	for _, problem := range []string{"", closedPortProblem} {
		sess := &submitSession{fakeSession: newFakeSession(t, nil)}
		release := make(chan struct{})
		m := New(sess, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard,
			Task: "Fix the failing test", Endpoint: &fakeEndpoint{},
			Connect: func(ctx context.Context) Connected {
				<-release
				return Connected{Problem: problem, Notes: []string{"using model NEW-MODEL reported by the server"}}
			}})
		tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
		waitScreen(t, tm, "connecting to ", "Connecting to the model endpoint: your task starts once it answers.")
		if len(sess.submitted()) != 0 {
			t.Fatal("the task was submitted before the probe reported")
		}
		close(release)
		if problem != "" {
			waitScreen(t, tm, "The model endpoint did not answer", "Your task waits")
			time.Sleep(100 * time.Millisecond)
			if len(sess.submitted()) != 0 {
				t.Fatal("the task was submitted against an endpoint that never answered")
			}
		} else {
			waitScreen(t, tm, "1 note from start-up", "NEW-MODEL")
			sess.wantSubmitted(t, "Fix the failing test")
		}
		tm.Send(keyMsg("esc"))
		tm.Send(keyMsg("q"))
		final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
		if final.connecting || len(final.opts.Notes) != 1 {
			t.Errorf("connecting %v, notes %q", final.connecting, final.opts.Notes)
		}
	}
}
