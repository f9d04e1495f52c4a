package web

import (
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
	// A resumed run's live view is read from its log when it is first
	// asked for: until then logPath is set and the session's events only
	// move before, the first line the log read must stop at.
	logPath string
	before  int64
	// next is the line after the last one read from the log: the
	// session's events before it are already in the view.
	next int64
}

func newRunView(runID string) *runView {
	return &runView{runID: runID, model: render.NewModel(), facts: newFacts()}
}

// apply folds one event in. The caller holds v.mu.
func (v *runView) apply(e event.Event) {
	if e.Ephemeral {
		return
	}
	if v.logPath != "" {
		// Not read yet: the log holds e (it is appended before it is
		// published), so the read will include it.
		v.before = max(v.before, e.Seq+1)
		return
	}
	if e.Seq < v.next {
		return // read from the log already (adopt)
	}
	v.model.Apply(e)
	v.facts.apply(e)
}

// viewCache holds the live run's view (fed by the session) and a few past
// runs' views built from their logs, keyed by run id and log size.
type viewCache struct {
	ws     store.Workspace
	labels render.LabelSet

	mu       sync.Mutex
	live     *runView
	past     map[string]*runView
	order    []string // past run ids, least recently used first
	building map[string]*viewBuild
}

func newViewCache(ws store.Workspace, labels render.LabelSet) *viewCache {
	return &viewCache{ws: ws, labels: labels, past: map[string]*runView{}, building: map[string]*viewBuild{}}
}

// resetLive starts the live view from the session's backlog (the current
// run's events so far, if any).
func (c *viewCache) resetLive(backlog []event.Event) {
	for _, e := range backlog {
		c.applyLive(e)
	}
}

// applyLive folds a session event into the live view, and returns the
// live run's id ("" before any run). A run_started or run_resumed makes its
// run the live view, read from the log when it is first asked for
// (followLive).
func (c *viewCache) applyLive(e event.Event) string {
	switch e.Type {
	case event.RunStarted:
		var p event.RunStartedPayload
		if e.Decode(&p) == nil && p.RunID != "" {
			c.followLive(p.RunID, e.Seq)
		}
	case event.RunResumed:
		var p event.RunResumedPayload
		if e.Decode(&p) == nil {
			c.followLive(p.RunID, e.Seq)
		}
	}
	c.mu.Lock()
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

// followLive makes runID the live view. While nobody asks for it, its
// events are only counted: the view is read from the run's log, up to the
// line before, at the first request (readLog), and folds the session's
// events from then on. Every console serves the API for `attach`, so
// folding each event with no browser or attached terminal watching was a
// second InteractionModel paid by every run; and without it, every request
// for a resumed run's flow rebuilt its view from a log that grows with
// each event (ten browsers on a resumed run of 100 MB took 24 s of CPU and
// 3 GiB). A run whose log is not on disk (a session that publishes events
// without logging them) is folded at once instead.
func (c *viewCache) followLive(runID string, before int64) {
	if store.CheckRunID(runID) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live != nil && c.live.runID == runID {
		return
	}
	v := newRunView(runID)
	if path, err := c.ws.LogPath(runID); err == nil {
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
			v.logPath, v.before = path, before
		}
	}
	c.live = v
	delete(c.past, runID)
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
		v.readLog()
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
	// Requests that arrive while the run's view is being built wait for
	// that build instead of each reading the whole log: ten browsers
	// opening a run of 100 MB at once made ten views of 300 MiB each.
	if b, ok := c.building[runID]; ok {
		c.mu.Unlock()
		<-b.done
		return b.v, b.err
	}
	b := &viewBuild{done: make(chan struct{})}
	c.building[runID] = b
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.building, runID)
		c.mu.Unlock()
		close(b.done)
	}()
	b.v, b.err = c.build(runID, path)
	return b.v, b.err
}

// viewBuild is a view of a past run being built, which later requests for
// the same run wait for.
type viewBuild struct {
	done chan struct{}
	v    *runView
	err  error
}

// build reads a past run's view from its log and caches it.
func (c *viewCache) build(runID, path string) (*runView, error) {
	v, err := buildView(runID, path, -1)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if live := c.live; live != nil && live.runID == runID {
		c.mu.Unlock()
		// It went live meanwhile: the live view takes this build, or
		// reads the log itself when the session is already past it.
		if !live.adopt(v) {
			live.readLog()
		}
		return live, nil
	}
	c.past[runID] = v
	c.touch(runID)
	for len(c.order) > maxCachedRuns {
		delete(c.past, c.order[0])
		c.order = c.order[1:]
	}
	c.mu.Unlock()
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

// adopt makes a resumed run's live view, not read yet, the view b built
// from the whole log, when b read at least every line the session has
// published since the resume; the session's events b already holds are
// then skipped (next). It reports whether it did.
func (v *runView) adopt(b *runView) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.logPath == "" || b.next < v.before {
		return false
	}
	v.logPath = ""
	v.model, v.facts, v.next = b.model, b.facts, b.next
	return true
}

// readLog reads a resumed run's live view from its log, once. It holds
// the view's lock throughout, so the session's next events wait for it and
// follow in order.
func (v *runView) readLog() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.logPath == "" {
		return
	}
	path := v.logPath
	v.logPath = ""
	if built, err := buildView(v.runID, path, v.before); err == nil {
		v.model, v.facts, v.next = built.model, built.facts, built.next
	}
}

// errEnough ends a replay at its limit.
var errEnough = errors.New("replay limit reached")

// buildView replays a run's log.jsonl, the lines before line before when
// it is not negative. Torn or malformed lines are skipped, as every reader
// of the log does.
func buildView(runID, path string, before int64) (*runView, error) {
	v := newRunView(runID)
	if n, err := store.CountLogLines(path); err == nil {
		v.model.Reserve(int(n))
	}
	var read int64
	_, err := store.ReadLog(path, func(seq int64, rec []byte) error {
		if before >= 0 && seq >= before {
			return errEnough
		}
		read += int64(len(rec)) + 1
		if e, err := event.ParseLine(rec); err == nil {
			e.Seq = seq
			v.apply(e)
		}
		v.next = seq + 1
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, fmt.Errorf("read log of %s: %w", runID, err)
	}
	if st, err := os.Stat(path); err == nil && st.Size() == read {
		v.size = st.Size()
	} else {
		v.size = read
	}
	return v, nil
}
