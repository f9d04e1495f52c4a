package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// An operator over SSH leaves the console in another tmux window and misses
// the question that waits for them. So the moments an operator must act on
// or wants to know of — a question opens, a run ends, a run is suspended —
// are alerts: the console rings the terminal (BEL, which tmux and screen
// turn into a window flag) and, on terminals known to show them, sends a
// desktop notification (OSC 9 or OSC 777); and the operator's own command
// (ntfy, notify-send) runs with the alert's kind and run id. The command is
// the operator's alone: a workspace's deployment file may not set it
// (runner/trust), and it never gets any text of the run, so nothing the
// model or the workspace wrote reaches its arguments.

// NotifyConfig is deployment.json's notify section (a Guildhall addition).
type NotifyConfig struct {
	// Bell rings the terminal at each alert; nil is on.
	Bell *bool `json:"bell,omitempty"`
	// Desktop is the desktop notification: "auto" (the default: OSC 9 or
	// OSC 777 on terminals known to show them, nothing elsewhere),
	// "osc9", "osc777" or "off".
	Desktop string `json:"desktop,omitempty"`
	// Command is a program and its first arguments, run at each alert
	// with two more: the alert's kind and the run id. No shell is
	// involved.
	Command []string `json:"command,omitempty"`
}

// BellOn reports whether alerts ring the terminal.
func (n NotifyConfig) BellOn() bool { return n.Bell == nil || *n.Bell }

// Desktop notification settings.
const (
	DesktopAuto   = "auto"
	DesktopOSC9   = "osc9"
	DesktopOSC777 = "osc777"
	DesktopOff    = "off"
)

func (n NotifyConfig) clone() NotifyConfig {
	if n.Bell != nil {
		v := *n.Bell
		n.Bell = &v
	}
	n.Command = append([]string(nil), n.Command...)
	return n
}

// check reports what is wrong with the section, each problem with the
// setting it is about.
func (n NotifyConfig) check() []notifyProblem {
	var out []notifyProblem
	switch n.Desktop {
	case "", DesktopAuto, DesktopOSC9, DesktopOSC777, DesktopOff:
	default:
		out = append(out, notifyProblem{"desktop", fmt.Sprintf("notify.desktop %q is not one of auto, osc9, osc777, off", n.Desktop)})
	}
	if len(n.Command) > 0 && n.Command[0] == "" {
		out = append(out, notifyProblem{"command", "notify.command starts with an empty program name; give the program, then its first arguments"})
	}
	return out
}

type notifyProblem struct{ field, msg string }

// Alert kinds. A run that ended alerts with the status it ended with:
// success, error, needs_clarification or interrupted.
const (
	AlertQuestion  = "question"
	AlertSuspended = "suspended"
)

// Alert is one moment the operator is told of.
type Alert struct {
	Kind  string
	RunID string
}

// AlertOf is the alert event e of run runID calls for, if any: an
// ask_human, a run_status that ends the run with its card, or a
// suspension. A run stopped to be resumed later (its console closed) is
// not one: nobody waits for it.
func AlertOf(runID string, e event.Event) (Alert, bool) {
	switch e.Type {
	case event.AskHuman:
		return Alert{Kind: AlertQuestion, RunID: runID}, true
	case event.RunStatus:
		var p event.RunStatusPayload
		if e.Decode(&p) != nil {
			return Alert{}, false
		}
		switch {
		case p.Status == store.StatusSuspended:
			return Alert{Kind: AlertSuspended, RunID: runID}, true
		case store.Terminal(p.Status) && p.Card != nil:
			return Alert{Kind: p.Status, RunID: runID}, true
		}
	}
	return Alert{}, false
}

// RunIDOf is the run an event starts or resumes ("" for other events).
func RunIDOf(e event.Event) string {
	switch e.Type {
	case event.RunStarted:
		var p event.RunStartedPayload
		if e.Decode(&p) == nil {
			return p.RunID
		}
	case event.RunResumed:
		var p event.RunResumedPayload
		if e.Decode(&p) == nil {
			return p.RunID
		}
	}
	return ""
}

