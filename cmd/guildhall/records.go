package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/trust"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/web/discovery"
)

func newRunsCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "runs",
		Short: "List this workspace's runs, newest first",
		Args:  noArgs,
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
	live := liveRuns(ws)
	fmt.Fprintln(tw, "RUN\tSTATUS\tLIVE\tEFFORT\tSTARTED\tSUMMARY")
	foreign, moved := 0, 0
	for _, id := range ids {
		m, err := ws.ReadMeta(id)
		if err != nil {
			status := "unreadable"
			if store.IsRecordError(err) {
				// A link, FIFO, device or oversized file where meta.json
				// belongs: not read, and never Guildhall's.
				status = "foreign"
				foreign++
			}
			fmt.Fprintf(tw, "%s\t%s\t\t\t%s\n", id, status, render.SanitizeLine(err.Error()))
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
			if m.MovedFrom != "" {
				status = "moved (" + render.SanitizeLine(m.Status) + ")"
				moved++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", id, status, live.of(m), render.SanitizeLine(m.Effort),
			startedText(m), clipRunes(render.SanitizeLine(summary), 70))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if live.attachable > 0 {
		fmt.Fprintln(out, "\nLIVE attach: the run goes on in a console you can attach to with `guildhall attach RUN_ID`.")
	}
	if foreign > 0 {
		fmt.Fprintf(out, "\n%d foreign run(s): their records are not sealed for this folder by your key, so they are never resumed or\ncontinued; `guildhall show RUN_ID` shows one read-only.", foreign)
		if moved > 0 {
			fmt.Fprintf(out, " %d of them you recorded when this folder was elsewhere (it moved, or was copied).", moved)
		}
		fmt.Fprintln(out, "\nIf they are yours, `guildhall records adopt` lists them and re-seals the ones you confirm.")
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
		Args: args{min: 1, max: 1, what: "the id of the run to show", example: "guildhall show run-20260101-120000",
			hint: "`guildhall runs` lists this workspace's runs"}.validate,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := common.records()
			if err != nil {
				return err
			}
			if err := store.CheckRunID(args[0]); err != nil {
				return usageErr(err)
			}
			m, err := ws.ReadMeta(args[0])
			if errors.Is(err, fs.ErrNotExist) {
				return &exitCodeError{code: exitError, err: noSuchRun(ws, args[0])}
			}
			if err != nil {
				return &exitCodeError{code: exitError, err: err}
			}
			showRun(cmd.OutOrStdout(), m, ws.ReadSummary(args[0]))
			showActivity(cmd.OutOrStdout(), ws, args[0])
			showUndo(cmd.OutOrStdout(), ws, args[0])
			showThread(cmd.OutOrStdout(), ws, args[0])
			return nil
		},
	}
}

// recentRuns is how many runs a "no such run" message lists.
const recentRuns = 5

// noSuchRun says that id is not a run of this workspace, and lists the
// newest ones so the operator can pick.
func noSuchRun(ws store.Workspace, id string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "no run %s in this workspace (%s)", render.SanitizeLine(id), render.SanitizeLine(ws.Dir))
	ids, err := ws.ListRunIDs()
	switch {
	case err != nil || len(ids) == 0:
		b.WriteString("; it has no runs yet")
	default:
		b.WriteString("; the most recent:")
		for _, r := range ids[:min(len(ids), recentRuns)] {
			line := "\n  " + r
			if m, err := ws.ReadMeta(r); err == nil {
				what := ws.ReadSummary(r)
				if what == "" {
					what = firstLine(m.Task)
				}
				line += fmt.Sprintf("  %-8s %s", render.SanitizeLine(m.Status), clipRunes(render.SanitizeLine(what), 60))
			}
			b.WriteString(line)
		}
		if len(ids) > recentRuns {
			fmt.Fprintf(&b, "\n  … and %d more: guildhall runs lists them all", len(ids)-recentRuns)
		}
	}
	return errors.New(b.String())
}

