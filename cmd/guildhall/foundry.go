package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/bench"
	"github.com/guildhall/guildhall/bench/foundry"
	"github.com/guildhall/guildhall/headless"
	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/runner/trust"
)

func newFoundryCmd(common *commonFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "foundry",
		Short: "Improve a guild on a benchmark suite, and refuse changes that weaken isolation",
		Long: `diff and gate compare two guild configurations (a guild folder, with the
deployment.json beside it); run is the optimisation loop; promote copies
its best guild over yours, through the gate and only when you say so.
See docs/bench.md.`,
	}
	cmd.AddCommand(newFoundryDiffCmd(), newFoundryGateCmd(), newFoundryRunCmd(common), newFoundryPromoteCmd(common))
	return cmd
}

func loadPair(oldDir, newDir string) (*foundry.Config, *foundry.Config, error) {
	o, err := foundry.Load(oldDir)
	if err != nil {
		return nil, nil, usageErr(fmt.Errorf("OLD: %w", err))
	}
	n, err := foundry.Load(newDir)
	if err != nil {
		return nil, nil, usageErr(fmt.Errorf("NEW: %w", err))
	}
	return o, n, nil
}

func newFoundryDiffCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Show per role what changed between two guilds: tools, handlers, projectDocs, style guide, prompts",
		Args:  args{min: 2, max: 2, what: "two guild folders (or seed)", example: "guildhall foundry diff seed ./guild"}.validate,
		RunE: func(cmd *cobra.Command, a []string) error {
			o, n, err := loadPair(a[0], a[1])
			if err != nil {
				return err
			}
			foundry.Compare(o, n).WriteText(cmd.OutOrStdout())
			return nil
		},
	}
}

func newFoundryGateCmd() *cobra.Command {
	var ackFile string
	cmd := &cobra.Command{
		Use:   "gate OLD NEW",
		Short: "Exit non-zero when NEW weakens isolation and the weakening is not acknowledged",
		Long: `List every weakening NEW brings over OLD: a role gaining a command, write or
MCP tool, a read-only role gaining writes, projectDocs framing or an
injection-resistance clause removed, the sandbox loosened (an MCP server's
too), egress widened. Each must be acknowledged in the file beside NEW
(NEW.gate-ack.json beside the folder NEW names once made absolute and its
links resolved, never inside it) as
{"acknowledged": [{"id": "…", "reason": "…"}]}.
Exit status 0 when none is unacknowledged, 1 otherwise, 2 for usage errors.`,
		Args: args{min: 2, max: 2, what: "two guild folders (or seed)", example: "guildhall foundry gate seed ./guild"}.validate,
		RunE: func(cmd *cobra.Command, a []string) error {
			o, n, err := loadPair(a[0], a[1])
			if err != nil {
				return err
			}
			file := ackFile
			if file == "" {
				if file, err = foundry.AckFile(a[1]); err != nil {
					return usageErr(err)
				}
			}
			acks, err := foundry.ReadAck(file)
			if err != nil {
				return usageErr(err)
			}
			return printGate(cmd.OutOrStdout(), o, n, acks, file)
		},
	}
	cmd.Flags().StringVar(&ackFile, "ack", "", "the acknowledgement file (default: NEW.gate-ack.json beside NEW)")
	return cmd
}

func printGate(w io.Writer, o, n *foundry.Config, acks map[string]string, file string) error {
	ws, ok := foundry.Gate(o, n, acks)
	missing := 0
	for _, x := range ws {
		state := "NOT acknowledged"
		if x.Acknowledged != "" {
			state = "acknowledged: " + x.Acknowledged
		} else {
			missing++
		}
		fmt.Fprintln(w, render.SanitizeLine(fmt.Sprintf("%s  %s  [%s]", x.ID, x.Detail, state)))
	}
	if ok {
		fmt.Fprintf(w, "gate: pass (%d weakenings, all acknowledged)\n", len(ws))
		return nil
	}
	return &exitCodeError{code: exitError, err: fmt.Errorf("gate: %d weakenings not acknowledged; acknowledge each in %s as {\"acknowledged\": [{\"id\": \"ID\", \"reason\": \"why\"}]}", missing, file)}
}

