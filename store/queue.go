package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Queue is the project's task queue, .orchestration/queue.json. Every
// change is a read-modify-write cycle under an flock on
// .orchestration/queue.lock and ends in an atomic replace, so concurrent
// processes never lose or duplicate an item and a crash leaves the
// previous complete file. A Queue is safe for concurrent use.
type Queue struct {
	ws  Workspace
	now func() time.Time
}

// Queue returns the workspace's queue.
func (w Workspace) Queue() *Queue { return &Queue{ws: w, now: time.Now} }

// WithClock returns a copy of q that reads time from now (tests pin it).
func (q *Queue) WithClock(now func() time.Time) *Queue {
	c := *q
	c.now = now
	return &c
}

// Path is the queue file's path.
func (q *Queue) Path() string { return filepath.Join(q.ws.Orchestration(), QueueFile) }

// List returns every item in queue order: waiting items run in the order
// they appear.
func (q *Queue) List() ([]QueueItem, error) {
	f, err := q.read()
	if err != nil {
		return nil, err
	}
	return f.Items, nil
}

// Waiting returns the waiting items in dispatch order; foreign items are
// never among them.
func (q *Queue) Waiting() ([]QueueItem, error) {
	items, err := q.List()
	if err != nil {
		return nil, err
	}
	var out []QueueItem
	for _, it := range items {
		if it.dispatchable() {
			out = append(out, it)
		}
	}
	return out, nil
}

// Get returns one item.
func (q *Queue) Get(id string) (QueueItem, error) {
	f, err := q.read()
	if err != nil {
		return QueueItem{}, err
	}
	i := f.index(id)
	if i < 0 {
		return QueueItem{}, &QueueItemError{Op: "get", ID: id, Err: ErrNotFound}
	}
	return f.Items[i], nil
}

// Add appends a waiting item at the tail and returns it.
func (q *Queue) Add(ctx context.Context, spec QueueSpec) (QueueItem, error) {
	if strings.TrimSpace(spec.Task) == "" {
		return QueueItem{}, invalidf("the task is empty; say what the run should do")
	}
	if err := CheckEffort(spec.Effort); err != nil {
		return QueueItem{}, err
	}
	if err := CheckLogLevel(spec.LogLevel); err != nil {
		return QueueItem{}, err
	}
	if spec.ContinuesFrom != "" && !ValidRunID(spec.ContinuesFrom) {
		return QueueItem{}, invalidf("continue from %q: not a run id of the form run-YYYYMMDD-HHMMSS", spec.ContinuesFrom)
	}
	var added QueueItem
	err := q.update(ctx, func(f *queueFile, now time.Time) error {
		added = QueueItem{
			ID: f.newID(now), Task: spec.Task, Effort: spec.Effort, LogLevel: spec.LogLevel,
			ContinuesFrom: spec.ContinuesFrom, Status: QueueWaiting, CreatedAt: now, UpdatedAt: now,
		}
		f.Items = append(f.Items, added)
		return nil
	})
	return added, err
}

// Edit changes the task or effort of a waiting item.
func (q *Queue) Edit(ctx context.Context, id string, e QueueEdit) (QueueItem, error) {
	if e.Task != nil && strings.TrimSpace(*e.Task) == "" {
		return QueueItem{}, invalidf("the task is empty; say what the run should do")
	}
	if e.Effort != nil {
		if err := CheckEffort(*e.Effort); err != nil {
			return QueueItem{}, err
		}
	}
	return q.change(ctx, "edit", id, []string{QueueWaiting}, "only a waiting item can be edited",
		func(f *queueFile, i int, now time.Time) error {
			it := &f.Items[i]
			if e.Task != nil {
				it.Task = *e.Task
			}
			if e.Effort != nil {
				it.Effort = *e.Effort
			}
			return nil
		})
}

// MoveTo moves a waiting item to position pos (0-based) among the waiting
// items; out-of-range positions are clamped.
func (q *Queue) MoveTo(ctx context.Context, id string, pos int) (QueueItem, error) {
	return q.change(ctx, "move", id, []string{QueueWaiting}, "only a waiting item can be reordered",
		func(f *queueFile, i int, now time.Time) error {
			f.moveWaiting(i, pos)
			return nil
		})
}