// knownRun checks that id names a run of this workspace, before anything
// slower (a provider probe, a session) starts.
func knownRun(ws store.Workspace, id string) error {
	if err := store.CheckRunID(id); err != nil {
		return err
	}
	if _, err := ws.ReadMeta(id); errors.Is(err, fs.ErrNotExist) {
		return noSuchRun(ws, id)
	}
	return nil
}

// checkTaskFlags checks the flags of a new task before anything slow
// (the endpoint probe): --effort, --log-level, and that --continue names a
// run of this workspace.
func (c *commonFlags) checkTaskFlags() error {
	if c.effort != "" && !runner.ValidEffort(c.effort) {
		return usageErr(fmt.Errorf("--effort %q is not one of quick, standard, thorough", c.effort))
	}
	if err := store.CheckLogLevel(c.logLevel); err != nil {
		return usageErr(fmt.Errorf("--log-level %q is not one of full, standard", c.logLevel))
	}
	if c.continues == "" {
		return nil
	}
	ws, err := c.records()
	if err != nil {
		return err
	}
	if err := knownRun(ws, c.continues); err != nil {
		return usageErr(fmt.Errorf("--continue: %w", err))
	}
	return nil
}

// prose renders agent Markdown for plain output: glamour pads every line
// to the width and frames the block in blank lines, which a file or a
// pipe keeps as trailing spaces; both are trimmed.
func prose(md *render.MarkdownRenderer, text string, width int) string {
	lines := strings.Split(md.Render(text, width), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

func showRun(out io.Writer, m *store.Meta, summary string) {
	md := render.NewMarkdownRenderer("notty")
	fmt.Fprintf(out, "Run      %s\n", m.RunID)
	switch {
	case m.Foreign && m.OriginalFormat:
		fmt.Fprintln(out, "Foreign  written by the original system (orchestration-builder), not by Guildhall for you: shown read-only, never resumed or continued")
	case m.Foreign && m.MovedFrom != "":
		fmt.Fprintf(out, "Foreign  recorded when this folder was %s (it moved since): shown read-only until `guildhall records adopt` re-seals it here\n", render.SanitizeLine(m.MovedFrom))
	case m.Foreign:
		fmt.Fprintln(out, "Foreign  its records are not sealed for this folder by your key (another folder, machine or account, or not Guildhall's): shown read-only, never resumed or continued; `guildhall records adopt` re-seals it if it is yours")
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
	fmt.Fprintln(out, prose(md, m.Task, 80))
	if res := m.Result; res != nil {
		fmt.Fprintln(out, "\nResult")
		fmt.Fprintln(out, prose(md, res.Summary, 80))
		if len(res.Artifacts) > 0 {
			fmt.Fprintln(out, "\nArtifacts")
			for _, a := range res.Artifacts {
				fmt.Fprintln(out, "  "+render.SanitizeLine(a))
			}
		}
	}
	if e := surfacedError(m); e != nil {
		fmt.Fprintf(out, "\nError (%s)\n", render.SanitizeLine(e.Kind))
		if e.Message != "" {
			fmt.Fprintln(out, prose(md, e.Message, 80))
		}
		if len(e.Detail) > 0 {
			fmt.Fprintln(out, "\nTechnical details")
			fmt.Fprintln(out, render.Sanitize(string(e.Detail)))
		}
	}
}

// surfacedError is a run's error: meta's own, else its result card's (the
// original system writes only the card's, except when its startup marks a
// run interrupted).
func surfacedError(m *store.Meta) *store.MetaError {
	if m.Error == nil && m.Result != nil {
		return m.Result.Error
	}
	return m.Error
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
		Args: args{min: 1, max: 1, what: "the id of the run to resume", example: "guildhall resume run-20260101-120000",
			hint: "`guildhall runs` lists this workspace's runs"}.validate,
		Annotations: settles(settleHeadless),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := store.CheckRunID(args[0]); err != nil {
				return usageErr(err)
			}
			ws, err := common.records()
			if err != nil {
				return err
			}
			if err := knownRun(ws, args[0]); err != nil {
				return &exitCodeError{code: exitError, err: err}
			}
			ctx, stop := signalContext()
			defer stop()
			m, err := ws.ReadMeta(args[0])
			if err != nil {
				return &exitCodeError{code: exitError, err: err}
			}
			if m.Foreign {
				return &exitCodeError{code: exitError, err: runner.ForeignRun(m)}
			}
			common.recordedGuild = m.GuildPath
			common.recordedEndpoint = endpointOf(m)
			if common.deployment == "" {
				common.deployment = explicitDeployment(m)
			}
			s, err := common.loadHeadless(ctx)
			if err != nil {
				return err
			}
			s.notes = append(s.notes, setupDrift(m, s)...)
			return headlessResume(ctx, cmd, common, rf, s, args[0])
		},
	}
	cmd.Flags().BoolVar(&rf.json, "json", false, "print one log event per line (NDJSON) instead of readable lines")
	cmd.Flags().BoolVar(&rf.noInput, "no-input", false, "answer ask_human with a \"no operator available\" tool error")
	return cmd
}

// recordedEndpoint is the endpoint a run used, as its meta.json names it;
// resume uses it unless a flag or an environment variable says otherwise.
type recordedEndpoint struct {
	runID, provider, apiBase, model string
}

// endpointOf is the endpoint run m used. A scripted run's script is not
// recorded, so a scripted run yields none: resuming it takes --provider
// script and --script as before. A record without an address (older
// runs) yields none either.
func endpointOf(m *store.Meta) recordedEndpoint {
	if m.Provider == "" || m.Provider == "script" || m.APIBase == "" {
		return recordedEndpoint{}
	}
	return recordedEndpoint{runID: m.RunID, provider: m.Provider, apiBase: m.APIBase, model: m.Model}
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
	if o := s.deployment.Origin("model.apiBase"); strings.HasPrefix(o, "run ") {
		model := ""
		if d.Name != "" {
			model = ", model " + d.Name
		}
		notes = append(notes, fmt.Sprintf("resuming with the endpoint run %s used: %s %s%s (--provider, --base-url and --model choose another)", m.RunID, d.Provider, d.APIBase, model))
	}
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

// projectDocsLine says which workspace files the entry role will read at
// run start, for `check`.
func projectDocsLine(workspace string, g *runner.Guild) string {
	docs := g.Roles[g.EntryRole].ProjectDocs
	problems := map[string]string{}
	if ws, err := tools.OpenWorkspace(workspace); err == nil {
		docs = g.EntryDocs(ws)
		for _, d := range docs {
			problems[d] = tools.ProjectDocProblem(ws, d)
		}
		ws.Close()
	}
	if len(docs) == 0 {
		if g.ConventionalDocs {
			return "project docs: none (the entry role would read " + strings.Join(tools.ConventionalDocs, ", ") + " if the workspace had them)"
		}
		return "project docs: none"
	}
	quoted := make([]string, len(docs))
	for i, d := range docs {
		quoted[i] = render.SanitizeLine(d)
		if p := problems[d]; p != "" {
			quoted[i] += " (not read: " + p + ")"
		}
	}
	return "project docs: " + strings.Join(quoted, ", ") + " (read by the entry role at run start as untrusted reference material, at most 256 KiB each)"
}

func newCheckCmd(common *commonFlags) *cobra.Command {
	strict, probe := false, false
	cmd := &cobra.Command{
		Use:   "check [GUILD_DIR]",
		Short: "Validate a guild and deployment; errors carry file:line:col",
		Long: `Validate the guild and deployment a run here would use, and say where each
came from: --guild/--deployment, the workspace's own files (applied only
once you trust the workspace), your ~/.config/guildhall/, or the built-in
seed guild and defaults. GUILD_DIR checks that guild folder instead.

Keys the original system ignores (in guild.json's top level, in tool
manifests, in label tiers) are ignored here too, and reported as warnings
with file:line:col, as is a tool declared twice; --strict makes them errors.

The deployment's MCP servers are listed (command or URL, sandbox, and only
the names of env and headers), with the MCP tools each role is granted.
--probe starts each server as a run would, reads its tools, prints the
ones each role may call and the granted ones it does not offer, and stops
it; a server that fails its probe fails the check.`,
		Args: args{max: 1, what: "at most one guild folder", example: "guildhall check ./guild"}.validate,
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
			if strict && len(g.Warnings) > 0 {
				return usageErr(fmt.Errorf("guild %s: %d warning(s), which --strict makes errors:\n%s", g.Source, len(g.Warnings), g.Warnings))
			}
			for _, w := range g.Warnings {
				fmt.Fprintln(out, "warning:", render.SanitizeLine(w.Error()))
			}
			fmt.Fprintf(out, "guild %s: ok (%d roles, entry role %s)\n", render.SanitizeLine(g.Source), len(g.Roles), render.SanitizeLine(g.EntryRole))
			fmt.Fprintln(out, projectDocsLine(cfg.workspace, g))
			if d.Origin("model.contextWindow") != "" {
				if err := d.CheckGenerationFits(); err != nil {
					return usageErr(err)
				}
			} else if d.Origin("model.generation.maxTokens") != "" {
				fmt.Fprintln(out, "note: model.contextWindow is not set: it is read from the server's model list when a run starts, and model.generation.maxTokens is checked against it then")
			}
			fmt.Fprintf(out, "deployment %s: ok (provider %s, endpoint %s)\n", render.SanitizeLine(d.Source), render.SanitizeLine(d.Model.Provider), render.SanitizeLine(d.Model.APIBase))
			if _, note := cfg.keyFor(common.keys); note != "" {
				fmt.Fprintln(out, "note:", render.SanitizeLine(note))
			}
			checkModels(out, cfg, g, common.keys)
			sb, err := common.checkSandbox(out, cfg.workspace, d)
			if err != nil {
				return err
			}
			return checkMCP(cmd.Context(), out, cfg, sb, probe)
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "treat warnings (keys the original ignores, a tool declared twice) as errors")
	cmd.Flags().BoolVar(&probe, "probe", false, "start the deployment's MCP servers (each in its sandbox), list the tools each role may call, and stop them")
	return cmd
}

// liveness says which runs are live: run by a process alive now, and
// whether that process's console can be attached to.
type liveness struct {
	holder     *store.BusyError  // the process holding the workspace
	console    *discovery.Record // the console serving the workspace, alive
	attachable int
}

// liveRuns reads what tells a live run: the workspace lock (held by a
// process now) and the operator's discovery file (its console).
func liveRuns(ws store.Workspace) *liveness {
	l := &liveness{holder: ws.Holder()}
	loc, err := discovery.Locate(os.Getenv)
	if err != nil {
		return l
	}
	canon, err := discovery.Canonical(ws.Dir)
	if err != nil {
		return l
	}
	if rec, err := discovery.Lookup(loc, canon); err == nil && rec.Alive() {
		l.console = &rec
	}
	return l
}

// of is a run's LIVE column: "attach" when the console that runs it
// serves the workspace (the discovery file's pid is the one meta.json
// records), "live" when a process holding the workspace runs it without a
// console to attach to (a headless run), else empty. meta.json is sealed;
// the lock file is the workspace's, so it alone never makes a run
// attachable.
func (l *liveness) of(m *store.Meta) string {
	if m.Foreign || store.Terminal(m.Status) || m.PID <= 0 {
		return ""
	}
	if l.console != nil && l.console.PID == m.PID {
		l.attachable++
		return "attach"
	}
	if l.holder != nil && l.holder.PID == m.PID && syscall.Kill(m.PID, 0) == nil {
		return "live"
	}
	return ""
}