// Subscriber is what the notifier reads events from (a Session).
type Subscriber interface {
	Subscribe(buffer int) ([]event.Event, *Subscription)
}

// notifyTimeout bounds one run of the notify command.
const notifyTimeout = 30 * time.Second

// notifyQueue is how many alerts may wait for the command; more are
// dropped (and counted) rather than slowing the run.
const notifyQueue = 16

// Notifier runs the operator's notify command for the alerts of a
// session's runs, one at a time, each bounded by notifyTimeout. It reads
// the bus without ever blocking it: alerts that do not fit its queue are
// dropped and counted.
type Notifier struct {
	argv    []string
	environ []string
	queue   chan Alert
	dropped atomic.Int64
	// failed is told of a command that failed (it may be nil).
	failed func(Alert, error)

	ctx      context.Context
	cancel   context.CancelFunc
	stopping chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// StartNotifier runs argv KIND RUN_ID for every alert on s until Stop.
// environ is the command's environment (nil: this process's, which holds
// no provider key: those are taken out at start). failed, when not nil,
// hears of each command that failed.
func StartNotifier(s Subscriber, argv, environ []string, failed func(Alert, error)) *Notifier {
	ctx, cancel := context.WithCancel(context.Background())
	n := &Notifier{
		argv: append([]string(nil), argv...), environ: environ, queue: make(chan Alert, notifyQueue), failed: failed,
		ctx: ctx, cancel: cancel, stopping: make(chan struct{}), done: make(chan struct{}),
	}
	backlog, sub := s.Subscribe(256)
	runID := ""
	for _, e := range backlog {
		if id := RunIDOf(e); id != "" {
			runID = id
		}
	}
	go n.read(sub, runID)
	go n.work()
	return n
}

// Dropped is how many alerts did not fit the queue.
func (n *Notifier) Dropped() int64 { return n.dropped.Load() }

// Stop stops reading, and lets the alerts already read run for up to
// grace (a console about to exit still tells of the run that just ended);
// then it stops the command running, if any, and returns.
func (n *Notifier) Stop(grace time.Duration) {
	n.stopOnce.Do(func() { close(n.stopping) })
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-n.done:
	case <-t.C:
		n.cancel()
		<-n.done
	}
	n.cancel()
}

func (n *Notifier) read(sub *Subscription, runID string) {
	defer close(n.queue)
	defer sub.Close()
	take := func(e event.Event) {
		if id := RunIDOf(e); id != "" {
			runID = id
		}
		a, ok := AlertOf(runID, e)
		if !ok || !store.ValidRunID(runID) {
			return
		}
		select {
		case n.queue <- a:
		default:
			n.dropped.Add(1)
		}
	}
	for {
		select {
		case <-n.stopping:
			// What was delivered before the stop still counts.
			for {
				select {
				case e, ok := <-sub.C:
					if !ok {
						return
					}
					take(e)
				default:
					return
				}
			}
		case e, ok := <-sub.C:
			if !ok {
				return
			}
			take(e)
		}
	}
}

func (n *Notifier) work() {
	defer close(n.done)
	for a := range n.queue {
		if n.ctx.Err() != nil {
			continue
		}
		if err := n.run(a); err != nil && n.failed != nil {
			n.failed(a, err)
		}
	}
}

// run runs the command once, in a process group of its own so that a
// command cut off at its timeout takes its children with it. Its output
// is discarded: the console owns the terminal.
func (n *Notifier) run(a Alert) error {
	ctx, cancel := context.WithTimeout(n.ctx, notifyTimeout)
	defer cancel()
	argv := append(append([]string(nil), n.argv...), a.Kind, a.RunID)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = n.environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("notify.command %s did not finish within %s and was stopped", filepath.Base(argv[0]), notifyTimeout)
	case errors.As(err, &exit):
		return fmt.Errorf("notify.command %s exited with status %d", filepath.Base(argv[0]), exit.ExitCode())
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("notify.command %s was not found", argv[0])
	}
	return fmt.Errorf("notify.command %s: %w", filepath.Base(argv[0]), err)
}
