package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/render"
)

func newServeCmd(common *commonFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the browser console only (no terminal UI)",
		Long: `Serve the browser console on --web ADDR (default 127.0.0.1:8765) for this
workspace until interrupted. Runs are submitted, watched and answered from
the browser. On start the newest resumable run resumes.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signalContext()
			defer stop()
			if common.web == "" {
				common.web = "127.0.0.1:8765"
			}
			s, err := common.load(ctx)
			if err != nil {
				return err
			}
			sess, err := openSession(s, false)
			if err != nil {
				return err
			}
			defer sess.Close()
			printSessionNotes(cmd.ErrOrStderr(), sess)
			if rec, err := sess.Reconcile(); err == nil {
				noteOtherGuilds(cmd.ErrOrStderr(), rec)
				if rec.Resumable != "" {
					if err := sess.ResumeCheckpoint(ctx, rec.Resumable); err != nil {
						fmt.Fprintln(cmd.ErrOrStderr(), "note: could not resume", rec.Resumable+":", render.SanitizeLine(err.Error()))
					}
				}
			}
			sched, err := startScheduler(ctx, sess, cmd.ErrOrStderr())
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: the queue is unavailable:", render.SanitizeLine(err.Error()))
			}
			url, stopWeb, err := serveWeb(ctx, common, sess, s, sched, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stopWeb()
			printConsoleURL(cmd.ErrOrStderr(), url)
			<-ctx.Done()
			windDownLive(sess, cmd.ErrOrStderr())
			if _, live := sess.Active(); live {
				return &exitCodeError{code: exitInterrupted}
			}
			return nil
		},
	}
	return cmd
}
