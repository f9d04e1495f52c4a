package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

type createRunBody struct {
	Task          string `json:"task"`
	Effort        string `json:"effort"`
	LogLevel      string `json:"logLevel"`
	ContinuesFrom string `json:"continuesFrom"`
}

// decodeTask reads the body of POST /api/runs and POST /api/queue: a task
// that is not blank and a known effort and log level. It answers the error
// itself.
func decodeTask(w http.ResponseWriter, r *http.Request) (createRunBody, bool) {
	var in createRunBody
	if !decodeBody(w, r, &in) {
		return in, false
	}
	if strings.TrimSpace(in.Task) == "" || !validEffort(in.Effort) || !validLogLevel(in.LogLevel) {
		writeError(w, http.StatusBadRequest, "invalid_body")
		return in, false
	}
	return in, true
}

func (s *Server) handleCreateRun(w http.ResponseWriter, r *http.Request) {
	in, ok := decodeTask(w, r)
	if !ok {
		return
	}
	// Stricter than the queue's checkContinuation: a run that starts now
	// can only continue one that has ended; a queued task runs later.
	if in.ContinuesFrom != "" {
		m, err := s.sess.Workspace().ReadMeta(in.ContinuesFrom)
		if err != nil {
			writeError(w, http.StatusNotFound, "unknown_run")
			return
		}
		if !store.Terminal(m.Status) {
			writeError(w, http.StatusConflict, "run_not_finished")
			return
		}
	}
	// The run outlives this request: it is the session's, not the client's.
	ctx := context.WithoutCancel(r.Context())
	sub := runner.Submission{Task: in.Task, Effort: in.Effort, LogLevel: in.LogLevel, ContinuesFrom: in.ContinuesFrom}
	if s.queue != nil {
		id, queued, err := s.queue.SubmitOrQueue(ctx, sub)
		switch {
		case err != nil && (errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrQueueCorrupt)):
			writeQueueError(w, err)
		case err != nil:
			writeError(w, http.StatusInternalServerError, "submit_failed")
		case queued != nil:
			writeJSON(w, http.StatusCreated, queuedRun{Queued: *queued})
		default:
			writeJSON(w, http.StatusCreated, map[string]string{"runId": id})
		}
		return
	}
	id, err := s.sess.Submit(ctx, sub)
	switch {
	case errors.Is(err, runner.ErrRunInProgress):
		writeError(w, http.StatusConflict, "run_in_progress")
	case err != nil:
		writeError(w, http.StatusInternalServerError, "submit_failed")
	default:
		writeJSON(w, http.StatusCreated, map[string]string{"runId": id})
	}
}

// RunSummary is one row of GET /api/runs: the meta fields a list shows and
// summary.txt (null when there is none). It names those fields again
// rather than embed store.Meta, so that a field added to the record (a
// host path, a pid) reaches the API only when it is put here.
type RunSummary struct {
	RunID         string            `json:"runId"`
	Task          string            `json:"task"`
	Effort        string            `json:"effort"`
	Status        string            `json:"status"`
	StartedAt     time.Time         `json:"startedAt"`
	EndedAt       *time.Time        `json:"endedAt,omitempty"`
	ContinuesFrom string            `json:"continuesFrom,omitempty"`
	Summary       *string           `json:"summary"`
	Result        *store.MetaResult `json:"result,omitempty"`
	Error         *store.MetaError  `json:"error,omitempty"`
	Active        bool              `json:"active"`
	// Foreign marks a run whose records Guildhall did not write for this
	// operator (the original system's, or planted): shown, never resumed
	// or continued. Original says the original system's format wrote it.
	Foreign  bool `json:"foreign,omitempty"`
	Original bool `json:"original,omitempty"`
}

func (s *Server) summaryOf(m *store.Meta) RunSummary {
	rs := RunSummary{RunID: m.RunID, Task: m.Task, Effort: m.Effort, Status: m.Status, StartedAt: m.StartedAt,
		EndedAt: m.EndedAt, ContinuesFrom: m.ContinuesFrom, Result: m.Result, Error: m.Error, Foreign: m.Foreign, Original: m.Foreign && m.OriginalFormat}
	if sum := s.sess.Workspace().ReadSummary(m.RunID); sum != "" {
		rs.Summary = &sum
	}
	if id, ok := s.sess.Active(); ok && id == m.RunID {
		rs.Active = true
	}
	return rs
}

// maxListedRuns bounds GET /api/runs.
const maxListedRuns = 200

func (s *Server) handleListRuns(w http.ResponseWriter, r *http.Request) {
	ws := s.sess.Workspace()
	ids, err := ws.ListRunIDs()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal")
		return
	}
	out := make([]RunSummary, 0, min(len(ids), maxListedRuns))
	for _, id := range ids {
		if len(out) == maxListedRuns {
			break
		}
		m, err := ws.ReadMeta(id)
		if err != nil {
			continue
		}
		out = append(out, s.summaryOf(m))
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
}

