package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// maxCachedRuns bounds the past runs whose models are kept.
const maxCachedRuns = 4

// runView is one run as the server shows it: the InteractionModel plus the
// facts the run view lists (questions, interrupts, the recent log). It is
// built by applying the run's events in order, from the session (the live
// run) or from log.jsonl (a past run). Its lock guards every field.
type runView struct {
	mu    sync.Mutex
	runID string
	model *render.Model
	facts *facts
	size  int64 // log size it was built from (past runs)
}

func newRunView(runID string) *runView {
	return &runView{runID: runID, model: render.NewModel(), facts: newFacts()}
}

// apply folds one event in. The caller holds v.mu.
func (v *runView) apply(e event.Event) {
	if e.Ephemeral {
		return
	}
	v.model.Apply(e)
	v.facts.apply(e)
}

// viewCache holds the live run's view (fed by the session) and a few past
// runs' views built from their logs, keyed by run id and log size.
type viewCache struct {
	ws     store.Workspace
	labels render.LabelSet

	mu    sync.Mutex
	live  *runView
	past  map[string]*runView
	order []string // past run ids, least recently used first
}

func newViewCache(ws store.Workspace, labels render.LabelSet) *viewCache {
	return &viewCache{ws: ws, labels: labels, past: map[string]*runView{}}
}

// resetLive starts the live view from the session's backlog (the current
// run's events so far, if any).
func (c *viewCache) resetLive(backlog []event.Event) {
	for _, e := range backlog {
		c.applyLive(e)
	}
}

// applyLive folds a session event into the live view, starting a new one
// on run_started, and returns the live run's id ("" before any run).
func (c *viewCache) applyLive(e event.Event) string {
	c.mu.Lock()
	if e.Type == event.RunStarted {
		var p event.RunStartedPayload
		if e.Decode(&p) == nil && p.RunID != "" {
			c.live = newRunView(p.RunID)
			delete(c.past, p.RunID)
		}
	}
	v := c.live
	c.mu.Unlock()
	if v == nil {
		return ""
	}
	v.mu.Lock()
	v.apply(e)
	v.mu.Unlock()
	return v.runID
}

// liveID is the id of the run the session is following ("" before any).
func (c *viewCache) liveID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live == nil {
		return ""
	}
	return c.live.runID
}

// errNoRun is returned for a run id that names no run of the workspace.
var errNoRun = errors.New("no such run")

// get returns the view of runID: the live one, or a past run's built from
// its log (reused while the log's size is unchanged).
func (c *viewCache) get(runID string) (*runView, error) {
	if err := store.CheckRunID(runID); err != nil {
		return nil, errNoRun
	}
	c.mu.Lock()
	if c.live != nil && c.live.runID == runID {
		v := c.live
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()

	path, err := c.ws.LogPath(runID)
	if err != nil {
		return nil, errNoRun
	}
	st, err := os.Stat(path)
	if err != nil {
		if _, merr := c.ws.ReadMeta(runID); merr == nil {
			v := newRunView(runID) // a run with no log yet
			return v, nil
		}
		return nil, errNoRun
	}
	c.mu.Lock()
	if v, ok := c.past[runID]; ok && v.size == st.Size() {
		c.touch(runID)
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()

	v, err := buildView(runID, path)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live != nil && c.live.runID == runID {
		return c.live, nil // it went live meanwhile
	}
	c.past[runID] = v
	c.touch(runID)
	for len(c.order) > maxCachedRuns {
		delete(c.past, c.order[0])
		c.order = c.order[1:]
	}
	return v, nil
}

// touch moves runID to the most recently used end. The caller holds c.mu.
func (c *viewCache) touch(runID string) {
	for i, id := range c.order {
		if id == runID {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	c.order = append(c.order, runID)
}

// buildView replays a run's log.jsonl. Torn or malformed lines are skipped,
// as every reader of the log does.
func buildView(runID, path string) (*runView, error) {
	v := newRunView(runID)
	if n, err := store.CountLogLines(path); err == nil {
		v.model.Reserve(int(n))
	}
	var read int64
	_, err := store.ReadLog(path, func(seq int64, rec []byte) error {
		read += int64(len(rec)) + 1
		var e event.Event
		if json.Unmarshal(rec, &e) != nil {
			return nil
		}
		e.Seq = seq
		v.apply(e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read log of %s: %w", runID, err)
	}
	if st, err := os.Stat(path); err == nil && st.Size() == read {
		v.size = st.Size()
	} else {
		v.size = read
	}
	return v, nil
}
