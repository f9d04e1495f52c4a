package tui

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// Session is what the console needs from a runner session: subscribe,
// answer, interrupt, pause/resume/terminate and submit, plus the read-only
// workspace records for History and replays. *runner.Session satisfies it;
// a remote client over the HTTP API can stand in for it. web declares a
// Session of its own, alike: each client names what it uses, and neither
// imports the other.
type Session interface {
	Subscribe(buffer int) ([]event.Event, *runner.Subscription)
	Submit(ctx context.Context, sub runner.Submission) (string, error)
	Active() (string, bool)
	Answer(id, answer, source string) error
	Questions() []runner.Question
	Interrupt(runID, kind, message string) error
	Pause(runID string) error
	Resume(runID string) error
	Terminate(runID string) error
	Health() runner.HealthView
	Workspace() store.Workspace
	// ModelInfo is the model's name, endpoint host, context window and
	// prices, for the meters; never the key.
	ModelInfo() runner.ModelInfo
	// Changes is what changed in the workspace since a run started.
	Changes(ctx context.Context, runID string) (runner.Changes, error)
}

var _ Session = (*runner.Session)(nil)

// EndingSession is a Session that can end under the console: a remote one
// whose console went away. When its subscription closes, Err says why and
// the console shows it.
type EndingSession interface {
	Session
	Err() error
}

// Messages the commands below return to Update.
type (
	// eventsMsg carries one or more live events, in bus order.
	eventsMsg struct{ events []event.Event }
	// subClosedMsg reports that the subscription ended.
	subClosedMsg struct{}
	// questionsMsg lists the questions pending when the console started.
	questionsMsg  struct{ questions []runner.Question }
	answerDoneMsg struct {
		id  string
		err error
	}
	submitDoneMsg struct {
		runID  string
		queued *store.QueueItem // set when the task was queued instead
		err    error
	}
	controlDoneMsg struct {
		what string
		err  error
		// runID and message are an interrupt's (what is inquiry or
		// plan_modification).
		runID, message string
	}
	healthMsg    struct{ view runner.HealthView }
	modelInfoMsg struct{ info runner.ModelInfo }
	// historyMsg is the workspace's run list, newest first.
	historyMsg struct {
		rows []historyRow
		err  error
	}
	// replayMsg is a past run read back from its log.
	replayMsg struct {
		runID string
		meta  *store.Meta
		run   *runView
		err   error
	}
	planMsg struct {
		runID string
		text  string
		err   error
	}
	transcriptMsg struct {
		runID, roleID string
		entries       []transcriptEntry
		err           error
	}
	// resyncMsg is the live run rebuilt from its log after the
	// subscription dropped events.
	resyncMsg struct {
		run *runView
		err error
	}
	// summaryMsg is a run's summary.txt, read once the run has one.
	summaryMsg    struct{ runID, text string }
	tickMsg       struct{}
	healthTickMsg struct{}
)

// historyRow is one past run as History lists it.
type historyRow struct {
	id      string
	meta    *store.Meta
	summary string // summary.txt, else the task's first line
	err     error
}

// waitEvents blocks for the next event and then drains what else is
// already buffered, so a burst costs one update and one frame.
func waitEvents(sub *runner.Subscription) tea.Cmd {
	return func() tea.Msg {
		var first event.Event
		select {
		case e, ok := <-sub.C:
			if !ok {
				return subClosedMsg{}
			}
			first = e
		case <-sub.Done():
			return subClosedMsg{}
		}
		out := []event.Event{first}
		for len(out) < 512 {
			select {
			case e, ok := <-sub.C:
				if !ok {
					return eventsMsg{out}
				}
				out = append(out, e)
			default:
				return eventsMsg{out}
			}
		}
		return eventsMsg{out}
	}
}

func loadQuestions(s Session) tea.Cmd {
	return func() tea.Msg { return questionsMsg{s.Questions()} }
}

func answerCmd(s Session, id, answer string) tea.Cmd {
	return func() tea.Msg { return answerDoneMsg{id: id, err: s.Answer(id, answer, "terminal")} }
}

