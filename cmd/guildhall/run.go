package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/headless"
	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/web"
	"github.com/guildhall/guildhall/web/discovery"
)

type runFlags struct {
	json    bool
	noInput bool
}

func newRunCmd(common *commonFlags) *cobra.Command {
	rf := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [flags] TASK",
		Short: "Run a task headless, printing progress as plain lines",
		Long: `Run a task without the console. Progress is printed as one escape-safe line
per event (--json prints the log events as NDJSON instead). ask_human
questions are asked on this terminal; --no-input answers them with a
"no operator available" tool error, and so does the end of standard input
when no browser (--web) can answer instead.

Exit status: 0 success, 1 error, 2 usage or configuration error,
3 needs_clarification, suspended or paused, 130 interrupted.`,
		Args:        args{min: 1, max: 1, what: "the task to run", example: `guildhall run "Add a --verbose flag"`, oneText: true}.validate,
		Annotations: settles(settleHeadless),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := common.checkTaskFlags(); err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			s, err := common.loadHeadless(ctx)
			if err != nil {
				return err
			}
			return headlessRun(ctx, cmd, common, rf, s, args[0])
		},
	}
	cmd.Flags().BoolVar(&rf.json, "json", false, "print one log event per line (NDJSON) instead of readable lines")
	cmd.Flags().BoolVar(&rf.noInput, "no-input", false, "answer ask_human with a \"no operator available\" tool error")
	return cmd
}

// signalContext is cancelled by SIGINT, SIGTERM or SIGHUP, which stops the
// run at its next safe point with its checkpoint intact.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

