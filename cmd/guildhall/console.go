package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/render/labelset"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/trust"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tui"
)

// runConsole opens the terminal console on the workspace; with a TASK
// argument it submits the task at once.
func runConsole(cmd *cobra.Command, common *commonFlags, args []string) error {
	// Not SIGHUP: once the console is open, a hang-up detaches it
	// (consoleSession) instead of ending the run.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 1 {
		// A busy workspace only queues the task: do it before load probes
		// the provider, which can take seconds.
		if ws, err := common.records(); err == nil {
			if busy := ws.Holder(); busy != nil {
				return queueTask(ctx, cmd, common, ws, args[0], busy)
			}
		}
	}
	if err := common.checkTaskFlags(); err != nil {
		return err
	}
	if err := needTerminal(cmd, args); err != nil {
		return err
	}
	// The console opens before the endpoint's model list answers (or
	// times out): consoleSession probes it in the background.
	s, err := common.loadConsole(ctx, consoleAsk(cmd, common))
	if errors.Is(err, errQuitAtTrust) {
		return nil
	}
	if err != nil {
		return err
	}
	task := ""
	if len(args) == 1 {
		task = args[0]
	}
	return consoleSession(cmd, common, s, task)
}

// needTerminal refuses to open the console without a terminal to draw on
// and read keys from, before anything else starts, with the commands that
// work without one.
func needTerminal(cmd *cobra.Command, args []string) error {
	if f, ok := cmd.InOrStdin().(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return nil
	}
	// Bubble Tea reads keys from the controlling terminal when standard
	// input is not one.
	name := "/dev/tty"
	if runtime.GOOS == "windows" {
		name = "CONIN$"
	}
	if tty, err := os.Open(name); err == nil {
		tty.Close()
		return nil
	}
	headless := `guildhall run "TASK"`
	if len(args) == 1 {
		headless = "guildhall run " + shellQuote(args[0])
	}
	return usageErr(fmt.Errorf("the console needs a terminal, and there is none here (standard input is not a terminal and %s cannot be opened); "+
		"without one, run the task headless with %s, or watch the demo with guildhall demo --headless", name, headless))
}

// consoleAsk puts an undecided workspace to the operator in a full-screen
// prompt before the console opens.
func consoleAsk(cmd *cobra.Command, common *commonFlags) askTrust {
	return func(ctx context.Context, p trustPrompt) (trust.Decision, error) {
		tp := tui.TrustPrompt{Workspace: p.Workspace, Files: p.Files, Theme: common.consoleTheme(p.Theme, cmd.OutOrStdout())}
		for _, c := range p.Changes {
			tp.Changes = append(tp.Changes, tui.TrustChange{Text: c.Text, Warn: c.Warn})
		}
		if p.Changed != nil {
			tp.Changed = fmt.Sprintf("These files changed since you %s them on %s.", p.Changed.Decision, p.Changed.At.Local().Format("2006-01-02"))
		}
		ok, err := tui.AskTrust(ctx, tp, tui.RunOptions{Output: cmd.OutOrStdout()})
		switch {
		case errors.Is(err, tui.ErrQuit):
			return "", errQuitAtTrust
		case err != nil:
			return "", &exitCodeError{code: exitError, err: err}
		case ok:
			return trust.Trusted, nil
		}
		return trust.Ignored, nil
	}
}

// runConsoleWith shows a prepared setup (the demo) in the console and
// submits task at once.
func runConsoleWith(cmd *cobra.Command, common *commonFlags, s *setup, task string) error {
	return consoleSession(cmd, common, s, task)
}

// queueTask lines task up in the queue of the guildhall holding the
// workspace, whose scheduler picks it up.
func queueTask(ctx context.Context, cmd *cobra.Command, common *commonFlags, ws store.Workspace, task string, busy *store.BusyError) error {
	item, err := ws.Queue().Add(ctx, store.QueueSpec{Task: task, Effort: common.effort, LogLevel: common.logLevel, ContinuesFrom: common.continues})
	if err != nil {
		return &exitCodeError{code: exitError, err: fmt.Errorf("%v; queueing the task failed too: %w", busy, err)}
	}
	// The busy message quotes the lock file, which the workspace can write.
	fmt.Fprintf(cmd.OutOrStdout(), "%s; queued the task as %s (guildhall queue ls)\n", render.SanitizeLine(busy.Error()), item.ID)
	return nil
}

