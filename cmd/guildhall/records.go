package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/store"
)

func newRunsCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "runs",
		Short: "List this workspace's runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := common.workspaceDir()
			if err != nil {
				return err
			}
			return listRuns(cmd.OutOrStdout(), store.Workspace{Dir: dir})
		},
	}
}

func listRuns(out io.Writer, ws store.Workspace) error {
	ids, err := ws.ListRunIDs()
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	if len(ids) == 0 {
		fmt.Fprintln(out, "no runs yet in", ws.Dir)
		return nil
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tEFFORT\tSTARTED\tSUMMARY")
	for _, id := range ids {
		m, err := ws.ReadMeta(id)
		if err != nil {
			fmt.Fprintf(tw, "%s\tunreadable\t\t\t%s\n", id, render.SanitizeLine(err.Error()))
			continue
		}
		summary := ws.ReadSummary(id)
		if summary == "" {
			summary = firstLine(m.Task)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", id, render.SanitizeLine(m.Status), render.SanitizeLine(m.Effort),
			m.StartedAt.Local().Format("2006-01-02 15:04"), clipRunes(render.SanitizeLine(summary), 70))
	}
	return tw.Flush()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func newShowCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "show RUN_ID",
		Short: "Show one run: task, status, result card, artifacts, error, and its task thread",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := common.workspaceDir()
			if err != nil {
				return err
			}
			if err := store.CheckRunID(args[0]); err != nil {
				return usageErr(err)
			}
			m, err := store.Workspace{Dir: dir}.ReadMeta(args[0])
			if err != nil {
				return &exitCodeError{code: exitError, err: err}
			}
			showRun(cmd.OutOrStdout(), m, store.Workspace{Dir: dir}.ReadSummary(args[0]))
			showThread(cmd.OutOrStdout(), store.Workspace{Dir: dir}, args[0])
			return nil
		},
	}
}

func showRun(out io.Writer, m *store.Meta, summary string) {
	md := render.NewMarkdownRenderer("notty")
	fmt.Fprintf(out, "Run      %s\n", m.RunID)
	fmt.Fprintf(out, "Status   %s\n", render.SanitizeLine(m.Status))
	fmt.Fprintf(out, "Effort   %s\n", render.SanitizeLine(m.Effort))
	fmt.Fprintf(out, "Started  %s\n", m.StartedAt.Local().Format(time.RFC1123))
	if m.EndedAt != nil {
		fmt.Fprintf(out, "Ended    %s (%s)\n", m.EndedAt.Local().Format(time.RFC1123), m.EndedAt.Sub(m.StartedAt).Round(time.Second))
	}
	if m.ContinuesFrom != "" {
		fmt.Fprintf(out, "Continues %s\n", render.SanitizeLine(m.ContinuesFrom))
	}
	if summary != "" {
		fmt.Fprintf(out, "Summary  %s\n", render.SanitizeLine(summary))
	}
	fmt.Fprintln(out, "\nTask")
	fmt.Fprintln(out, md.Render(m.Task, 80))
	if res := m.Result; res != nil {
		fmt.Fprintln(out, "Result")
		fmt.Fprintln(out, md.Render(res.Summary, 80))
		if len(res.Artifacts) > 0 {
			fmt.Fprintln(out, "Artifacts")
			for _, a := range res.Artifacts {
				fmt.Fprintln(out, "  "+render.SanitizeLine(a))
			}
		}
	}
	if e := m.Error; e != nil {
		fmt.Fprintf(out, "\nError (%s)\n", render.SanitizeLine(e.Kind))
		if e.Message != "" {
			fmt.Fprintln(out, md.Render(e.Message, 80))
		}
		if len(e.Detail) > 0 {
			fmt.Fprintln(out, "Technical details")
			fmt.Fprintln(out, render.Sanitize(string(e.Detail)))
		}
	}
}

func newResumeCmd(common *commonFlags) *cobra.Command {
	rf := &runFlags{}
	cmd := &cobra.Command{
		Use:   "resume RUN_ID",
		Short: "Continue an interrupted or suspended run from its checkpoint",
		Long: `Resume a run that stopped before finishing (a signal, a closed terminal, a
crash, a suspension) from its last checkpoint, under its own run id. A
finished child's recorded result is delivered rather than the child re-run.
Progress is printed as with ` + "`guildhall run`" + `.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := store.CheckRunID(args[0]); err != nil {
				return usageErr(err)
			}
			ctx, stop := signalContext()
			defer stop()
			s, err := common.load(ctx)
			if err != nil {
				return err
			}
			return headlessResume(ctx, cmd, common, rf, s, args[0])
		},
	}
	cmd.Flags().BoolVar(&rf.json, "json", false, "print one log event per line (NDJSON) instead of readable lines")
	cmd.Flags().BoolVar(&rf.noInput, "no-input", false, "answer ask_human with a \"no operator available\" tool error")
	return cmd
}

func newCheckCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "check [GUILD_DIR]",
		Short: "Validate a guild and deployment; errors carry file:line:col",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			var g *runner.Guild
			var err error
			if len(args) == 1 {
				g, err = runner.LoadGuild(os.DirFS(args[0]), args[0])
			} else if common.guild != "" {
				g, err = runner.LoadGuild(os.DirFS(common.guild), common.guild)
			} else {
				dir, werr := common.workspaceDir()
				if werr != nil {
					return werr
				}
				if _, serr := os.Stat(filepath.Join(dir, "guild", "guild.json")); serr == nil {
					g, err = runner.LoadGuild(os.DirFS(filepath.Join(dir, "guild")), filepath.Join(dir, "guild"))
				} else {
					g, err = runner.LoadGuild(seed.Guild(), "seed guild")
				}
			}
			if err != nil {
				return usageErr(err)
			}
			fmt.Fprintf(out, "guild %s: ok (%d roles, entry role %s)\n", render.SanitizeLine(g.Source), len(g.Roles), render.SanitizeLine(g.EntryRole))
			dir, err := common.workspaceDir()
			if err != nil {
				return err
			}
			d, err := common.loadDeployment(dir, g)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "deployment %s: ok (provider %s)\n", render.SanitizeLine(d.Source), d.Model.Provider)
			return common.checkSandbox(out, dir, d)
		},
	}
}