// loadHeadless loads the setup of a command that runs without the
// console (run, resume, queue run). Unlike the console, which opens first
// and waits for the endpoint on screen, such a command cannot start a run
// until the endpoint has answered with the models the guild names.
func (c *commonFlags) loadHeadless(ctx context.Context) (*setup, error) {
	s, err := c.load(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.requireEndpoint(); err != nil {
		return nil, err
	}
	return s, nil
}

// openHeadless opens the session of a command that runs without the
// console and starts its alerts. The setup's notes and then the session's
// go to errOut first, but not with --json, whose output is the log alone.
// end stops the alerts and closes the session. An error is
// runner.OpenSession's, for the caller to say what it means there.
func openHeadless(errOut io.Writer, rf *runFlags, s *setup) (sess *runner.Session, end func(), err error) {
	if !rf.json {
		for _, n := range s.notes {
			fmt.Fprintln(errOut, "note:", render.SanitizeLine(n))
		}
	}
	sess, err = runner.OpenSession(s.sessionConfig(rf.noInput))
	if err != nil {
		return nil, nil, err
	}
	stopNotify := startNotify(sess, s.deployment, errOut)
	if !rf.json {
		printSessionNotes(errOut, sess)
	}
	return sess, func() {
		stopNotify()
		sess.Close()
	}, nil
}

// resolveEffort applies the flag, then the project setting, then standard.
func resolveEffort(flag string, ws store.Workspace) (string, error) {
	e := flag
	if e == "" {
		e = ws.ReadSettings().Effort
	}
	if e == "" {
		e = "standard"
	}
	if !runner.ValidEffort(e) {
		return "", usageErr(fmt.Errorf("--effort %q is not one of quick, standard, thorough", e))
	}
	return e, nil
}

func headlessRun(ctx context.Context, cmd *cobra.Command, common *commonFlags, rf *runFlags, s *setup, task string) error {
	errOut := cmd.ErrOrStderr()
	effort, err := resolveEffort(common.effort, s.records)
	if err != nil {
		return err
	}
	sess, end, err := openHeadless(errOut, rf, s)
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	defer end()
	if rec, err := sess.Reconcile(); err == nil && !rf.json {
		noteOtherGuilds(errOut, rec)
		if rec.Resumable != "" {
			fmt.Fprintf(errOut, "note: run %s stopped before finishing; continue it with `guildhall resume %s`\n", rec.Resumable, rec.Resumable)
		}
	}
	return followRun(ctx, cmd, common, rf, sess, s, func(ctx context.Context) error {
		_, err := sess.Submit(ctx, runner.Submission{Task: task, Effort: effort, LogLevel: common.logLevel, ContinuesFrom: common.continues})
		if err != nil {
			return usageErr(err)
		}
		return nil
	})
}

// headlessResume resumes a run from its checkpoint and prints it.
func headlessResume(ctx context.Context, cmd *cobra.Command, common *commonFlags, rf *runFlags, s *setup, id string) error {
	sess, end, err := openHeadless(cmd.ErrOrStderr(), rf, s)
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	defer end()
	return followRun(ctx, cmd, common, rf, sess, s, func(ctx context.Context) error {
		if err := sess.ResumeCheckpoint(ctx, id); err != nil {
			return &exitCodeError{code: exitError, err: err}
		}
		return nil
	})
}

// noteOtherGuilds tells the operator about unfinished runs of another
// guild, which this session leaves alone.
func noteOtherGuilds(errOut io.Writer, rec runner.Reconciliation) {
	ids := make([]string, 0, len(rec.OtherGuild))
	for id := range rec.OtherGuild {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(errOut, "note: run %s stopped before finishing; it was started with the guild %s, so resume it with `guildhall resume %s`\n",
			id, render.SanitizeLine(rec.OtherGuild[id]), id)
	}
}

// sessionConfig is the session a setup opens.
func (s *setup) sessionConfig(noInput bool) runner.SessionConfig {
	return runner.SessionConfig{
		Workspace: s.workspace, Sealer: s.records.Seal, Redactor: s.records.Redact, WorkspaceConfig: s.trust.info(),
		Guild: s.guild, Deployment: s.deployment, Provider: s.provider, Models: s.models, NoInput: noInput, WebSearch: s.webSearch(),
		Sandbox:          s.sandbox.host,
		EndpointAnswered: s.endpoint.hasAnswered(), StartProbe: s.endpoint.probe(),
	}
}

func openSession(s *setup, noInput bool) (*runner.Session, error) {
	sess, err := runner.OpenSession(s.sessionConfig(noInput))
	if err != nil {
		return nil, &exitCodeError{code: exitError, err: err}
	}
	return sess, nil
}

// printSessionNotes prints what the session noticed when it opened (a git
// exclude entry it did not write, and why), one sanitised line each.
func printSessionNotes(w io.Writer, sess *runner.Session) {
	for _, n := range sess.Notes() {
		fmt.Fprintln(w, "note:", render.SanitizeLine(n))
	}
}

// serveWeb starts the browser companion on the session when --web is set
// and publishes its address and token for the operator's own clients
// (web/discovery). It returns the URL to show the operator, which carries
// the token (it goes to the terminal, never to a command line), and stop,
// which takes the discovery file down; stop also runs when ctx ends, and
// running it twice is harmless. Without --web the URL is "".
func serveWeb(ctx context.Context, common *commonFlags, sess *runner.Session, s *setup, sched *runner.Scheduler, notes io.Writer) (string, func(), error) {
	if common.web == "" {
		return "", func() {}, nil
	}
	return serveWebAt(ctx, common.web, common, sess, s, sched, notes)
}

// serveWebAt serves the browser console and API at addr and publishes
// its discovery file.
func serveWebAt(ctx context.Context, addr string, common *commonFlags, sess *runner.Session, s *setup, sched *runner.Scheduler, notes io.Writer) (string, func(), error) {
	nothing := func() {}
	opts := []web.Option{web.WithSummarizer(s.provider, s.deployment.Model.Name), web.WithSetup(s.setupLines()...)}
	if sched != nil {
		opts = append(opts, web.WithQueue(sched))
	}
	srv, err := web.New(sess, s.guild, version, opts...)
	if err != nil {
		return "", nothing, &exitCodeError{code: exitError, err: err}
	}
	url, err := srv.Serve(ctx, addr)
	if err != nil {
		return "", nothing, usageErr(fmt.Errorf("--web %s: %w", addr, err))
	}
	pub, err := publishConsole(url, srv.Token(), s.workspace)
	if err != nil {
		// The console works without the file; only attach needs it.
		fmt.Fprintln(notes, "note: no attach file:", render.SanitizeLine(err.Error()))
		return url, nothing, nil
	}
	stop := func() {
		if err := pub.Remove(); err != nil {
			fmt.Fprintln(notes, "note:", render.SanitizeLine(err.Error()))
		}
	}
	go func() {
		<-ctx.Done()
		stop()
	}()
	return url, stop, nil
}

// publishConsole writes the discovery file of the console at url.
func publishConsole(url, token, workspace string) (*discovery.Published, error) {
	loc, err := discovery.Locate(os.Getenv)
	if err != nil {
		return nil, err
	}
	canon, err := discovery.Canonical(workspace)
	if err != nil {
		return nil, err
	}
	base, _, _ := strings.Cut(url, "?")
	return discovery.Publish(loc, discovery.Record{URL: base, Token: token, PID: os.Getpid(), Workspace: canon})
}

// windDownGrace is how long a signalled run gets to reach a safe end.
const windDownGrace = 30 * time.Second

// windDownNotice is the directive the entry role gets on SIGINT/SIGTERM.
const windDownNotice = "Guildhall is shutting down. Do not start new work: bring the work to a resumable stopping point and call finish with a summary the operator can resume from."

// followRun starts a run with start, prints its events (answering
// questions from the terminal unless --no-input) and waits for it. The
// first signal sends the entry role a wind-down notice and gives it
// windDownGrace to finish; then (or at a second signal) the run stops at
// its next safe point, resumable.
func followRun(ctx context.Context, cmd *cobra.Command, common *commonFlags, rf *runFlags, sess *runner.Session, s *setup, start func(context.Context) error) error {
	printSandboxSummary(cmd.OutOrStdout(), cmd.ErrOrStderr(), rf.json, s)
	_, sub := sess.SubscribeLossless(256)
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		headless.Print(sub, cmd.OutOrStdout(), sess, headless.Options{JSON: rf.json, Interactive: !rf.noInput, In: cmd.InOrStdin(), BrowserAnswers: common.web != "", Notices: cmd.ErrOrStderr()})
	}()
	runCtx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	finish := func(err error) error {
		sub.Close()
		<-printed
		return err
	}
	url, stopWeb, err := serveWeb(runCtx, common, sess, s, nil, cmd.ErrOrStderr())
	if err != nil {
		return finish(err)
	}
	defer stopWeb()
	if url != "" {
		printConsoleURL(cmd.ErrOrStderr(), url)
	}
	if err := start(runCtx); err != nil {
		return finish(err)
	}
	done := make(chan struct{})
	go windDown(ctx, done, sess, cmd.ErrOrStderr())
	outcome, err := sess.Wait(context.Background())
	close(done)
	if common.web != "" && ctx.Err() == nil {
		// Browsers watching the run still need its last state and result.
		fmt.Fprintln(cmd.ErrOrStderr(), "run finished; the browser console stays up until interrupted (Ctrl-C)")
		<-ctx.Done()
	}
	if err := finish(err); err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	if u := outcome.Endpoint; u != nil {
		u.KeyNote = s.keyNoteFor(u)
		id := outcome.RunID
		if outcome.Stopped {
			id = "" // a resumed run stays resumable
		}
		return endpointError(u, id)
	}
	if c := outcome.Card; outcome.Status == store.StatusError && c != nil && c.Error != nil && (c.Error.Kind == "llm_unavailable" || c.Error.Kind == runner.BudgetErrorKind) {
		// The platform's own account of the endpoint (how often it
		// failed, what to do) or of the budget (which limit, how to go
		// on): the run lines cut it short.
		return &exitCodeError{code: exitError, err: fmt.Errorf("run %s: %s", outcome.RunID, c.Error.Message)}
	}
	return outcomeError(outcome)
}