// consoleSession opens a session on the setup, runs the console until the
// operator quits or the terminal goes away, then closes the session.
// Every note of the start-up is printed and also handed to the console,
// which shows it: the console covers the terminal, and a line printed
// before it opens would be hidden.
func consoleSession(cmd *cobra.Command, common *commonFlags, s *setup, task string) error {
	sig := newConsoleSignals()
	defer sig.stop()
	ctx := sig.ctx
	ws := s.records
	effort, err := resolveEffort(common.effort, ws)
	if err != nil {
		return err
	}
	notes := &noteCollector{w: cmd.ErrOrStderr()}
	for _, n := range s.notes {
		notes.note(n)
	}
	labels, err := labelset.FromGuild(s.guild)
	if err != nil {
		notes.note(err.Error())
	}
	sess, err := runner.OpenSession(s.sessionConfig(false))
	var busy *store.BusyError
	if errors.As(err, &busy) && task != "" {
		return queueTask(ctx, cmd, common, ws, task, busy)
	}
	if err != nil {
		// Another guildhall holds the workspace (store.BusyError), or the
		// records cannot be set up.
		return &exitCodeError{code: exitError, err: err}
	}
	printSessionNotes(notes, sess)
	noteToolchains(ctx, notes, s.sandbox.policy, s.workspace)
	stopNotify := startNotify(sess, s.deployment, cmd.ErrOrStderr())
	defer stopNotify()
	problem := ""
	if u := s.endpoint.unanswered(); u != nil {
		problem = capitalize(u.Explain())
		// The console opens with the dialog; this line is for the
		// terminal after it closes.
		fmt.Fprintln(cmd.ErrOrStderr(), "note:", render.SanitizeLine(strings.SplitN(u.Explain(), "\n", 2)[0]))
	}
	pending := s.endpoint != nil && s.endpoint.pending
	if !pending {
		reconcileAtStart(ctx, sess, notes, problem, task)
	}
	endpoint := newConsoleEndpoint(common.keys, sess, s)
	opts := tui.Options{
		Labels: labels, Effort: effort, Task: task, Continue: common.continues, LogLevel: common.logLevel,
		Setup: s.setupLine(),
		Summarize: func(ctx context.Context, runID string) (string, string, error) {
			p, model := endpoint.provider()
			return runner.ThreadSummary(ctx, p, model, ws, runID)
		},
		EndpointProblem: problem,
		Alerts:          consoleAlerts(s.deployment),
		Ephemeral:       s.ephemeral,
		Theme:           common.consoleTheme(s.deployment.Theme, cmd.OutOrStdout()),
	}
	if s.deployment.Model.Provider != "script" {
		opts.Endpoint = endpoint
	}
	if problem != "" || pending {
		// Queued tasks would only fail against an endpoint that never
		// answered: the queue starts once it does.
		sched := runner.NewScheduler(sess, runner.SchedulerOptions{})
		opts.Queue = sched
		var once sync.Once
		endpoint.onAnswered = func() {
			// A problem of the queue's own shows on its screen
			// (Scheduler.Problem); the terminal is the console's now.
			once.Do(func() { _ = sched.Start(ctx) })
			sched.Kick()
		}
		if !pending {
			notes.note("the queue waits for the model endpoint: queued tasks start once it answers")
		}
	} else if sched, err := startScheduler(ctx, sess, notes); sched != nil {
		opts.Queue = sched
		endpoint.onAnswered = sched.Kick
	} else if err != nil {
		notes.note("the queue is unavailable: " + err.Error())
	}
	// The console always serves the API on loopback, so that a terminal
	// can attach (guildhall attach) once this one goes away; only --web
	// prints the browser URL. The token is in the 0600 discovery file.
	var sched *runner.Scheduler
	if q, ok := opts.Queue.(*runner.Scheduler); ok {
		sched = q
	}
	addr, noteOut := common.web, io.Writer(notes)
	if addr == "" {
		// A failure to publish is for the terminal after the console
		// closes, not a start-up note of the console.
		addr, noteOut = "127.0.0.1:0", cmd.ErrOrStderr()
	}
	url, stopWeb, err := serveWebAt(ctx, addr, common, sess, s, sched, noteOut)
	switch {
	case err != nil && common.web != "":
		sess.Close()
		return err
	case err != nil:
		// Without loopback the console still works; only attach needs it.
		notes.note("guildhall attach cannot reach this console: " + err.Error())
	default:
		defer stopWeb()
	}
	if common.web != "" {
		opts.Notice = "browser console: " + url
		printConsoleURL(notes, url)
	}
	opts.Notes = notes.notes()
	opts.Context = ctx // runs outlive the screen
	var after afterScreen
	if pending {
		opts.Connect = func(ctx context.Context) tui.Connected {
			return connectInBackground(ctx, sess, s, endpoint, task, &after)
		}
	}
	ui, stopUI := sig.uiContext()
	runErr := tui.Run(ui, sess, opts, tui.RunOptions{Output: cmd.OutOrStdout()})
	stopUI()
	after.print(cmd.ErrOrStderr())
	hungUp := false
	if ctx.Err() == nil && sig.hungUp(hangUpWait(runErr)) {
		hungUp, runErr = true, nil
		if s.ephemeral {
			// The demo's temporary workspace goes when the process ends:
			// nobody could attach to a run worth keeping, so the demo ends
			// with its terminal (Close stops the run, and the caller
			// removes the folder).
			if _, live := sess.Active(); live {
				fmt.Fprintln(cmd.ErrOrStderr(), "guildhall: the terminal went away; the demo stops and its temporary workspace is removed")
			}
		} else {
			// The terminal went away: the run goes on headless.
			runDetached(ctx, sess, s.workspace, cmd.ErrOrStderr(), s.deployment.Detach.Idle())
		}
	}
	if ctx.Err() != nil {
		// A signal (or the terminal going away) ended the console: the
		// live run gets the wind-down notice and its grace period.
		windDownLive(sess, cmd.ErrOrStderr())
	}
	// Closing stops a live run at its next safe point (resumable) and
	// releases the workspace.
	closeErr := sess.Close()
	if runErr != nil {
		return &exitCodeError{code: exitError, err: runErr}
	}
	if closeErr != nil {
		return &exitCodeError{code: exitError, err: closeErr}
	}
	if ctx.Err() != nil || (hungUp && s.ephemeral) {
		return &exitCodeError{code: exitInterrupted}
	}
	return nil
}