// MoveBy moves a waiting item delta places among the waiting items
// (negative is towards the head), clamped.
func (q *Queue) MoveBy(ctx context.Context, id string, delta int) (QueueItem, error) {
	return q.change(ctx, "move", id, []string{QueueWaiting}, "only a waiting item can be reordered",
		func(f *queueFile, i int, now time.Time) error {
			f.moveWaiting(i, f.waitingPos(i)+delta)
			return nil
		})
}

// Cancel marks a waiting or needs_input item cancelled. An active item's
// run is stopped through the session (terminate), not here.
//
// A foreign item (see QueueItem.Foreign) is removed from the queue instead:
// marking it cancelled would mean sealing it, and a sealed item could be
// requeued.
func (q *Queue) Cancel(ctx context.Context, id string) (QueueItem, error) {
	var removed QueueItem
	err := q.update(ctx, func(f *queueFile, now time.Time) error {
		if i := f.index(id); i >= 0 && f.Items[i].Foreign {
			removed = f.Items[i]
			f.Items = slices.Delete(f.Items, i, i+1)
		}
		return nil
	})
	if err != nil || removed.ID != "" {
		return removed, err
	}
	return q.change(ctx, "cancel", id, []string{QueueWaiting, QueueNeedsInput},
		"only a waiting or needs_input item can be cancelled (terminate an active item's run instead)",
		func(f *queueFile, i int, now time.Time) error {
			it := &f.Items[i]
			it.Status = QueueCancelled
			it.EndedAt = &now
			return nil
		})
}

// Requeue returns a done, error, cancelled or needs_input item to waiting
// at the tail, under the same id (clients keep their handle; Runs keeps
// the earlier attempts). An item that has run continues from its latest
// run, so the retry sees how the last attempt ended.
func (q *Queue) Requeue(ctx context.Context, id string) (QueueItem, error) {
	return q.change(ctx, "requeue", id, []string{QueueDone, QueueError, QueueCancelled, QueueNeedsInput},
		"only a done, error, cancelled or needs_input item can be requeued",
		func(f *queueFile, i int, now time.Time) error {
			it := f.Items[i]
			if it.RunID != "" {
				it.ContinuesFrom = it.RunID
			}
			it.Status = QueueWaiting
			it.resetRound()
			f.Items = append(slices.Delete(f.Items, i, i+1), it)
			return nil
		})
}

// Answer records the operator's answer to a needs_input item's question
// and returns it to the head of the waiting items; its next run continues
// from the parked run and its task carries the answer.
func (q *Queue) Answer(ctx context.Context, id, answer string) (QueueItem, error) {
	if strings.TrimSpace(answer) == "" {
		return QueueItem{}, invalidf("the answer is empty")
	}
	return q.change(ctx, "answer", id, []string{QueueNeedsInput}, "only a needs_input item can be answered",
		func(f *queueFile, i int, now time.Time) error {
			it := f.Items[i]
			question := it.Summary
			if it.Question != nil {
				question = it.Question.Text
			}
			it.Answer = answer
			it.Answers = append(it.Answers, QueueAnswer{Question: question, Answer: answer})
			it.Status = QueueWaiting
			it.resetRound()
			f.Items = slices.Delete(f.Items, i, i+1)
			f.Items = slices.Insert(f.Items, f.firstWaiting(), it)
			return nil
		})
}

// ClaimNext marks the head waiting item active, before its run starts, and
// returns it; ok is false when nothing waits. The claimed item has no run
// id until MarkActive records one, so a crash between the two is visible.
func (q *Queue) ClaimNext(ctx context.Context) (item QueueItem, ok bool, err error) {
	// A cheap unlocked look first: the scheduler polls.
	if w, err := q.Waiting(); err != nil || len(w) == 0 {
		return QueueItem{}, false, err
	}
	err = q.update(ctx, func(f *queueFile, now time.Time) error {
		i := f.firstWaiting()
		if i >= len(f.Items) || !f.Items[i].dispatchable() {
			return nil
		}
		it := &f.Items[i]
		it.Status, it.RunID, it.StartedAt, it.EndedAt = QueueActive, "", &now, nil
		item, ok = *it, true
		return nil
	})
	return item, ok, err
}