// windDownLive winds down the session's live run, if any, after a signal
// already arrived.
func windDownLive(sess *runner.Session, errOut io.Writer) {
	if _, live := sess.Active(); !live {
		return
	}
	done := make(chan struct{})
	go func() {
		_, _ = sess.Wait(context.Background())
		close(done)
	}()
	signalled, cancel := context.WithCancel(context.Background())
	cancel()
	windDown(signalled, done, sess, errOut)
}

func windDown(ctx context.Context, done <-chan struct{}, sess *runner.Session, errOut io.Writer) {
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	fmt.Fprintf(errOut, "\nguildhall: winding down; the run gets %s to reach a resumable point (signal again to stop now)\n", windDownGrace)
	_ = sess.WindDown(windDownNotice)
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(again)
	t := time.NewTimer(windDownGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-again:
		sess.Stop()
	case <-t.C:
		sess.Stop()
	}
}

// outcomeError maps a run's outcome to the exit status.
func outcomeError(o runner.Outcome) error {
	if o.Stopped {
		return &exitCodeError{code: exitInterrupted, err: fmt.Errorf("run %s stopped; resume it with `guildhall resume %s`", o.RunID, o.RunID)}
	}
	switch o.Status {
	case store.StatusSuccess:
		return nil
	case store.StatusNeedsClarification, store.StatusSuspended, store.StatusPaused:
		return &exitCodeError{code: exitNeedsInput}
	case store.StatusInterrupted:
		return &exitCodeError{code: exitInterrupted}
	}
	return &exitCodeError{code: exitError}
}
