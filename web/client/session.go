package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// Subscribe returns the followed run's events so far and a subscription
// to every later one, as runner.Session.Subscribe does: the events are
// republished on a local bus. The subscription is closed when the session
// ends.
func (s *Session) Subscribe(buffer int) ([]event.Event, *runner.Subscription) {
	backlog, sub := s.bus.Subscribe(buffer)
	s.mu.Lock()
	select {
	case <-s.ended:
		s.mu.Unlock()
		sub.Close()
		return backlog, sub
	default:
	}
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
	return backlog, sub
}

// Active is the run the console runs now, as the stream last said.
func (s *Session) Active() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run, s.active && s.run != ""
}

// Following is the run the stream follows (the live run, else the last
// live one), live or not.
func (s *Session) Following() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run
}

// Workspace is the attached workspace's records on this host.
func (s *Session) Workspace() store.Workspace { return s.cfg.Workspace }

// Submit starts a run of sub (POST /api/runs). The console runs it; a
// task queued instead (a run is live) is runner.ErrRunInProgress here, as
// for a session without a queue: Queue().SubmitOrQueue queues.
func (s *Session) Submit(ctx context.Context, sub runner.Submission) (string, error) {
	id, queued, err := s.submit(ctx, sub)
	if err == nil && queued != nil {
		return "", fmt.Errorf("%w (it was queued as %s)", runner.ErrRunInProgress, queued.ID)
	}
	return id, err
}

func (s *Session) submit(ctx context.Context, sub runner.Submission) (string, *store.QueueItem, error) {
	var out struct {
		RunID  string           `json:"runId"`
		Queued *store.QueueItem `json:"queued"`
	}
	if err := s.call(ctx, http.MethodPost, "/api/runs", sub, &out); err != nil {
		return "", nil, err
	}
	if out.Queued != nil {
		it, ok := checkItem(*out.Queued)
		if !ok {
			return "", nil, errors.New("POST /api/runs: the answer names no queue item")
		}
		return "", &it, nil
	}
	if store.CheckRunID(out.RunID) != nil {
		return "", nil, errors.New("POST /api/runs: the answer names no run")
	}
	return out.RunID, nil, nil
}

// Answer answers a pending question (POST /api/answer). The log names the
// answering client "attach"; the first answer wins, and a later one is
// runner.ErrAlreadyAnswered.
func (s *Session) Answer(id, answer, source string) error {
	body := map[string]string{"id": id, "answer": answer, "source": "attach"}
	return s.call(s.ctx, http.MethodPost, "/api/answer", body, nil)
}

// questionView is a question as GET /api/questions serves it. Like the
// client's other wire types it is read from docs/api.md, not imported from
// the server package web, so the client holds the server to its API.
type questionView struct {
	ID            string         `json:"id"`
	RunID         string         `json:"runId"`
	Role          string         `json:"role"`
	RoleID        string         `json:"roleId"`
	Question      string         `json:"question"`
	Context       string         `json:"context"`
	AssistantText string         `json:"assistantText"`
	Options       []event.Option `json:"options"`
	AskedAt       time.Time      `json:"askedAt"`
}

// Questions lists the pending questions; nil when the console does not
// answer (the stream's ask_human events still bring them).
func (s *Session) Questions() []runner.Question {
	var out struct {
		Questions []questionView `json:"questions"`
	}
	if s.call(s.ctx, http.MethodGet, "/api/questions", nil, &out) != nil {
		return nil
	}
	qs := make([]runner.Question, 0, len(out.Questions))
	for _, q := range out.Questions {
		if q.RunID != "" && !store.ValidRunID(q.RunID) {
			continue // not a console's question: its run id names no run
		}
		qs = append(qs, runner.Question{
			AskHumanPayload: event.AskHumanPayload{ID: q.ID, Role: q.Role, RoleID: q.RoleID, Question: q.Question,
				Context: q.Context, Options: q.Options, AssistantText: q.AssistantText},
			RunID: q.RunID, AskedAt: q.AskedAt,
		})
	}
	return qs
}

// Interrupt queues an inquiry or plan modification for the run.
func (s *Session) Interrupt(runID, kind, message string) error {
	if kind != "inquiry" && kind != "plan_modification" {
		return runner.ErrInvalidKind
	}
	body := map[string]string{"kind": kind, "message": message}
	return s.call(s.ctx, http.MethodPost, runPath(runID, "interrupt"), body, nil)
}

// Pause asks the run to pause at its next safe point.
func (s *Session) Pause(runID string) error {
	return s.call(s.ctx, http.MethodPost, runPath(runID, "pause"), nil, nil)
}

// Resume resumes a paused or suspended run.
func (s *Session) Resume(runID string) error {
	err := s.call(s.ctx, http.MethodPost, runPath(runID, "resume"), nil, nil)
	var ae *APIError
	if errors.As(err, &ae) && ae.Code == "not_paused" {
		return fmt.Errorf("run %s is neither paused nor suspended", runID)
	}
	return err
}

// Terminate ends the run at its next safe point, its record intact.
func (s *Session) Terminate(runID string) error {
	return s.call(s.ctx, http.MethodPost, runPath(runID, "terminate"), nil, nil)
}

// runPath is /api/runs/ID/what, the id escaped: it came from the log.
func runPath(runID, what string) string {
	return "/api/runs/" + url.PathEscape(runID) + "/" + what
}

// Health is the provider's health as the console sees it; the last known
// view when it does not answer.
func (s *Session) Health() runner.HealthView {
	var h runner.HealthView
	s.mu.Lock()
	last := s.health
	s.mu.Unlock()
	if s.call(s.ctx, http.MethodGet, "/api/health", nil, &h) != nil || h.State == "" {
		return last
	}
	if h.SuspendedRunID != "" && !store.ValidRunID(h.SuspendedRunID) {
		h.SuspendedRunID = ""
	}
	s.mu.Lock()
	s.health = h
	s.mu.Unlock()
	return h
}

// ModelInfo is empty: the API never serves the model's name or endpoint
// (docs/api.md), so an attached console's meters show what the events
// carry.
func (s *Session) ModelInfo() runner.ModelInfo { return runner.ModelInfo{} }

// ErrNoChanges is the change view over an attach: the diff runs git in the
// sandbox of the console's deployment, which only that process has.
var ErrNoChanges = errors.New("the change view is shown by the console that runs the run, not over an attach; `git diff` in the workspace shows the same files")

// Changes is not available over an attach (ErrNoChanges).
func (s *Session) Changes(ctx context.Context, runID string) (runner.Changes, error) {
	return runner.Changes{RunID: runID}, ErrNoChanges
}
