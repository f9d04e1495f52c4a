package web

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

// Queue is what the server needs of the task queue; *runner.Scheduler
// satisfies it. Every change goes through it so that the scheduler wakes
// and its watchers (this server's event stream among them) hear of it.
type Queue interface {
	Add(ctx context.Context, spec store.QueueSpec) (store.QueueItem, error)
	Edit(ctx context.Context, id string, e store.QueueEdit) (store.QueueItem, error)
	MoveTo(ctx context.Context, id string, pos int) (store.QueueItem, error)
	MoveBy(ctx context.Context, id string, delta int) (store.QueueItem, error)
	Cancel(ctx context.Context, id string) (store.QueueItem, error)
	Requeue(ctx context.Context, id string) (store.QueueItem, error)
	Answer(ctx context.Context, id, answer string) (store.QueueItem, error)
	List() ([]store.QueueItem, error)
	Get(id string) (store.QueueItem, error)
	SubmitOrQueue(ctx context.Context, sub runner.Submission) (runID string, queued *store.QueueItem, err error)
	// Watch signals (coalesced) whenever the queue changed.
	Watch() (<-chan struct{}, func())
}

// followQueue tells the event stream's clients whenever the queue changed.
func (s *Server) followQueue(ctx context.Context) {
	ch, stop := s.queue.Watch()
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			s.hub.send(notice{name: "queue", data: []byte("{}")})
		}
	}
}

// writeQueueError maps a queue error to its answer: store.ErrNotFound 404
// not_found, store.ErrStatusForbidden 409 status_forbidden, store.ErrInvalid
// 400 invalid_body, store.ErrForeign 409 foreign, store.ErrQueueCorrupt 503
// queue_corrupt, anything else 500 internal.
func writeQueueError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found")
	case errors.Is(err, store.ErrStatusForbidden):
		writeError(w, http.StatusConflict, "status_forbidden")
	case errors.Is(err, store.ErrForeign):
		writeError(w, http.StatusConflict, "foreign")
	case errors.Is(err, store.ErrInvalid):
		writeError(w, http.StatusBadRequest, "invalid_body")
	case errors.Is(err, store.ErrQueueCorrupt):
		writeError(w, http.StatusServiceUnavailable, "queue_corrupt")
	default:
		writeError(w, http.StatusInternalServerError, "internal")
	}
}

// queueOr answers 404 queue_unavailable when the server has no queue.
func (s *Server) queueOr(w http.ResponseWriter) bool {
	if s.queue == nil {
		writeError(w, http.StatusNotFound, "queue_unavailable")
		return false
	}
	return true
}

// queueItemID is the {id} of a queue route, or "" (after answering 404)
// when the console serves no queue or id is not of the form q-<ms>-<n>.
func (s *Server) queueItemID(w http.ResponseWriter, r *http.Request) string {
	if !s.queueOr(w) {
		return ""
	}
	id := r.PathValue("id")
	if !store.ValidQueueID(id) {
		writeError(w, http.StatusNotFound, "not_found")
		return ""
	}
	return id
}

func writeItem(w http.ResponseWriter, status int, it store.QueueItem, err error) {
	if err != nil {
		writeQueueError(w, err)
		return
	}
	writeJSON(w, status, map[string]any{"item": it})
}

