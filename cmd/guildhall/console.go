package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/render/labelset"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tui"
)

// runConsole opens the terminal console on the workspace; with a TASK
// argument it submits the task at once.
func runConsole(cmd *cobra.Command, common *commonFlags, args []string) error {
	ctx, stop := signalContext()
	defer stop()
	s, err := common.load(ctx)
	if err != nil {
		return err
	}
	task := ""
	if len(args) == 1 {
		task = args[0]
	}
	return consoleSession(cmd, common, s, task)
}

// runConsoleWith shows a prepared setup (the demo) in the console and
// submits task at once.
func runConsoleWith(cmd *cobra.Command, common *commonFlags, s *setup, task string) error {
	return consoleSession(cmd, common, s, task)
}

// consoleSession opens a session on the setup, runs the console until the
// operator quits or the terminal goes away, then closes the session.
func consoleSession(cmd *cobra.Command, common *commonFlags, s *setup, task string) error {
	ctx, stop := signalContext()
	defer stop()
	ws := store.Workspace{Dir: s.workspace}
	effort, err := resolveEffort(common.effort, ws)
	if err != nil {
		return err
	}
	for _, n := range s.notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "note:", render.SanitizeLine(n))
	}
	labels, err := labelset.FromGuild(s.guild)
	if err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "note:", render.SanitizeLine(err.Error()))
	}
	sess, err := runner.OpenSession(runner.SessionConfig{
		Workspace: s.workspace, Guild: s.guild, Deployment: s.deployment, Provider: s.provider,
	})
	if err != nil {
		// Another guildhall holds the workspace (store.BusyError), or the
		// records cannot be set up.
		return &exitCodeError{code: exitError, err: err}
	}
	// Reconcile the runs folder: the newest resumable run resumes under
	// its id (when no new task was given), every other unfinished run is
	// marked interrupted with the reason.
	if rec, err := sess.Reconcile(); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "note:", render.SanitizeLine(err.Error()))
	} else if rec.Resumable != "" {
		if task == "" {
			if err := sess.ResumeCheckpoint(ctx, rec.Resumable); err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: could not resume", rec.Resumable+":", render.SanitizeLine(err.Error()))
			}
		} else {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: run %s stopped before finishing; resume it with `guildhall resume %s`\n", rec.Resumable, rec.Resumable)
		}
	}
	opts := tui.Options{
		Labels: labels, Effort: effort, Task: task, Continue: common.continues, LogLevel: common.logLevel,
	}
	if common.web != "" {
		var url bytes.Buffer
		if err := serveWeb(ctx, common, sess, s.guild, &url); err != nil {
			sess.Close()
			return err
		}
		opts.Notice = strings.TrimSpace(url.String())
		fmt.Fprintln(cmd.ErrOrStderr(), opts.Notice)
	}
	runErr := tui.Run(ctx, sess, opts, tui.RunOptions{Output: cmd.OutOrStdout()})
	// Closing stops a live run at its next safe point (resumable) and
	// releases the workspace.
	closeErr := sess.Close()
	if runErr != nil {
		return &exitCodeError{code: exitError, err: runErr}
	}
	if closeErr != nil {
		return &exitCodeError{code: exitError, err: closeErr}
	}
	if ctx.Err() != nil {
		return &exitCodeError{code: exitInterrupted}
	}
	return nil
}
