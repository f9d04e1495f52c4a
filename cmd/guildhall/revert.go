package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

func newRevertCmd(common *commonFlags) *cobra.Command {
	var yes, force bool
	cmd := &cobra.Command{
		Use:   "revert RUN_ID [PATH...]",
		Short: "Put back what a run's file tools changed: every file, or the PATHs given",
		Long: `Put back the files a run's file tools (write_file, edit_file) wrote, from
the copies the run kept of them (.orchestration/runs/RUN_ID/undo/): a file it
changed gets its earlier content back, a file it created is deleted, a file
it deleted after writing it is restored. It works with or without git.

A file that changed after the run ended (a later run, your editor) is not
reverted: the change is shown, and --force discards it too. What the run's
commands changed (run_shell, test, the git tools) is not reverted; the plan
says how to put it back with git when the run set a base.

On a terminal it asks before changing anything; --yes reverts without
asking, for scripts. Exit status: 0 when every file asked for was reverted
(or already was), 1 when one was not, 2 for a usage error.`,
		Args: args{min: 1, max: -1, what: "the id of the run to revert", example: "guildhall revert run-20260101-120000 src/main.go",
			hint: "`guildhall runs` lists this workspace's runs"}.validate,
		RunE: func(cmd *cobra.Command, argv []string) error {
			return revertRun(cmd, common, argv[0], argv[1:], yes, force)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "revert without asking")
	cmd.Flags().BoolVar(&force, "force", false, "also revert files that changed after the run ended, discarding that change")
	return cmd
}

func revertRun(cmd *cobra.Command, common *commonFlags, id string, paths []string, yes, force bool) error {
	if err := store.CheckRunID(id); err != nil {
		return usageErr(err)
	}
	ws, err := common.records()
	if err != nil {
		return err
	}
	if _, err := ws.ReadMeta(id); errors.Is(err, fs.ErrNotExist) {
		return &exitCodeError{code: exitError, err: noSuchRun(ws, id)}
	}
	if busy := ws.Holder(); busy != nil && busy.RunID != "" {
		return &exitCodeError{code: exitError, err: fmt.Errorf("run %s is live in this workspace (pid %d): revert once it has ended", render.SanitizeLine(busy.RunID), busy.PID)}
	}
	plan, err := runner.PlanRevert(ws, ws.Dir, id, paths)
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	printRevertPlan(out, plan, force)
	todo := plan.Revertable(force)
	if len(todo) == 0 {
		fmt.Fprintln(out, "Nothing to revert.")
		return revertStatus(plan, force, nil)
	}
	if !yes {
		in, ok := cmd.InOrStdin().(*os.File)
		if !ok || !term.IsTerminal(int(in.Fd())) {
			return usageErr(errors.New("revert asks before it changes files, and there is no terminal to ask on: pass --yes to revert without asking"))
		}
		r := bufio.NewReader(in)
		if !ask(r, errOut, fmt.Sprintf("Revert %s of %s? [y/N] ", plural(len(todo), "file"), id)) {
			fmt.Fprintln(out, "Nothing was reverted.")
			return &exitCodeError{code: exitError}
		}
		if later := plan.Later(); force && len(later) > 0 &&
			!ask(r, errOut, fmt.Sprintf("%s changed after the run ended; reverting discards that change. Discard it? [y/N] ", namesOf(later))) {
			fmt.Fprintln(out, "Nothing was reverted.")
			return &exitCodeError{code: exitError}
		}
	}
	res, err := runner.ApplyRevert(ws, ws.Dir, plan, force, "cli", time.Now())
	for _, p := range res.Restored {
		fmt.Fprintln(out, "restored", render.SanitizeLine(p))
	}
	for _, p := range res.Deleted {
		fmt.Fprintln(out, "deleted ", render.SanitizeLine(p))
	}
	for _, f := range res.Skipped {
		fmt.Fprintf(out, "not reverted %s: %s\n", render.SanitizeLine(f.Path), render.SanitizeLine(f.Refused))
	}
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	return revertStatus(plan, force, &res)
}

// revertStatus is 1 when a file asked for was left as it is: refused,
// changed after the run without --force, or failed.
func revertStatus(plan *runner.RevertPlan, force bool, res *runner.RevertResult) error {
	left := 0
	if res != nil {
		left = len(res.Skipped)
	} else {
		for _, f := range plan.Files {
			if f.Refused != "" || (f.Later && !force && f.Action != runner.RevertNone) {
				left++
			}
		}
	}
	if left > 0 {
		return &exitCodeError{code: exitError}
	}
	return nil
}

func ask(r *bufio.Reader, w io.Writer, question string) bool {
	fmt.Fprint(w, question)
	line, _ := r.ReadString('\n')
	a := strings.TrimSpace(line)
	return strings.EqualFold(a, "y") || strings.EqualFold(a, "yes")
}

func namesOf(files []runner.RevertFile) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = render.SanitizeLine(f.Path)
	}
	return strings.Join(names, ", ")
}