func (s *Server) handleQueueList(w http.ResponseWriter, r *http.Request) {
	if !s.queueOr(w) {
		return
	}
	items, err := s.queue.List()
	if err != nil {
		writeQueueError(w, err)
		return
	}
	if items == nil {
		items = []store.QueueItem{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

func (s *Server) handleQueueGet(w http.ResponseWriter, r *http.Request) {
	id := s.queueItemID(w, r)
	if id == "" {
		return
	}
	it, err := s.queue.Get(id)
	writeItem(w, http.StatusOK, it, err)
}

// checkContinuation validates a continuesFrom field: it must name a run of
// the workspace. It answers the error itself.
func (s *Server) checkContinuation(w http.ResponseWriter, from string) bool {
	if from == "" {
		return true
	}
	if _, err := s.sess.Workspace().ReadMeta(from); err != nil {
		writeError(w, http.StatusNotFound, "unknown_run")
		return false
	}
	return true
}

func (s *Server) handleQueueAdd(w http.ResponseWriter, r *http.Request) {
	if !s.queueOr(w) {
		return
	}
	in, ok := decodeTask(w, r)
	if !ok {
		return
	}
	if !s.checkContinuation(w, in.ContinuesFrom) {
		return
	}
	it, err := s.queue.Add(context.WithoutCancel(r.Context()),
		store.QueueSpec{Task: in.Task, Effort: in.Effort, LogLevel: in.LogLevel, ContinuesFrom: in.ContinuesFrom})
	writeItem(w, http.StatusCreated, it, err)
}

// queuePatchBody is PATCH /api/queue/:id: an edit of a waiting item and/or
// a move. Absent fields are left alone; position is 0-based among the
// waiting items, moveBy relative (negative: towards the head).
type queuePatchBody struct {
	Task     *string `json:"task"`
	Effort   *string `json:"effort"`
	Position *int    `json:"position"`
	MoveBy   *int    `json:"moveBy"`
}

func (s *Server) handleQueueEdit(w http.ResponseWriter, r *http.Request) {
	id := s.queueItemID(w, r)
	if id == "" {
		return
	}
	var in queuePatchBody
	if !decodeBody(w, r, &in) {
		return
	}
	edit := in.Task != nil || in.Effort != nil
	switch {
	case !edit && in.Position == nil && in.MoveBy == nil,
		in.Position != nil && in.MoveBy != nil,
		in.Position != nil && *in.Position < 0,
		in.Task != nil && strings.TrimSpace(*in.Task) == "",
		in.Effort != nil && !validEffort(*in.Effort):
		writeError(w, http.StatusBadRequest, "invalid_body")
		return
	}
	ctx := context.WithoutCancel(r.Context())
	var it store.QueueItem
	var err error
	if edit {
		if it, err = s.queue.Edit(ctx, id, store.QueueEdit{Task: in.Task, Effort: in.Effort}); err != nil {
			writeQueueError(w, err)
			return
		}
	}
	switch {
	case in.Position != nil:
		it, err = s.queue.MoveTo(ctx, id, *in.Position)
	case in.MoveBy != nil:
		it, err = s.queue.MoveBy(ctx, id, *in.MoveBy)
	}
	writeItem(w, http.StatusOK, it, err)
}

func (s *Server) handleQueueCancel(w http.ResponseWriter, r *http.Request) {
	s.queueItemOp(w, r, Queue.Cancel)
}

func (s *Server) handleQueueRequeue(w http.ResponseWriter, r *http.Request) {
	s.queueItemOp(w, r, Queue.Requeue)
}

// queueItemOp applies op to the route's item and answers with the item.
// op is a method expression, so a console without a queue never calls it.
func (s *Server) queueItemOp(w http.ResponseWriter, r *http.Request, op func(Queue, context.Context, string) (store.QueueItem, error)) {
	id := s.queueItemID(w, r)
	if id == "" {
		return
	}
	it, err := op(s.queue, context.WithoutCancel(r.Context()), id)
	writeItem(w, http.StatusOK, it, err)
}

type queueAnswerBody struct {
	Answer string `json:"answer"`
}

func (s *Server) handleQueueAnswer(w http.ResponseWriter, r *http.Request) {
	id := s.queueItemID(w, r)
	if id == "" {
		return
	}
	var in queueAnswerBody
	if !decodeBody(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.Answer) == "" {
		writeError(w, http.StatusBadRequest, "invalid_body")
		return
	}
	it, err := s.queue.Answer(context.WithoutCancel(r.Context()), id, in.Answer)
	writeItem(w, http.StatusOK, it, err)
}

// queuedRun is POST /api/runs's answer when the task was queued.
type queuedRun struct {
	Queued store.QueueItem `json:"queued"`
}