// MarkActive records the run an active item was dispatched as.
func (q *Queue) MarkActive(ctx context.Context, id, runID string) (QueueItem, error) {
	if !ValidRunID(runID) {
		return QueueItem{}, invalidf("mark %s active: run id %q is not valid", id, runID)
	}
	return q.change(ctx, "start", id, []string{QueueActive}, "only an active item gets a run",
		func(f *queueFile, i int, now time.Time) error {
			it := &f.Items[i]
			if it.RunID == runID {
				return nil
			}
			if it.RunID != "" {
				return &QueueItemError{Op: "start", ID: id, Status: it.Status, Err: ErrStatusForbidden,
					Reason: "it is already running as " + it.RunID}
			}
			it.RunID = runID
			it.Runs = append(it.Runs, runID)
			return nil
		})
}

// Unclaim returns an active item to the head of the waiting items: its run
// never started (the workspace was busy), or the process running it died
// and the run cannot resume.
func (q *Queue) Unclaim(ctx context.Context, id string) (QueueItem, error) {
	return q.change(ctx, "unclaim", id, []string{QueueActive}, "only an active item can return to waiting",
		func(f *queueFile, i int, now time.Time) error {
			it := f.Items[i]
			it.Status, it.RunID = QueueWaiting, ""
			it.resetRound()
			f.Items = slices.Delete(f.Items, i, i+1)
			f.Items = slices.Insert(f.Items, f.firstWaiting(), it)
			return nil
		})
}

// Finish settles an active item from its run's outcome: success → done,
// needs_clarification → needs_input with the question (continuing from
// the parked run once answered), anything else → error.
func (q *Queue) Finish(ctx context.Context, id string, o QueueOutcome) (QueueItem, error) {
	return q.change(ctx, "finish", id, []string{QueueActive}, "only an active item can be finished",
		func(f *queueFile, i int, now time.Time) error {
			it := &f.Items[i]
			if o.RunID != "" && it.RunID != "" && it.RunID != o.RunID {
				return &QueueItemError{Op: "finish", ID: id, Status: it.Status, Err: ErrStatusForbidden,
					Reason: fmt.Sprintf("its run is %s, not %s", it.RunID, o.RunID)}
			}
			if o.RunID != "" && it.RunID == "" {
				it.RunID = o.RunID
				it.Runs = append(it.Runs, o.RunID)
			}
			it.EndedAt = &now
			it.Summary, it.Error = o.Summary, ""
			switch o.RunStatus {
			case StatusSuccess:
				it.Status = QueueDone
			case StatusNeedsClarification:
				it.Status = QueueNeedsInput
				it.Question = o.Question
				if it.Question == nil {
					it.Question = &QueueQuestion{Text: o.Summary}
				}
				if it.RunID != "" {
					it.ContinuesFrom = it.RunID
				}
				it.Answer = ""
			default:
				it.Status = QueueError
				it.Error = o.Error
				if it.Error == "" {
					it.Error = o.Summary
				}
				if it.Error == "" {
					it.Error = "the run ended " + o.RunStatus
				}
			}
			return nil
		})
}

// Reset moves a malformed queue.json aside as queue.json.corrupt-<UTC
// time> and returns the new name; the queue starts empty. A well-formed
// queue is never reset.
func (q *Queue) Reset(ctx context.Context) (string, error) {
	unlock, err := q.lock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	_, err = q.read()
	var ce *QueueCorruptError
	if !errors.As(err, &ce) {
		if err != nil {
			return "", err
		}
		return "", invalidf("%s is well formed; there is nothing to reset", q.Path())
	}
	dst := QueueFile + ".corrupt-" + q.now().UTC().Format("20060102-150405.000")
	d, err := openRecordsDir(q.ws.Orchestration(), false)
	if err != nil {
		return "", err
	}
	defer d.close()
	if err := d.rename(QueueFile, dst); err != nil {
		return "", fmt.Errorf("move %s aside: %w", q.Path(), err)
	}
	if err := d.sync(); err != nil {
		return "", err
	}
	return d.join(dst), nil
}
