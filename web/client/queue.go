package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

// Queue is the console's task queue over the API's /api/queue routes;
// nil when the console serves none.
func (s *Session) Queue() *Queue {
	if !s.queue {
		return nil
	}
	return &Queue{s: s}
}

// Queue is a console's task queue, as the terminal's Queue screen uses it.
type Queue struct{ s *Session }

type itemAnswer struct {
	Item store.QueueItem `json:"item"`
}

func queuePath(id, what string) string {
	p := "/api/queue/" + url.PathEscape(id)
	if what != "" {
		p += "/" + what
	}
	return p
}

// List is the queue in order.
func (q *Queue) List() ([]store.QueueItem, error) {
	var out struct {
		Items []store.QueueItem `json:"items"`
	}
	err := q.s.call(q.s.ctx, http.MethodGet, "/api/queue", nil, &out)
	items := out.Items[:0]
	for _, it := range out.Items {
		if it, ok := checkItem(it); ok {
			items = append(items, it)
		}
	}
	return items, err
}

// checkItem checks the machine fields of an item the server sent, which
// the Queue screen shows and puts in paths: an item whose id is not a
// queue id is not a console's, and a run id that is not one is dropped.
func checkItem(it store.QueueItem) (store.QueueItem, bool) {
	if !store.ValidQueueID(it.ID) {
		return it, false
	}
	if it.RunID != "" && !store.ValidRunID(it.RunID) {
		it.RunID = ""
	}
	return it, true
}

// Edit changes a waiting item's task or effort.
func (q *Queue) Edit(ctx context.Context, id string, e store.QueueEdit) (store.QueueItem, error) {
	body := map[string]any{}
	if e.Task != nil {
		body["task"] = *e.Task
	}
	if e.Effort != nil {
		body["effort"] = *e.Effort
	}
	return q.item(ctx, http.MethodPatch, queuePath(id, ""), body)
}

// MoveBy moves a waiting item delta places (negative: towards the head).
func (q *Queue) MoveBy(ctx context.Context, id string, delta int) (store.QueueItem, error) {
	return q.item(ctx, http.MethodPatch, queuePath(id, ""), map[string]int{"moveBy": delta})
}

// Cancel cancels a waiting or needs_input item.
func (q *Queue) Cancel(ctx context.Context, id string) (store.QueueItem, error) {
	return q.item(ctx, http.MethodDelete, queuePath(id, ""), nil)
}

// Requeue returns a finished item to the tail.
func (q *Queue) Requeue(ctx context.Context, id string) (store.QueueItem, error) {
	return q.item(ctx, http.MethodPost, queuePath(id, "requeue"), nil)
}

// Answer answers a needs_input item's parked question.
func (q *Queue) Answer(ctx context.Context, id, answer string) (store.QueueItem, error) {
	return q.item(ctx, http.MethodPost, queuePath(id, "answer"), map[string]string{"answer": answer})
}

// SubmitOrQueue starts sub, or queues it while a run is live.
func (q *Queue) SubmitOrQueue(ctx context.Context, sub runner.Submission) (string, *store.QueueItem, error) {
	return q.s.submit(ctx, sub)
}

func (q *Queue) item(ctx context.Context, method, path string, body any) (store.QueueItem, error) {
	var out itemAnswer
	if err := q.s.call(ctx, method, path, body, &out); err != nil {
		return store.QueueItem{}, err
	}
	it, ok := checkItem(out.Item)
	if !ok {
		return store.QueueItem{}, fmt.Errorf("%s %s: the answer names no queue item", method, path)
	}
	return it, nil
}