func submitCmd(ctx context.Context, s Session, sub runner.Submission) tea.Cmd {
	return func() tea.Msg {
		id, err := s.Submit(ctx, sub)
		return submitDoneMsg{runID: id, err: err}
	}
}

func controlCmd(what string, fn func() error) tea.Cmd {
	return func() tea.Msg { return controlDoneMsg{what: what, err: fn()} }
}

func healthCmd(s Session) tea.Cmd {
	return func() tea.Msg { return healthMsg{s.Health()} }
}

func modelInfoCmd(s Session) tea.Cmd {
	return func() tea.Msg { return modelInfoMsg{s.ModelInfo()} }
}

func healthTick() tea.Cmd {
	return tea.Tick(2*time.Second, func(time.Time) tea.Msg { return healthTickMsg{} })
}

func animTick() tea.Cmd {
	return tea.Tick(150*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

// loadHistory reads every run's meta and summary.
func loadHistory(ws store.Workspace) tea.Cmd {
	return func() tea.Msg {
		ids, err := ws.ListRunIDs()
		if err != nil {
			return historyMsg{err: err}
		}
		rows := make([]historyRow, 0, len(ids))
		for _, id := range ids {
			r := historyRow{id: id}
			r.meta, r.err = ws.ReadMeta(id)
			r.summary = ws.ReadSummary(id)
			if r.summary == "" && r.meta != nil {
				r.summary = firstLine(r.meta.Task)
			}
			rows = append(rows, r)
		}
		return historyMsg{rows: rows}
	}
}

// loadSummary reads a run's summary.txt.
func loadSummary(ws store.Workspace, runID string) tea.Cmd {
	return func() tea.Msg { return summaryMsg{runID: runID, text: ws.ReadSummary(runID)} }
}

// reserveForLog sizes a replayed view's model for the run's log.
func reserveForLog(rv *runView, ws store.Workspace, runID string) {
	if path, err := ws.LogPath(runID); err == nil {
		if n, err := store.CountLogLines(path); err == nil {
			rv.model.Reserve(int(n))
		}
	}
}

func readRunEvents(ws store.Workspace, runID string, fn func(event.Event)) error {
	path, err := ws.LogPath(runID)
	if err != nil {
		return err
	}
	_, err = store.ReadLog(path, func(seq int64, rec []byte) error {
		var e event.Event
		if json.Unmarshal(rec, &e) != nil {
			return nil
		}
		e.Seq = seq
		fn(e)
		return nil
	})
	return err
}

// replayRun rebuilds a past run from disk, off the update loop.
func replayRun(ws store.Workspace, runID string) tea.Cmd {
	return func() tea.Msg {
		meta, merr := ws.ReadMeta(runID)
		rv := newRunView(runID)
		reserveForLog(rv, ws, runID)
		err := readRunEvents(ws, runID, rv.apply)
		rv.refresh()
		if err == nil && merr != nil {
			err = merr
		}
		return replayMsg{runID: runID, meta: meta, run: rv, err: err}
	}
}

// loadPlan reads a run's plan.md.
func loadPlan(ws store.Workspace, runID string) tea.Cmd {
	return func() tea.Msg {
		b, err := ws.ReadPlan(runID)
		if errors.Is(err, os.ErrNotExist) {
			return planMsg{runID: runID}
		}
		return planMsg{runID: runID, text: string(b), err: err}
	}
}

// loadTranscript reads one role instance's messages from the run's log.
func loadTranscript(ws store.Workspace, runID, roleID string) tea.Cmd {
	return func() tea.Msg {
		var t transcript
		err := readRunEvents(ws, runID, func(e event.Event) { t.add(e, roleID) })
		return transcriptMsg{runID: runID, roleID: roleID, entries: t.entries, err: err}
	}
}

// resyncLive rebuilds the live run from its log: the bus drops ordinary
// events for a subscriber that falls behind, and the log has them all.
func resyncLive(ws store.Workspace, runID string) tea.Cmd {
	return func() tea.Msg {
		rv := newRunView(runID)
		reserveForLog(rv, ws, runID)
		err := readRunEvents(ws, runID, rv.apply)
		rv.refresh()
		return resyncMsg{run: rv, err: err}
	}
}