type foundryRunFlags struct {
	guild                 string
	optModel, optProvider string
	optBase, optScript    string
	cycles, stale, repeat int
	jobs, maxTokens       int
	margin                float64
	scripts               string
}

func newFoundryRunCmd(common *commonFlags) *cobra.Command {
	ff := &foundryRunFlags{}
	cmd := &cobra.Command{
		Use:   "run [flags] SUITE_DIR",
		Short: "Improve a guild: observe, hypothesise, branch, evaluate, score, keep or drop, report",
		Long: `Each cycle is a run of the optimiser model in this workspace (guildhall
runs lists it as "Foundry cycle N of M"): it reads the results and the
guild, proposes one change, and the Foundry branches the guild under
.orchestration/foundry/<id>/cycle-N/, refuses the branch when it weakens
isolation, evaluates it on the suite (--repeat times each) and keeps it
when its score (pass − 0.05 × questions asked) beats the best by --margin.
It stops after --cycles, --stale cycles without a kept change, or
--max-tokens. Your guild is never changed: guildhall foundry promote ID
copies the best one over it, through the gate, on your word.`,
		Args: args{min: 1, max: 1, what: "the suite folder", example: "guildhall foundry run bench/suite --guild ./guild"}.validate,
		RunE: func(cmd *cobra.Command, a []string) error { return runFoundry(cmd, common, ff, a[0]) },
	}
	f := cmd.Flags()
	f.StringVar(&ff.guild, "guild", "", "the guild folder to improve (default: the seed guild)")
	f.StringVar(&ff.optModel, "optimizer-model", "", "the optimiser's model (default: the worker's)")
	f.StringVar(&ff.optProvider, "optimizer-provider", "", "the optimiser's wire format (default: the worker's)")
	f.StringVar(&ff.optBase, "optimizer-base-url", "", "the optimiser's endpoint (default: the worker's)")
	f.StringVar(&ff.optScript, "optimizer-script", "", "with --optimizer-provider script: the optimiser's scripted conversation")
	f.StringVar(&ff.scripts, "scripts", "", "with --provider script: folder of <benchmark>.json worker scripts")
	f.IntVar(&ff.cycles, "cycles", foundry.DefaultCycles, "at most this many cycles")
	f.IntVar(&ff.stale, "stale", foundry.DefaultStale, "stop after this many cycles in a row without a kept change")
	f.IntVar(&ff.maxTokens, "max-tokens", 0, "stop once the optimiser and the worker have used this many tokens (0: no limit)")
	f.IntVar(&ff.repeat, "repeat", 3, "runs per benchmark in each evaluation")
	f.IntVar(&ff.jobs, "jobs", 1, "evaluation runs at once")
	f.Float64Var(&ff.margin, "margin", foundry.DefaultMargin, "how much a change must raise the score to be kept")
	return cmd
}