// RoleView is one role instance with its status.
type RoleView struct {
	ID          string         `json:"id"`
	Role        string         `json:"role"`
	Status      string         `json:"status"` // running, or the outcome of its return
	ErrorKind   string         `json:"errorKind,omitempty"`
	Invocations int            `json:"invocations"`
	Turns       int            `json:"turns"`
	Metrics     render.Metrics `json:"metrics"`
}

// SuspensionView is what the pause card may show: the category and when.
// The platform's message is category copy the client replaces with its own
// fixed text, so it is not served.
type SuspensionView struct {
	Category    string    `json:"category"`
	SuspendedAt time.Time `json:"suspendedAt"`
}

// RunView is GET /api/runs/:id.
type RunView struct {
	RunSummary
	LogLevel          string             `json:"logLevel,omitempty"`
	EntryRole         string             `json:"entryRole,omitempty"`
	Suspension        *SuspensionView    `json:"suspension,omitempty"`
	Roles             []RoleView         `json:"roles"`
	RoleTree          []render.RoleNode  `json:"roleTree"`
	RecentLog         []LogEntry         `json:"recentLog"`
	CurrentActivity   string             `json:"currentActivity"`
	Questions         []QuestionRecord   `json:"questions"`
	Interrupts        []InterruptRecord  `json:"interrupts"`
	PlanModifications []PlanModRecord    `json:"planModifications"`
	InterruptPending  bool               `json:"interruptPending"`
	Totals            render.CostSummary `json:"totals"`
	FlowVersion       int64              `json:"flowVersion"`
	// NoAction marks a finished run whose model answered without doing
	// anything (run_status.noAction); Notes are what the run told the
	// operator about its setup (text_tool_calls), the program's words.
	NoAction bool     `json:"noAction,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// Meters are the model's name and context use (api_changes.go).
	Meters *MetersView `json:"meters"`
}

func (s *Server) runView(runID string) (*RunView, int, string) {
	m, err := s.sess.Workspace().ReadMeta(runID)
	if err != nil {
		return nil, http.StatusNotFound, "unknown_run"
	}
	v, err := s.views.get(runID)
	if err != nil {
		return nil, http.StatusNotFound, "unknown_run"
	}
	out := &RunView{RunSummary: s.summaryOf(m), LogLevel: m.LogLevel, EntryRole: m.EntryRole}
	if m.Suspension != nil {
		out.Suspension = &SuspensionView{Category: m.Suspension.Category, SuspendedAt: m.Suspension.SuspendedAt}
	}
	resolver := render.NewLabelResolver(s.labels, render.TierFriendly)
	v.mu.Lock()
	tree := render.RoleTree(v.model)
	out.RoleTree = tree
	out.Roles = []RoleView{}
	var walk func([]render.RoleNode)
	walk = func(nodes []render.RoleNode) {
		for _, n := range nodes {
			rv := RoleView{ID: n.ID, Role: n.Role, Status: n.Outcome, ErrorKind: n.ErrorKind, Metrics: n.Metrics}
			if n.Open {
				rv.Status = "running"
			}
			if p, ok := v.model.Participant(n.ID); ok {
				rv.Invocations, rv.Turns = p.Invocations, p.Turns
			}
			out.Roles = append(out.Roles, rv)
			walk(n.Children)
		}
	}
	walk(tree)
	if out.RoleTree == nil {
		out.RoleTree = []render.RoleNode{}
	}
	out.RecentLog = v.facts.recentLog()
	out.CurrentActivity = render.NowCaption(v.model, resolver)
	out.Questions = append([]QuestionRecord{}, v.facts.questions...)
	out.Interrupts = append([]InterruptRecord{}, v.facts.interrupts...)
	out.PlanModifications = append([]PlanModRecord{}, v.facts.planMods...)
	out.NoAction, out.Notes = v.facts.noAction, append([]string(nil), v.facts.notes...)
	out.Totals = render.CostStrip(v.model)
	out.FlowVersion = v.model.Version
	out.Meters = s.meters(v)
	v.mu.Unlock()
	out.InterruptPending = s.sess.InterruptPending(runID)
	return out, 0, ""
}

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	view, status, code := s.runView(r.PathValue("id"))
	if view == nil {
		writeError(w, status, code)
		return
	}
	writeJSON(w, http.StatusOK, view)
}

// latestRunID is the live run, else the newest run of the workspace.
func (s *Server) latestRunID() (string, bool) {
	if id, ok := s.sess.Active(); ok {
		return id, true
	}
	if id := s.views.liveID(); id != "" {
		return id, true
	}
	ids, err := s.sess.Workspace().ListRunIDs()
	if err != nil || len(ids) == 0 {
		return "", false
	}
	return ids[0], true
}

func (s *Server) handleLatestRun(w http.ResponseWriter, r *http.Request) {
	id, ok := s.latestRunID()
	if !ok {
		writeError(w, http.StatusNotFound, "no_runs")
		return
	}
	view, status, code := s.runView(id)
	if view == nil {
		writeError(w, status, code)
		return
	}
	writeJSON(w, http.StatusOK, view)
}

// Log paging bounds.
const (
	defaultLogLimit = 100
	maxLogLimit     = 500
)

func (s *Server) handleLog(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	path, err := s.sess.Workspace().LogPath(id)
	if err != nil {
		writeError(w, http.StatusNotFound, "unknown_run")
		return
	}
	offset, ok1 := queryInt(r, "offset", 0)
	limit, ok2 := queryInt(r, "limit", defaultLogLimit)
	if !ok1 || !ok2 || offset < 0 || limit < 1 || limit > maxLogLimit {
		writeError(w, http.StatusBadRequest, "invalid_query")
		return
	}
	if _, err := os.Stat(path); err != nil {
		if _, merr := s.sess.Workspace().ReadMeta(id); merr != nil {
			writeError(w, http.StatusNotFound, "unknown_run")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"runId": id, "offset": offset, "events": []LogEntry{}, "total": 0})
		return
	}
	events := []LogEntry{}
	total := int64(0)
	_, err = store.ReadLog(path, func(seq int64, rec []byte) error {
		total = seq + 1
		if seq < int64(offset) || len(events) >= limit {
			return nil
		}
		var ev event.Event
		if json.Unmarshal(rec, &ev) != nil {
			return nil
		}
		ev.Seq = seq
		events = append(events, LogEntry{Seq: seq, Timestamp: ev.Timestamp, Type: ev.Type, Payload: boundedPayload(ev)})
		return nil
	})
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"runId": id, "offset": offset, "events": events, "total": total})
}

func queryInt(r *http.Request, name string, def int) (int, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// maxPlanBytes bounds GET /api/runs/:id/plan.
const maxPlanBytes = 64 << 10

func (s *Server) handlePlan(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.sess.Workspace().RunDir(id); err != nil {
		writeError(w, http.StatusNotFound, "unknown_run")
		return
	}
	if _, err := s.sess.Workspace().ReadMeta(id); err != nil {
		writeError(w, http.StatusNotFound, "unknown_run")
		return
	}
	b, err := s.sess.Workspace().ReadPlan(id)
	if errors.Is(err, os.ErrNotExist) || store.IsRecordError(err) {
		// A plan that is a link, a FIFO or a device is not read: the run
		// shows no plan, as the terminal does.
		writeJSON(w, http.StatusOK, map[string]any{"content": nil})
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal")
		return
	}
	content, cut := clip(string(b), maxPlanBytes)
	writeJSON(w, http.StatusOK, map[string]any{"content": content, "truncated": cut})
}

type interruptBody struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (s *Server) handleInterrupt(w http.ResponseWriter, r *http.Request) {
	var in interruptBody
	if !decodeBody(w, r, &in) {
		return
	}
	switch err := s.sess.Interrupt(r.PathValue("id"), in.Kind, in.Message); {
	case errors.Is(err, runner.ErrInvalidKind), errors.Is(err, runner.ErrEmptyMessage):
		writeError(w, http.StatusBadRequest, "invalid_body")
	case errors.Is(err, runner.ErrRunNotActive):
		writeError(w, http.StatusConflict, "run_not_active")
	case err != nil:
		writeError(w, http.StatusInternalServerError, "internal")
	default:
		writeJSON(w, http.StatusAccepted, map[string]bool{"ok": true})
	}
}

// handleControl serves pause, resume and terminate: 202 when the request
// was taken, 409 when the run is not live (or, for resume, not paused).
func (s *Server) handleControl(op func(runID string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch err := op(r.PathValue("id")); {
		case errors.Is(err, runner.ErrRunNotActive):
			writeError(w, http.StatusConflict, "run_not_active")
		case err != nil:
			writeError(w, http.StatusConflict, "not_paused")
		default:
			writeJSON(w, http.StatusAccepted, map[string]bool{"ok": true})
		}
	}
}

// handleResume resumes a run: a paused or suspended live run, or — when no
// run is live — a stopped run that can resume from its checkpoint
// (runner.Session.Resume). 202 when taken; 409 run_in_progress when another
// run is live, 409 not_paused for a live run that is neither paused nor
// suspended, 409 run_not_active for a run that cannot resume (finished,
// unknown, no valid checkpoint), 500 resume_failed when its checkpoint
// would not load.
func (s *Server) handleResume(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	err := s.sess.Resume(id)
	if err == nil {
		writeJSON(w, http.StatusAccepted, map[string]bool{"ok": true})
		return
	}
	active, live := s.sess.Active()
	switch {
	case errors.Is(err, runner.ErrRunInProgress):
		writeError(w, http.StatusConflict, "run_in_progress")
	case errors.Is(err, runner.ErrRunNotActive):
		if live && active != id {
			if m, merr := s.sess.Workspace().ReadMeta(id); merr == nil && !store.Terminal(m.Status) {
				writeError(w, http.StatusConflict, "run_in_progress")
				return
			}
		}
		writeError(w, http.StatusConflict, "run_not_active")
	case live && active == id:
		writeError(w, http.StatusConflict, "not_paused")
	default:
		writeError(w, http.StatusInternalServerError, "resume_failed")
	}
}
