package runner

// Crash recovery of the queue: items a crash left active are bound to
// their runs, settled from meta.json, resumed or put back to wait.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// Recover reconciles the workspace's runs (see Session.Reconcile) and then
// the queue's active items with them: an item whose run finished is
// settled from its meta.json; an item whose run died unresumable, or whose
// dispatch was cut short before the run started, waits again at the head;
// an item whose run can resume is resumed (when the session is idle) and
// stays active.
func (s *Scheduler) Recover(ctx context.Context) error {
	rec, err := s.sess.Reconcile()
	if err != nil {
		return fmt.Errorf("reconcile runs: %w", err)
	}
	_, err = s.repair(ctx, &rec)
	s.notify()
	return err
}

// repair settles stale active items; rec is the startup reconciliation
// (nil on the loop's idle checks). It reports whether it changed anything.
func (s *Scheduler) repair(ctx context.Context, rec *Reconciliation) (bool, error) {
	items, err := s.q.List()
	if err != nil {
		return false, err
	}
	ws := s.sess.Workspace()
	changed := false
	var errs []error
	for _, it := range items {
		if it.Status != store.QueueActive {
			continue
		}
		live, busy := s.sess.Active()
		if it.RunID == "" {
			// The dispatch was cut short between marking the item active
			// and recording its run: bind it to the run it started, if
			// that run survived and is resumable, else run it again.
			var candidates []string
			if rec != nil && rec.Resumable != "" {
				candidates = append(candidates, rec.Resumable)
			}
			if busy {
				candidates = append(candidates, live)
			}
			for _, runID := range candidates {
				if s.runClaimed(items, runID) {
					continue
				}
				if m, err := ws.ReadMeta(runID); err == nil && !m.Foreign && m.Task == it.DispatchTask() {
					bound, err := s.q.MarkActive(ctx, it.ID, runID)
					if err != nil {
						errs = append(errs, err)
						break
					}
					it, items = bound, s.withItem(items, bound)
					break
				}
			}
			if it.RunID == "" {
				errs = append(errs, s.unclaim(ctx, it.ID))
				changed = true
				continue
			}
		}
		if busy && it.RunID == live {
			continue
		}
		m, err := ws.ReadMeta(it.RunID)
		if err != nil || m.Foreign {
			// A run record Guildhall cannot vouch for settles nothing:
			// the item's task runs again.
			errs = append(errs, s.unclaim(ctx, it.ID))
			changed = true
			continue
		}
		switch {
		case store.Terminal(m.Status) && m.Status == store.StatusInterrupted && m.Result == nil:
			// The process running it died and the run could not resume:
			// the task did not fail, so it runs again.
			errs = append(errs, s.unclaim(ctx, it.ID))
			changed = true
		case store.Terminal(m.Status):
			settled, err := s.q.Finish(ctx, it.ID, outcomeFromMeta(ws, m))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			s.settled(settled)
			changed = true
		case !busy:
			if err := s.sess.ResumeCheckpoint(ctx, it.RunID); err != nil && !errors.Is(err, ErrRunInProgress) {
				settled, ferr := s.q.Finish(ctx, it.ID, store.QueueOutcome{RunID: it.RunID, RunStatus: store.StatusError,
					Error: "the run stopped before finishing and could not resume: " + err.Error()})
				if ferr != nil {
					errs = append(errs, ferr)
					continue
				}
				s.settled(settled)
			}
			changed = true
		}
	}
	return changed, errors.Join(errs...)
}

func (s *Scheduler) unclaim(ctx context.Context, id string) error {
	it, err := s.q.Unclaim(ctx, id)
	if err == nil {
		s.settled(it)
	}
	return err
}

func (s *Scheduler) runClaimed(items []store.QueueItem, runID string) bool {
	return slices.ContainsFunc(items, func(it store.QueueItem) bool { return it.RunID == runID })
}

func (s *Scheduler) withItem(items []store.QueueItem, it store.QueueItem) []store.QueueItem {
	out := slices.Clone(items)
	for i := range out {
		if out[i].ID == it.ID {
			out[i] = it
		}
	}
	return out
}

// outcomeFromMeta is the outcome of a finished run read back from disk,
// with a parked run's question recovered from its log.
func outcomeFromMeta(ws store.Workspace, m *store.Meta) store.QueueOutcome {
	o := store.QueueOutcome{RunID: m.RunID, RunStatus: m.Status}
	if m.Result != nil {
		o.Summary = m.Result.Summary
		if m.Result.Error != nil {
			o.Error = m.Result.Error.Message
		}
	}
	if m.Error != nil && m.Error.Message != "" {
		o.Error = m.Error.Message
	}
	if m.Status == store.StatusNeedsClarification {
		o.Question = lastQuestion(ws, m.RunID)
	}
	return o
}

// lastQuestion is the last ask_human question in a run's log, nil if none.
func lastQuestion(ws store.Workspace, runID string) *store.QueueQuestion {
	path, err := ws.LogPath(runID)
	if err != nil {
		return nil
	}
	var q *store.QueueQuestion
	_, _ = store.ReadLog(path, func(_ int64, rec []byte) error {
		var e event.Event
		if json.Unmarshal(rec, &e) != nil || e.Type != event.AskHuman {
			return nil
		}
		var p event.AskHumanPayload
		if e.Decode(&p) == nil {
			q = queueQuestion(p)
		}
		return nil
	})
	return q
}

func queueQuestion(p event.AskHumanPayload) *store.QueueQuestion {
	q := &store.QueueQuestion{ID: p.ID, Text: p.Question, Context: p.Context}
	for _, o := range p.Options {
		q.Options = append(q.Options, store.QueueOption{Label: o.Label, Description: o.Description})
	}
	return q
}