func runFoundry(cmd *cobra.Command, common *commonFlags, ff *foundryRunFlags, suiteDir string) error {
	ctx, stop := signalContext()
	defer stop()
	benches, err := bench.LoadSuite(suiteDir)
	if err != nil {
		return usageErr(err)
	}
	ws, err := common.workspaceDir()
	if err != nil {
		return err
	}
	baseDir := ff.guild
	if baseDir == "" {
		baseDir = "seed"
	}
	base, err := foundry.Load(baseDir)
	if err != nil {
		return usageErr(err)
	}
	bf := &benchFlags{repeat: ff.repeat, jobs: ff.jobs, scripts: ff.scripts}
	if baseDir != "seed" {
		bf.guilds = []string{baseDir}
	}
	h, err := benchHarness(ctx, common, bf)
	if err != nil {
		return err
	}
	worker := h.Variants[0]
	opt, optModel, err := optimiser(ctx, common, ff, worker.Deployment)
	if err != nil {
		return err
	}
	op, err := trust.Operator()
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	sealer, err := op.Sealer(ws)
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	l := &foundry.Loop{
		Workspace: ws, Sealer: sealer, Redactor: common.keys.redactor(), Sandbox: h.Host, Base: base,
		SuiteDir: suiteDir, Suite: benches, Repeat: ff.repeat, Optimiser: opt, OptimiserModel: optModel,
		Cycles: ff.cycles, Stale: ff.stale, MaxTokens: ff.maxTokens, Margin: ff.margin, Log: cmd.ErrOrStderr(),
		Evaluate: func(g *runner.Guild) (*bench.Harness, error) {
			c := *h
			v := worker
			v.Guild, v.Name = g, "candidate"
			c.Variants = []bench.Variant{v}
			return &c, nil
		},
	}
	rep, err := l.Run(ctx)
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "foundry %s: base score %.3f, best %.3f; %s\n", rep.ID, rep.BaselineScore, rep.BestScore, render.SanitizeLine(rep.Stopped))
	for _, c := range rep.Cycles {
		verdict := "dropped"
		switch {
		case c.Rejected != "":
			verdict = "not evaluated: " + c.Rejected
		case c.Kept:
			verdict = "kept"
		}
		fmt.Fprintln(w, render.SanitizeLine(fmt.Sprintf("  cycle %d (%s): score %.3f vs %.3f, %s — %s", c.N, c.RunID, c.Score, c.Baseline, verdict, c.Hypothesis)))
	}
	if rep.Best != "" {
		fmt.Fprintf(w, "the best guild is %s; review it with `guildhall foundry diff %s %s`, then `guildhall foundry promote %s`\n",
			render.SanitizeLine(rep.Best), render.SanitizeLine(baseDir), render.SanitizeLine(rep.Best), rep.ID)
	}
	return nil
}

// optimiser is the optimiser's model: the worker's endpoint and model
// unless the flags say otherwise.
func optimiser(ctx context.Context, common *commonFlags, ff *foundryRunFlags, worker *runner.Deployment) (provider.Provider, string, error) {
	d := *worker
	if ff.optProvider != "" {
		d.Model.Provider = ff.optProvider
	}
	if ff.optBase != "" {
		d.Model.APIBase = ff.optBase
	}
	if ff.optModel != "" {
		d.Model.Name = ff.optModel
	}
	if d.Model.Provider == "script" {
		if ff.optScript == "" {
			return nil, "", usageErr(fmt.Errorf("a scripted optimiser needs --optimizer-script FILE"))
		}
		data, err := os.ReadFile(ff.optScript)
		if err != nil {
			return nil, "", usageErr(fmt.Errorf("--optimizer-script: %w", err))
		}
		s, err := provider.ParseScript(data)
		if err != nil {
			return nil, "", usageErr(fmt.Errorf("--optimizer-script %s: %w", ff.optScript, err))
		}
		return provider.NewScripted(s, 0), "scripted", nil
	}
	p, _, err := newProvider(ctx, &d, common.keys.forProvider(d.Model.Provider), "")
	return p, d.Model.Name, err
}