// startScheduler starts the queue's scheduler on the session. A queue
// that cannot be recovered still runs (its problem is printed); one that
// cannot start at all is reported and the console goes on without it.
func startScheduler(ctx context.Context, sess *runner.Session, errOut io.Writer) (*runner.Scheduler, error) {
	sched := runner.NewScheduler(sess, runner.SchedulerOptions{})
	if err := sched.Start(ctx); err != nil {
		select {
		case <-sched.Done():
			return nil, err
		default:
			fmt.Fprintln(errOut, "note:", render.SanitizeLine(err.Error()))
		}
	}
	return sched, nil
}

// hangUpWait is how long to wait for SIGHUP once the console's screen
// ended: a moment when it failed (its terminal may have hung up just
// before the signal came), not at all when the operator quit.
func hangUpWait(runErr error) time.Duration {
	if runErr != nil {
		return 500 * time.Millisecond
	}
	return 0
}

// reconcileAtStart reconciles the runs folder: the newest resumable run
// resumes under its id (when no new task was given and the endpoint
// answered), every other unfinished run is marked interrupted with the
// reason.
func reconcileAtStart(ctx context.Context, sess *runner.Session, notes noter, problem, task string) {
	rec, err := sess.Reconcile()
	if err != nil {
		notes.note(err.Error())
	}
	noteOtherGuilds(notes, rec)
	if rec.Resumable == "" {
		return
	}
	switch {
	case problem != "":
		notes.note(fmt.Sprintf("run %s stopped before finishing; once the endpoint answers, resume it from History (r) or with `guildhall resume %s`", rec.Resumable, rec.Resumable))
	case task == "":
		if err := sess.ResumeCheckpoint(ctx, rec.Resumable); err != nil {
			notes.note("could not resume " + rec.Resumable + ": " + err.Error())
		}
	default:
		notes.note(fmt.Sprintf("run %s stopped before finishing; resume it with `guildhall resume %s`", rec.Resumable, rec.Resumable))
	}
}
