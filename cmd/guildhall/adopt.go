package main

// guildhall records adopt: the way back for runs that became foreign
// because their folder moved (or came from another machine or account).
// The seal that makes them foreign is what keeps a planted .orchestration
// from being obeyed, so nothing is re-sealed without the operator seeing
// the list and saying yes once (store/adopt.go).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/store"
)

func newRecordsCmd(common *commonFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "records",
		Short: "Manage this workspace's run records (adopt runs of a moved folder)",
		Args:  noArgs,
	}
	cmd.AddCommand(newAdoptCmd(common))
	return cmd
}

func newAdoptCmd(common *commonFlags) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "adopt [RUN_ID...]",
		Short: "Re-seal runs recorded before this folder moved, after you confirm them",
		Long: `Runs are sealed for the folder they were recorded in, under your records key,
so that a .orchestration folder someone else wrote (a cloned repository, an
unpacked archive) is shown but never resumed, continued or queued. Moving or
renaming the workspace, or carrying it to another machine or account, makes
your own runs foreign in the same way.

adopt lists the foreign runs (or the RUN_IDs given) and re-seals them for
this folder once you say yes. Each is marked:

  yours   sealed by your key when this folder was at the path shown: the
          folder moved or was copied
  unknown not sealed by your key: recorded on another machine or account,
          or planted; adopt it only if you know it is yours

On a terminal it asks once; --yes re-seals without asking, for scripts.
Exit status: 0 when every run listed was adopted (or there was none), 1
when you said no or one failed, 2 for a usage error.`,
		Args: func(cmd *cobra.Command, ids []string) error {
			for _, id := range ids {
				if err := store.CheckRunID(id); err != nil {
					return usageErr(err)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, ids []string) error { return adoptRuns(cmd, common, ids, yes) },
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "re-seal without asking")
	return cmd
}

func adoptRuns(cmd *cobra.Command, common *commonFlags, ids []string, yes bool) error {
	ws, err := common.records()
	if err != nil {
		return err
	}
	if busy := ws.Holder(); busy != nil && busy.RunID != "" {
		return &exitCodeError{code: exitError, err: fmt.Errorf("run %s is live in this workspace (pid %d): adopt once it has ended", render.SanitizeLine(busy.RunID), busy.PID)}
	}
	all, err := ws.AdoptCandidates()
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	todo := all
	if len(ids) > 0 {
		todo = nil
		for _, id := range ids {
			i := slices.IndexFunc(all, func(c store.AdoptCandidate) bool { return c.Meta.RunID == id })
			if i < 0 {
				if _, err := ws.ReadMeta(id); err != nil {
					return &exitCodeError{code: exitError, err: noSuchRun(ws, id)}
				}
				return &exitCodeError{code: exitError, err: fmt.Errorf("run %s is not foreign here (or was written by the original system): there is nothing to adopt", id)}
			}
			todo = append(todo, all[i])
		}
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if len(todo) == 0 {
		fmt.Fprintln(out, "No foreign runs in", render.SanitizeLine(ws.Dir)+": nothing to adopt.")
		return nil
	}
	unknown := printAdoptList(out, ws.Dir, todo)
	if !yes {
		in, ok := cmd.InOrStdin().(*os.File)
		if !ok || !term.IsTerminal(int(in.Fd())) {
			return usageErr(errors.New("adopt asks before it re-seals runs, and there is no terminal to ask on: pass --yes to re-seal the runs listed without asking"))
		}
		q := fmt.Sprintf("Re-seal %s for %s under your key? [y/N] ", plural(len(todo), "run"), render.SanitizeLine(ws.Dir))
		if unknown > 0 {
			q = fmt.Sprintf("%d of them are not sealed by your key. ", unknown) + q
		}
		if !ask(bufio.NewReader(in), errOut, q) {
			fmt.Fprintln(out, "Nothing was adopted.")
			return &exitCodeError{code: exitError}
		}
	}
	failed := 0
	for _, c := range todo {
		if err := ws.Adopt(c.Meta.RunID); err != nil {
			fmt.Fprintln(errOut, "guildhall: not adopted:", render.SanitizeLine(err.Error()))
			failed++
			continue
		}
		fmt.Fprintln(out, "adopted", c.Meta.RunID)
	}
	if failed > 0 {
		return &exitCodeError{code: exitError}
	}
	return nil
}

// printAdoptList shows each run adopt would re-seal, and returns how many
// are not sealed by this operator's key. Everything in it comes from the
// records, so it is sanitised.
func printAdoptList(out io.Writer, here string, todo []store.AdoptCandidate) (unknown int) {
	fmt.Fprintf(out, "Runs foreign in %s:\n", render.SanitizeLine(here))
	for _, c := range todo {
		m := c.Meta
		who := "yours  "
		where := "recorded when this folder was " + render.SanitizeLine(c.RecordedIn)
		if !c.SealedByYou {
			who = "unknown"
			unknown++
			where = "not sealed by your key"
			if c.RecordedIn != "" {
				where += "; it claims " + render.SanitizeLine(c.RecordedIn)
			}
		}
		fmt.Fprintf(out, "  %s  %s  %s  %s  %s\n", who, m.RunID, render.SanitizeLine(m.Status), m.StartedAt.Local().Format(time.DateTime), clipRunes(render.SanitizeLine(firstLine(m.Task)), 60))
		fmt.Fprintf(out, "           %s", where)
		if m.APIBase != "" {
			fmt.Fprintf(out, "; endpoint %s %s", render.SanitizeLine(m.Provider), render.SanitizeLine(m.APIBase))
		}
		fmt.Fprintln(out)
	}
	return unknown
}
