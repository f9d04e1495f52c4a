package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tui"
	"github.com/guildhall/guildhall/web/client"
	"github.com/guildhall/guildhall/web/discovery"
)

// The attached console is the TUI over the remote session.
var (
	_ tui.Session       = (*client.Session)(nil)
	_ tui.EndingSession = (*client.Session)(nil)
	_ tui.Queue         = (*client.Queue)(nil)
)

func newAttachCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "attach [RUN_ID]",
		Short: "Open the console on a live run of this workspace, run by another guildhall",
		Long: `Attach opens the console on the live run of the workspace (--workspace, default
the current directory): a run whose terminal went away (a closed SSH session, a
killed tmux pane) and goes on headless, or one whose console is open elsewhere.
It speaks the console's HTTP API with the access token of its discovery file,
which only you can read; no token is ever passed on a command line.

With RUN_ID it attaches only when that run is the live one. Quitting the
attached console (q) only detaches this terminal: the run goes on. Several
terminals (and browsers) can be attached at once; the first answer to a
question wins, and the others are told.`,
		Args: args{max: 1, what: "the run to attach to", example: "guildhall attach run-20250314-093000"}.validate,
		RunE: func(cmd *cobra.Command, args []string) error {
			runID := ""
			if len(args) == 1 {
				runID = args[0]
				if err := store.CheckRunID(runID); err != nil {
					return usageErr(err)
				}
			}
			return attach(cmd, common, runID)
		},
	}
}

// attach finds the workspace's console, dials it and runs the console
// over it until the operator quits or the console goes away.
func attach(cmd *cobra.Command, common *commonFlags, runID string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	ws, err := common.records()
	if err != nil {
		return err
	}
	rec, err := findConsole(ws.Dir)
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	sess, err := client.Dial(ctx, client.Config{URL: rec.URL, Token: rec.Token, Workspace: ws})
	if err != nil {
		return &exitCodeError{code: exitError, err: fmt.Errorf("attach to the console of %s (pid %d): %w", rec.Workspace, rec.PID, err)}
	}
	defer sess.Close()
	live, isLive := sess.Active()
	switch {
	case !isLive && runID != "":
		return &exitCodeError{code: exitError, err: fmt.Errorf("run %s is not live: the console of %s (pid %d) runs nothing now; `guildhall show %s` shows its record", runID, rec.Workspace, rec.PID, runID)}
	case !isLive:
		return &exitCodeError{code: exitError, err: fmt.Errorf("no run is live in %s: its console (pid %d) runs nothing now; `guildhall runs` lists the runs", rec.Workspace, rec.PID)}
	case runID != "" && runID != live:
		return &exitCodeError{code: exitError, err: fmt.Errorf("run %s is not live: the live run of %s is %s (attach with `guildhall attach %s`)", runID, rec.Workspace, live, live)}
	}
	// The console is found and checked first: its errors say more than
	// the want of a terminal.
	if err := needTerminal(cmd, nil); err != nil {
		return err
	}
	effort, err := resolveEffort(common.effort, ws)
	if err != nil {
		return err
	}
	opts := tui.Options{
		Labels: sess.Labels(), Effort: effort, Attached: true, Context: ctx,
		Theme: common.consoleTheme(operatorTheme(), cmd.OutOrStdout()),
		Setup: strings.Join(sess.Setup(), " · "),
		// The run id is the server's: checked by the client, and the whole
		// notice is stripped of terminal control all the same.
		Notice: render.SanitizeLine(fmt.Sprintf("Attached to run %s of pid %d: q detaches this terminal, the run goes on.", live, rec.PID)),
	}
	// Thread titles already made (by the console's model) are shown; the
	// attached terminal has no model to make new ones.
	opts.Summarize = func(ctx context.Context, runID string) (string, string, error) {
		return runner.ThreadSummary(ctx, nil, "", ws, runID)
	}
	if q := sess.Queue(); q != nil {
		opts.Queue = q
	}
	if err := tui.Run(ctx, sess, opts, tui.RunOptions{Output: cmd.OutOrStdout()}); err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	if err := sess.Err(); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "guildhall: detached:", render.SanitizeLine(err.Error()))
	}
	return nil
}

// findConsole reads the discovery file of the workspace at dir and checks
// that its process is alive. Without one, the error lists the consoles
// that are live elsewhere.
func findConsole(dir string) (discovery.Record, error) {
	loc, err := discovery.Locate(os.Getenv)
	if err != nil {
		return discovery.Record{}, err
	}
	canon, err := discovery.Canonical(dir)
	if err != nil {
		return discovery.Record{}, err
	}
	rec, err := discovery.Lookup(loc, canon)
	switch {
	case errors.Is(err, discovery.ErrNotFound):
		return discovery.Record{}, noConsoleError(loc, canon)
	case err != nil:
		return discovery.Record{}, err
	case !rec.Alive():
		return discovery.Record{}, fmt.Errorf("no live console in %s: its discovery file %s is stale (pid %d has ended; it was killed before it could remove the file); "+
			"a run it left unfinished resumes with `guildhall resume RUN_ID` or when you open `guildhall` there", canon, filepath.Join(loc.Dir(), discovery.FileName(canon)), rec.PID)
	}
	return rec, nil
}

// noConsoleError says that no console serves canon, listing those that
// are live elsewhere.
func noConsoleError(loc discovery.Location, canon string) error {
	all, _ := discovery.List(loc)
	var live []string
	for _, r := range all {
		if r.Alive() {
			live = append(live, fmt.Sprintf("  %s (pid %d)", render.SanitizeLine(r.Workspace), r.PID))
		}
	}
	msg := fmt.Sprintf("no live console in %s: no guildhall serves this workspace (a console started with `guildhall` there can be attached to)", canon)
	switch len(live) {
	case 0:
		return errors.New(msg)
	case 1:
		return fmt.Errorf("%s; one console is live elsewhere:\n%s\nattach to it with guildhall attach --workspace DIR", msg, live[0])
	}
	return fmt.Errorf("%s; %d consoles are live elsewhere:\n%s\nattach to one with guildhall attach --workspace DIR", msg, len(live), strings.Join(live, "\n"))
}
