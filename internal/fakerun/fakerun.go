// Package fakerun is the live run that the web server's tests drive by
// hand, in place of a model: each event is appended to the run's real log
// through store.LogWriter and then published on a real runner.Bus, under
// one lock so log order and bus order agree, as the runner's emit does.
//
// The web and web/client tests each wrap a Log in the session fake their
// tests need (what they submit, answer and control differs); what they
// share, the workspace, the log and the bus, lives here once. It is
// imported only by _test files.
package fakerun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// Log is a workspace in a temporary directory, its live run's log and the
// bus a web.Server subscribes to.
type Log struct {
	WS  store.Workspace
	Bus *runner.Bus

	mu  sync.Mutex // serialises emits, as the runner's emitMu does
	run string     // the run whose log w writes
	w   *store.LogWriter

	// activeMu is apart from mu: a subscriber the bus waits on may ask
	// which run is live while an emit holds mu.
	activeMu sync.Mutex
	active   string // the run the session reports live
}

// New makes a workspace with an empty runs folder, its records sealed with
// key, and closes the live log when the test ends.
func New(t testing.TB, key []byte) *Log {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, store.OrchestrationDir, store.RunsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	l := &Log{WS: store.Workspace{Dir: dir, Seal: store.NewSealer(key, dir)}, Bus: runner.NewBus()}
	t.Cleanup(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.w != nil {
			l.w.Close()
		}
	})
	return l
}

// Open creates a run with a running meta record, as the runner does when
// a task is submitted, and makes it the run later events go to.
func (l *Log) Open(task, continuesFrom string) (string, error) {
	id, err := l.WS.CreateRun(time.Now())
	if err != nil {
		return "", fmt.Errorf("create run: %w", err)
	}
	m := &store.Meta{RunID: id, Task: task, Effort: "standard", Status: store.StatusRunning, StartedAt: time.Now().UTC(), ContinuesFrom: continuesFrom}
	if err := l.WS.WriteMeta(m); err != nil {
		return "", fmt.Errorf("write meta of %s: %w", id, err)
	}
	path, err := l.WS.LogPath(id)
	if err != nil {
		return "", err
	}
	w, err := store.OpenLog(path)
	if err != nil {
		return "", err
	}
	l.mu.Lock()
	if l.w != nil {
		l.w.Close()
	}
	l.run, l.w = id, w
	l.mu.Unlock()
	l.SetActive(id)
	return id, nil
}

// Active is the run the session reports live: the one last opened, until
// SetActive says otherwise.
func (l *Log) Active() (string, bool) {
	l.activeMu.Lock()
	defer l.activeMu.Unlock()
	return l.active, l.active != ""
}

// SetActive makes id the run the session reports live, "" for none: a test
// ends its run, or fakes a busy session. Events still go to the last
// opened run's log.
func (l *Log) SetActive(id string) {
	l.activeMu.Lock()
	defer l.activeMu.Unlock()
	l.active = id
}

// IsActive reports whether runID names the live run.
func (l *Log) IsActive(runID string) bool {
	id, ok := l.Active()
	return ok && id == runID
}

// Emit logs and publishes an event of the live run; a test that emits
// before opening a run fails.
func (l *Log) Emit(t testing.TB, typ event.Type, payload any) event.Event {
	t.Helper()
	e, err := event.New(time.Now(), typ, payload)
	if err != nil {
		t.Fatal(err)
	}
	if e, err = l.Publish(e); err != nil {
		t.Fatal(err)
	}
	return e
}

// Publish is Emit for a caller without a test handle (a fake's method run
// by the server's handler): it returns the event with its sequence number.
func (l *Log) Publish(e event.Event) (event.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return e, fmt.Errorf("no live run to log %s to", e.Type)
	}
	seq, err := l.w.Append(e.AppendJSON(nil))
	if err != nil {
		return e, fmt.Errorf("log %s of %s: %w", e.Type, l.run, err)
	}
	e.Seq = seq
	l.Bus.Publish(e)
	return e, nil
}

// The methods of web.Session that both fakes answer alike.

func (l *Log) SubscribeLossless(n int) ([]event.Event, *runner.Subscription) {
	return l.Bus.SubscribeLossless(n)
}

func (l *Log) Workspace() store.Workspace { return l.WS }

// Changes: the fake's runs write no file, so nothing changed.
func (l *Log) Changes(ctx context.Context, runID string) (runner.Changes, error) {
	return runner.Changes{RunID: runID, Source: runner.ChangesFromLog}, nil
}

// ModelInfo: the fake names no model beyond what its events carry.
func (l *Log) ModelInfo() runner.ModelInfo { return runner.ModelInfo{} }
