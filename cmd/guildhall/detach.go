package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/guildhall/guildhall/runner"
)

// consoleSignals are the console's signals. SIGINT and SIGTERM end ctx:
// the operator stops the run (wind-down, then a resumable stop). SIGHUP —
// the terminal went away: a closed SSH session, a killed tmux pane — only
// closes hup: the console's screen ends and its run goes on headless in
// the same process (detach), reachable with guildhall attach.
type consoleSignals struct {
	ctx  context.Context
	hup  chan struct{}
	stop func()
}

func newConsoleSignals() *consoleSignals {
	ctx, cancel := context.WithCancel(context.Background())
	cs := &consoleSignals{ctx: ctx, hup: make(chan struct{})}
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	var once sync.Once
	go func() {
		for {
			select {
			case sig := <-ch:
				if sig == syscall.SIGHUP {
					// Later hang-ups are ignored: there is no terminal left
					// to lose.
					once.Do(func() { close(cs.hup) })
					continue
				}
				cancel()
			case <-done:
				return
			}
		}
	}()
	cs.stop = func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
	return cs
}

// hungUp reports whether SIGHUP arrived, waiting at most wait for it: the
// console's input can fail on the hung-up terminal a moment before the
// signal is delivered.
func (cs *consoleSignals) hungUp(wait time.Duration) bool {
	select {
	case <-cs.hup:
		return true
	default:
	}
	if wait <= 0 {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-cs.hup:
		return true
	case <-t.C:
		return false
	}
}

// uiContext ends at a hang-up as well as at ctx's end: it bounds the
// console's screen, never its runs.
func (cs *consoleSignals) uiContext() (context.Context, context.CancelFunc) {
	ui, cancel := context.WithCancel(cs.ctx)
	go func() {
		select {
		case <-cs.hup:
			cancel()
		case <-ui.Done():
		}
	}()
	return ui, cancel
}

// detachedIdle is how long a detached console waits, after a run ends,
// for the queue to start the next one before it exits.
const detachedIdle = 2 * time.Second

// runDetached keeps a console whose terminal went away serving its live
// run (and the runs its queue starts after it) until the session is idle
// or ctx ends. Questions wait for an attached terminal or the browser:
// nothing answers them on the operator's behalf. A question left waiting
// longer than idle (0: forever) stops the run at that resumable point, so
// that a forgotten console does not hold its workspace for ever. The run's
// log and standard error (when anything still reads it) say how to attach.
func runDetached(ctx context.Context, sess *runner.Session, workspace string, errOut io.Writer, idle time.Duration) {
	runID, live := sess.Active()
	if !live {
		return
	}
	attach := "guildhall attach " + runID + " --workspace " + shellQuote(workspace)
	sess.Detached(attach)
	// The terminal may be gone: a failed write is expected.
	fmt.Fprintf(errOut, "guildhall: the terminal went away; run %s goes on in process %d. Attach with: %s\n", runID, os.Getpid(), attach)
	detachedAt := time.Now()
	for {
		// The run's own record says how it ended.
		if waitDetached(ctx, sess, detachedAt, idle, errOut); ctx.Err() != nil {
			return
		}
		t := time.NewTimer(detachedIdle)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if _, live := sess.Active(); !live {
			return
		}
	}
}

// waitDetached waits for the session's current run to end. When a
// question has waited longer than idle since it was asked (or since the
// console detached, if later), the run is stopped: a pending question is
// a resumable point, and the run resumes from it with guildhall resume.
func waitDetached(ctx context.Context, sess *runner.Session, detachedAt time.Time, idle time.Duration, errOut io.Writer) {
	done := make(chan struct{})
	go func() {
		_, _ = sess.Wait(ctx)
		close(done)
	}()
	if idle <= 0 {
		<-done
		return
	}
	tick := time.NewTicker(idlePoll(idle))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			since, runID, ok := oldestQuestion(sess.Questions(), detachedAt)
			if !ok || now.Sub(since) < idle {
				continue
			}
			fmt.Fprintf(errOut, "guildhall: no one answered run %s's question for %s (detach.idleTimeout); the run stops here, resumable: guildhall resume %s\n", runID, idle, runID)
			sess.StopBecause(fmt.Sprintf("no one answered its question for %s while the console was detached (detach.idleTimeout); resumable from its checkpoint", idle))
			<-done
			return
		}
	}
}

// oldestQuestion is when the longest-waiting question began to wait
// unattended: when it was asked, or when the console detached if that was
// later.
func oldestQuestion(qs []runner.Question, detachedAt time.Time) (time.Time, string, bool) {
	var since time.Time
	runID := ""
	for i, q := range qs {
		at := q.AskedAt
		if at.Before(detachedAt) {
			at = detachedAt
		}
		if i == 0 || at.Before(since) {
			since, runID = at, q.RunID
		}
	}
	return since, runID, len(qs) > 0
}

// idlePoll is how often a detached console looks at its questions: often
// enough that a short timeout is kept to within a tenth, at most once a
// second.
func idlePoll(idle time.Duration) time.Duration {
	return min(max(idle/10, 50*time.Millisecond), time.Second)
}
