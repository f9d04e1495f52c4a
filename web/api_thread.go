package web

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/runner/thread"
	"github.com/guildhall/guildhall/store"
)

// Thread bounds and timing.
const (
	// maxThreadEntries keeps the newest entries of a long thread.
	maxThreadEntries = 500
	// summaryWait is the most a thread request waits for a summary being
	// made (a cached one on disk answers well within it).
	summaryWait = 150 * time.Millisecond
	// summaryRetry is how long a failed summary of an unchanged thread is
	// not tried again.
	summaryRetry = time.Minute
	// maxSummaries bounds the summaries kept in memory.
	maxSummaries = 256
)

// Summary states of a ThreadView.
const (
	SummaryReady       = "ready"       // summary holds the generated title and description
	SummaryPending     = "pending"     // being made; ask again (the event stream says when the thread changes)
	SummaryUnavailable = "unavailable" // no model, or it failed: show the identity
)

// ThreadSummaryView is the generated title and description of a thread:
// model prose, shown as plain text only.
type ThreadSummaryView struct {
	Title       string `json:"title"`
	Description string `json:"description"`
}

// ThreadView is GET /api/runs/:id/thread: the thread runner.LoadThread
// derives (thread.Thread: the deterministic identity and the human-facing
// entries of the run and the runs it continues), the lineage, and the
// optional generated summary.
type ThreadView struct {
	RunID    string          `json:"runId"`
	Identity thread.Identity `json:"identity"`
	// Lineage is the runs of the thread, oldest first, this run last.
	Lineage []string       `json:"lineage"`
	Entries []thread.Entry `json:"entries"`
	// Omitted counts older entries left out.
	Omitted      int                `json:"omitted"`
	Summary      *ThreadSummaryView `json:"summary,omitempty"`
	SummaryState string             `json:"summaryState"`
}

func (s *Server) handleThread(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ws := s.sess.Workspace()
	if _, err := ws.ReadMeta(id); err != nil {
		writeError(w, http.StatusNotFound, "unknown_run")
		return
	}
	th, err := runner.LoadThread(ws, id)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal")
		return
	}
	hash := runner.ThreadHash(th)
	out := ThreadView{RunID: id, Identity: th.Identity, Lineage: []string{}, Entries: th.Entries}
	seen := map[string]bool{}
	for _, e := range th.Entries {
		if !seen[e.RunID] {
			seen[e.RunID] = true
			out.Lineage = append(out.Lineage, e.RunID)
		}
	}
	if out.Entries == nil {
		out.Entries = []thread.Entry{}
	}
	if n := len(out.Entries); n > maxThreadEntries {
		out.Omitted = n - maxThreadEntries
		out.Entries = out.Entries[out.Omitted:]
	}
	out.Identity.FirstTask = clipText(out.Identity.FirstTask)
	out.Identity.LatestHumanText = clipText(out.Identity.LatestHumanText)
	for i := range out.Entries {
		out.Entries[i].Text = clipText(out.Entries[i].Text)
		out.Entries[i].Context = clipText(out.Entries[i].Context)
	}

	sum, state, wait := s.summaries.get(id, hash)
	if state == SummaryPending && wait != nil {
		t := time.NewTimer(summaryWait)
		select {
		case <-wait:
			sum, state, _ = s.summaries.get(id, hash)
		case <-t.C:
		case <-r.Context().Done():
		}
		t.Stop()
	}
	out.SummaryState = state
	if state == SummaryReady {
		out.Summary = &sum
	}
	writeJSON(w, http.StatusOK, out)
}

// summaries makes thread summaries in the background, one at a time, and
// keeps the latest of each run with the hash of the thread it summarises
// (runner.ThreadSummary caches them on disk as well).
type summaries struct {
	ws    store.Workspace
	p     provider.Provider
	model string

	mu       sync.Mutex
	ctx      context.Context
	made     map[string]madeSummary
	inflight map[string]chan struct{}
	failed   map[string]failedSummary
	sem      chan struct{}
}

type madeSummary struct {
	hash string
	sum  ThreadSummaryView
}

type failedSummary struct {
	hash string
	at   time.Time
}

func newSummaries(ws store.Workspace) *summaries {
	return &summaries{ws: ws, ctx: context.Background(), made: map[string]madeSummary{},
		inflight: map[string]chan struct{}{}, failed: map[string]failedSummary{}, sem: make(chan struct{}, 1)}
}

// start bounds later summaries by ctx (the server's lifetime).
func (m *summaries) start(ctx context.Context) {
	m.mu.Lock()
	m.ctx = ctx
	m.mu.Unlock()
}

// get returns the summary of run runID's thread as it is now (hash): ready,
// or pending with a channel closed when the summary being made is done
// (starting it when needed), or unavailable.
func (m *summaries) get(runID, hash string) (ThreadSummaryView, string, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.made[runID]; ok && d.hash == hash {
		return d.sum, SummaryReady, nil
	}
	if ch, ok := m.inflight[runID]; ok {
		return ThreadSummaryView{}, SummaryPending, ch
	}
	if f, ok := m.failed[runID]; ok && f.hash == hash && time.Since(f.at) < summaryRetry {
		return ThreadSummaryView{}, SummaryUnavailable, nil
	}
	ch := make(chan struct{})
	m.inflight[runID] = ch
	go m.make(m.ctx, runID, hash, ch)
	return ThreadSummaryView{}, SummaryPending, ch
}

func (m *summaries) make(ctx context.Context, runID, hash string, done chan struct{}) {
	defer close(done)
	select {
	case m.sem <- struct{}{}:
	case <-ctx.Done():
		m.mu.Lock()
		delete(m.inflight, runID)
		m.mu.Unlock()
		return
	}
	// Without a model, ThreadSummary answers only from its cache on disk.
	title, desc, err := runner.ThreadSummary(ctx, m.p, m.model, m.ws, runID)
	<-m.sem
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.inflight, runID)
	if err != nil || title == "" {
		if len(m.failed) >= maxSummaries {
			clear(m.failed)
		}
		m.failed[runID] = failedSummary{hash: hash, at: time.Now()}
		return
	}
	if len(m.made) >= maxSummaries {
		clear(m.made)
	}
	delete(m.failed, runID)
	m.made[runID] = madeSummary{hash: hash, sum: ThreadSummaryView{Title: title, Description: desc}}
}