// printRevertPlan says what the revert does, file by file, and what it
// leaves alone.
func printRevertPlan(w io.Writer, p *runner.RevertPlan, force bool) {
	fmt.Fprintf(w, "Revert %s\n", p.RunID)
	var none, refused, later []runner.RevertFile
	for _, f := range p.Files {
		path := render.SanitizeLine(f.Path)
		switch {
		case f.Refused != "":
			refused = append(refused, f)
		case f.Action == runner.RevertNone:
			none = append(none, f)
		case f.Later && !force:
			later = append(later, f)
		case f.Action == runner.RevertDelete:
			fmt.Fprintf(w, "  delete   %s  (the run created it)\n", path)
		case !f.Exists():
			fmt.Fprintf(w, "  restore  %s  (it is gone)\n", path)
		default:
			fmt.Fprintf(w, "  restore  %s\n", path)
		}
		if f.Later && force && f.Refused == "" && f.Action != runner.RevertNone {
			fmt.Fprintf(w, "           %s changed after the run ended; --force discards that change:\n", path)
			printLater(w, f)
		}
	}
	for _, f := range none {
		fmt.Fprintf(w, "  as before %s  (nothing to do)\n", render.SanitizeLine(f.Path))
	}
	if len(later) > 0 {
		fmt.Fprintln(w, "Changed after the run ended, so not reverted (--force discards the change):")
		for _, f := range later {
			fmt.Fprintf(w, "  %s\n", render.SanitizeLine(f.Path))
			printLater(w, f)
		}
	}
	if len(refused) > 0 {
		fmt.Fprintln(w, "Cannot be reverted:")
		for _, f := range refused {
			fmt.Fprintf(w, "  %s: %s\n", render.SanitizeLine(f.Path), render.SanitizeLine(f.Refused))
		}
	}
	if n := p.CommandNote(); n != "" {
		fmt.Fprintln(w, "Note:", render.SanitizeLine(n))
	}
	if p.Untracked > 0 {
		fmt.Fprintf(w, "Note: the run's file tools wrote %d more files after its record was full; they are not reverted.\n", p.Untracked)
	}
	if p.Problem != "" {
		fmt.Fprintln(w, "Note: while the run ran,", render.SanitizeLine(p.Problem))
	}
}

// printLater prints a later change, each line of workspace text
// sanitised.
func printLater(w io.Writer, f runner.RevertFile) {
	if f.LaterDiff == "" {
		fmt.Fprintf(w, "      (%s)\n", render.SanitizeLine(f.LaterNote))
		return
	}
	for _, l := range strings.Split(strings.TrimRight(f.LaterDiff, "\n"), "\n") {
		fmt.Fprintf(w, "      %s\n", render.SanitizeLine(l))
	}
}

// showUndo prints what a run's undo record holds, for guildhall show: how
// many files its file tools wrote, and each revert done.
func showUndo(w io.Writer, ws store.Workspace, id string) {
	rec, err := ws.ReadUndo(id)
	switch {
	case err != nil:
		return
	case rec.Foreign:
		fmt.Fprintln(w, "\nUndo record\n  not sealed by you: never used to revert")
		return
	}
	them := "them"
	if len(rec.Files) == 1 {
		them = "it"
	}
	fmt.Fprintf(w, "\nFiles written by its file tools\n  %s (guildhall revert %s puts %s back)\n", plural(len(rec.Files), "file"), id, them)
	if len(rec.Reverts) == 0 {
		return
	}
	fmt.Fprintln(w, "\nReverted")
	for _, r := range rec.Reverts {
		var parts []string
		if len(r.Restored) > 0 {
			parts = append(parts, "restored "+strings.Join(sanitizeAll(r.Restored), ", "))
		}
		if len(r.Deleted) > 0 {
			parts = append(parts, "deleted "+strings.Join(sanitizeAll(r.Deleted), ", "))
		}
		if len(r.Forced) > 0 {
			parts = append(parts, "over later changes to "+strings.Join(sanitizeAll(r.Forced), ", "))
		}
		fmt.Fprintf(w, "  %s from the %s: %s\n", r.At.Local().Format(time.RFC1123), render.SanitizeLine(r.By), strings.Join(parts, "; "))
	}
}

func sanitizeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = render.SanitizeLine(s)
	}
	return out
}
