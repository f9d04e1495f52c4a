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
	"github.com/guildhall/guildhall/runner/trust"
	"github.com/guildhall/guildhall/store"
)

func newRunsCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "runs",
		Short: "List this workspace's runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := common.records()
			if err != nil {
				return err
			}
			return listRuns(cmd.OutOrStdout(), ws)
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
	foreign := 0
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
		status := render.SanitizeLine(m.Status)
		if m.Foreign {
			status = "foreign (" + status + ")"
			foreign++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", id, status, render.SanitizeLine(m.Effort),
			startedText(m), clipRunes(render.SanitizeLine(summary), 70))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if foreign > 0 {
		fmt.Fprintf(out, "\n%d foreign run(s): their records were not written by Guildhall for you (the integrity check failed),\nso they are never resumed or continued; `guildhall show RUN_ID` shows one read-only.\n", foreign)
	}
	return nil
}

// startedText is a run's start time for a listing, or "unknown".
func startedText(m *store.Meta) string {
	if m.StartedAt.IsZero() {
		return "unknown"
	}
	return m.StartedAt.Local().Format("2006-01-02 15:04")
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
			ws, err := common.records()
			if err != nil {
				return err
			}
			if err := store.CheckRunID(args[0]); err != nil {
				return usageErr(err)
			}
			m, err := ws.ReadMeta(args[0])
			if err != nil {
				return &exitCodeError{code: exitError, err: err}
			}
			showRun(cmd.OutOrStdout(), m, ws.ReadSummary(args[0]))
			showThread(cmd.OutOrStdout(), ws, args[0])
			return nil
		},
	}
}

func showRun(out io.Writer, m *store.Meta, summary string) {
	md := render.NewMarkdownRenderer("notty")
	fmt.Fprintf(out, "Run      %s\n", m.RunID)
	if m.Foreign {
		fmt.Fprintln(out, "Foreign  its records were not written by Guildhall for you (the integrity check failed): shown read-only, never resumed or continued")
	}
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
			ws, err := common.records()
			if err != nil {
				return err
			}
			m, err := ws.ReadMeta(args[0])
			if err != nil {
				return &exitCodeError{code: exitError, err: err}
			}
			if m.Foreign {
				return &exitCodeError{code: exitError, err: &runner.ForeignRunError{RunID: m.RunID, Record: store.MetaFile}}
			}
			common.recordedGuild = m.GuildPath
			if common.deployment == "" {
				common.deployment = explicitDeployment(m)
			}
			s, err := common.load(ctx)
			if err != nil {
				return err
			}
			s.notes = append(s.notes, setupDrift(m, s)...)
			if err := s.requireEndpoint(); err != nil {
				return err
			}
			return headlessResume(ctx, cmd, common, rf, s, args[0])
		},
	}
	cmd.Flags().BoolVar(&rf.json, "json", false, "print one log event per line (NDJSON) instead of readable lines")
	cmd.Flags().BoolVar(&rf.noInput, "no-input", false, "answer ask_human with a \"no operator available\" tool error")
	return cmd
}

// explicitDeployment is the deployment file a run was started with by
// --deployment, "" when its deployment came from the usual layers (the
// operator's deployment.json, the workspace's own, the defaults), which a
// resume resolves again. Only an explicit file is a single absolute layer
// outside the operator's folder.
func explicitDeployment(m *store.Meta) string {
	if len(m.DeploymentFiles) != 1 || !filepath.IsAbs(m.DeploymentFiles[0]) {
		return ""
	}
	f := m.DeploymentFiles[0]
	if op, err := trust.Operator(); err == nil && f == filepath.Join(op.Config, "deployment.json") {
		return ""
	}
	if _, err := os.Stat(f); err != nil {
		return ""
	}
	return f
}

// setupDrift says how a resume's setup differs from the one the run
// started with: a guild or deployment whose files changed, another model
// endpoint. The run resumes regardless; the operator should know.
func setupDrift(m *store.Meta, s *setup) []string {
	var notes []string
	if m.GuildHash != "" && s.guild.Hash != m.GuildHash {
		notes = append(notes, fmt.Sprintf("the guild %s changed since run %s started; resuming with its current files", s.guild.Source, m.RunID))
	}
	if m.DeploymentHash != s.deployment.Hash && (m.DeploymentHash != "" || len(m.DeploymentFiles) > 0) {
		notes = append(notes, fmt.Sprintf("the deployment changed since run %s started (then %s, now %s)", m.RunID, filesText(m.DeploymentFiles), filesText(s.deployment.Files)))
	}
	d := s.deployment.Model
	if m.APIBase != "" && (m.Provider != d.Provider || m.APIBase != d.APIBase) {
		notes = append(notes, fmt.Sprintf("run %s used the %s endpoint %s; this resume uses %s %s (pass --provider and --base-url to use the same)", m.RunID, m.Provider, m.APIBase, d.Provider, d.APIBase))
	}
	if m.Model != "" && d.Name != "" && m.Model != d.Name {
		notes = append(notes, fmt.Sprintf("run %s used model %s; this resume uses %s (pass --model %s to use the same)", m.RunID, m.Model, d.Name, m.Model))
	}
	return notes
}

func filesText(files []string) string {
	if len(files) == 0 {
		return "the built-in defaults"
	}
	return strings.Join(files, " + ")
}

func newCheckCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "check [GUILD_DIR]",
		Short: "Validate a guild and deployment; errors carry file:line:col",
		Long: `Validate the guild and deployment a run here would use, and say where each
came from: --guild/--deployment, the workspace's own files (applied only
once you trust the workspace), your ~/.config/guildhall/, or the built-in
seed guild and defaults. GUILD_DIR checks that guild folder instead.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				common.guild = args[0]
			}
			cfg, err := common.resolve(cmd.Context(), nil)
			if err != nil {
				return err
			}
			if s := cfg.trust.summary(); s != "" {
				fmt.Fprintf(out, "workspace %s: %s\n", render.SanitizeLine(cfg.workspace), render.SanitizeLine(s))
			} else {
				fmt.Fprintf(out, "workspace %s: supplies no configuration of its own\n", render.SanitizeLine(cfg.workspace))
			}
			for _, n := range cfg.notes {
				fmt.Fprintln(out, "note:", render.SanitizeLine(n))
			}
			g, d := cfg.guild, cfg.deployment
			fmt.Fprintf(out, "guild %s: ok (%d roles, entry role %s)\n", render.SanitizeLine(g.Source), len(g.Roles), render.SanitizeLine(g.EntryRole))
			fmt.Fprintf(out, "deployment %s: ok (provider %s, endpoint %s)\n", render.SanitizeLine(d.Source), render.SanitizeLine(d.Model.Provider), render.SanitizeLine(d.Model.APIBase))
			if _, note := cfg.keyFor(common.keys); note != "" {
				fmt.Fprintln(out, "note:", render.SanitizeLine(note))
			}
			return nil
		},
	}
}