func newFoundryPromoteCmd(common *commonFlags) *cobra.Command {
	var to string
	var yes bool
	cmd := &cobra.Command{
		Use:   "promote [flags] SESSION_ID",
		Short: "Copy a Foundry session's best guild over your guild, through the gate, on your word",
		Args:  args{min: 1, max: 1, what: "a Foundry session id", example: "guildhall foundry promote fdy-20260101-120000"}.validate,
		RunE: func(cmd *cobra.Command, a []string) error {
			ws, err := common.workspaceDir()
			if err != nil {
				return err
			}
			return promote(cmd, ws, a[0], to, yes)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the guild folder to write (default: the guild the session started from)")
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	return cmd
}

func promote(cmd *cobra.Command, ws, id, to string, yes bool) error {
	if !strings.HasPrefix(id, "fdy-") || filepath.Base(id) != id {
		return usageErr(fmt.Errorf("%q is not a Foundry session id (fdy-YYYYMMDD-HHMMSS)", id))
	}
	dir := filepath.Join(foundry.Dir(ws), id)
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		return usageErr(fmt.Errorf("session %s: %w", id, err))
	}
	var rep foundry.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return &exitCodeError{code: exitError, err: fmt.Errorf("session %s: %w", id, err)}
	}
	if rep.Best == "" {
		return &exitCodeError{code: exitError, err: fmt.Errorf("session %s kept no change: there is nothing to promote", id)}
	}
	// The best guild must be this session's own branch.
	if rel, err := filepath.Rel(dir, rep.Best); err != nil || strings.HasPrefix(rel, "..") {
		return &exitCodeError{code: exitError, err: fmt.Errorf("session %s names a guild outside it; refusing", id)}
	}
	if to == "" {
		to = rep.Base
	}
	if to == "seed" || to == "" {
		return usageErr(fmt.Errorf("the session improved the seed guild; say where to write the new one with --to DIR"))
	}
	// The guild written over is the one judged: a folder holding guild/
	// is that guild/ (as Load reads it). A target that holds no guild yet
	// is judged against the session's base, and nothing is backed up.
	target, replacing := to, true
	cur, err := foundry.Load(to)
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(to, "guild.json")); !os.IsNotExist(statErr) {
			return usageErr(err)
		}
		if cur, err = foundry.Load(rep.Base); err != nil {
			return usageErr(err)
		}
		replacing = false
	} else {
		target = cur.Name
	}
	best, err := foundry.Load(rep.Best)
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	out := cmd.OutOrStdout()
	foundry.Compare(cur, best).WriteText(out)
	ackFile, err := foundry.AckFile(to)
	if err != nil {
		return usageErr(err)
	}
	acks, err := foundry.ReadAck(ackFile)
	if err != nil {
		return usageErr(err)
	}
	if err := printGate(out, cur, best, acks, ackFile); err != nil {
		return err
	}
	if !yes && !confirm(cmd, fmt.Sprintf("Write this guild over %s? [y/N] ", target)) {
		return &exitCodeError{code: exitError, err: fmt.Errorf("not promoted")}
	}
	backup := freshBackup(dir)
	if replacing {
		if err := foundry.WriteFiles(backup, cur.Files); err != nil {
			return &exitCodeError{code: exitError, err: fmt.Errorf("back up %s: %w", target, err)}
		}
	}
	if err := foundry.WriteFiles(target, best.Files); err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	if replacing {
		fmt.Fprintf(out, "promoted %s to %s (the previous guild is in %s)\n", render.SanitizeLine(rep.Best), render.SanitizeLine(target), render.SanitizeLine(backup))
	} else {
		fmt.Fprintf(out, "promoted %s to %s (a new guild folder: nothing was replaced, so nothing was backed up)\n", render.SanitizeLine(rep.Best), render.SanitizeLine(target))
	}
	return nil
}

// freshBackup names the session's first unused backup folder
// (previous-guild, then previous-guild-2, …): a second promotion from
// the same session keeps the first one's backup of the original guild.
func freshBackup(session string) string {
	for n := 1; ; n++ {
		p := filepath.Join(session, "previous-guild")
		if n > 1 {
			p = fmt.Sprintf("%s-%d", p, n)
		}
		if _, err := os.Lstat(p); err != nil {
			return p
		}
	}
}

// confirm asks on a terminal; without one the answer is no (pass --yes).
func confirm(cmd *cobra.Command, question string) bool {
	in, ok := cmd.InOrStdin().(*os.File)
	if !ok || !headless.IsTerminal(in) {
		fmt.Fprintln(cmd.ErrOrStderr(), "no terminal to confirm on; pass --yes to promote")
		return false
	}
	fmt.Fprint(cmd.ErrOrStderr(), question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	return strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes")
}
