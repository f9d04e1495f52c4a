package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/guildhall/guildhall/bench"
	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/runner/trust"
	"github.com/guildhall/guildhall/tools/sandbox"
)

type benchFlags struct {
	guilds, models []string
	repeat, jobs   int
	json, compare  bool
	keep           bool
	baseline       string
	one, out, html string
	scripts        string
	path           string
	work           string
	timeout        time.Duration
	isolateCaches  bool
}

func newBenchCmd(common *commonFlags) *cobra.Command {
	bf := &benchFlags{}
	cmd := &cobra.Command{
		Use:   "bench [flags] SUITE_DIR",
		Short: "Measure a guild with a model on a suite of benchmark tasks",
		Long: `Run every benchmark of SUITE_DIR (folders holding a workspace and an
eval.json) with the guild and model, each in a throwaway copy of its
workspace, in the sandbox, and validate the result. ask_human is answered
from the benchmark's humanResponses, or with "use your judgement" (which
still counts against the score).

Results go to --out (default bench-results/<time>): a JSON file per run,
report.json and report.html (plots, one file, no network). The table is
printed at the end; --json prints report.json instead.

Compare two guilds (--guild A --guild B) or two models (--model X
--model Y) with --compare, or a guild with a single-agent program on the
same tasks and model with --baseline crush|codex. --one TASK (a name or a
0-based index) runs one benchmark, for a cluster to fan out; merge the
result folders with guildhall bench merge. See docs/bench.md.

Exit status: 0 when every run was carried out (whatever it scored), 1 when
a run could not be, 2 for usage errors, 130 when interrupted.`,
		Args: args{min: 1, max: 1, what: "the suite folder", example: "guildhall bench bench/suite"}.validate,
		RunE: func(cmd *cobra.Command, args []string) error { return runBench(cmd, common, bf, args[0]) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&bf.guilds, "guild", nil, "guild folder to measure (repeat with --compare; default: your guild, else the seed guild)")
	f.StringArrayVar(&bf.models, "model", nil, "model name (repeat with --compare; default: the deployment's)")
	f.IntVar(&bf.repeat, "repeat", 1, "runs per benchmark and variant")
	f.IntVar(&bf.jobs, "jobs", 1, "runs at once, each in its own workspace and sandbox")
	f.BoolVar(&bf.json, "json", false, "print the report as JSON instead of the table")
	f.BoolVar(&bf.compare, "compare", false, "compare two variants (two --guild, two --model, or --baseline) with a significance note")
	f.StringVar(&bf.baseline, "baseline", "", "also run a single-agent program on the same tasks and model: crush or codex")
	f.StringVar(&bf.one, "one", "", "run only this benchmark (its name, or its 0-based index in the suite)")
	f.StringVar(&bf.out, "out", "", "folder for the results (default bench-results/<UTC time>)")
	f.StringVar(&bf.html, "html", "", "where to write the HTML report (default OUT/report.html; \"-\" for none)")
	f.StringVar(&bf.scripts, "scripts", "", "with --provider script: folder of <benchmark>.json scripts (default: each benchmark's script.json)")
	f.StringVar(&bf.path, "path", "", "PATH of the runs and validations (default: the absolute, visible entries of yours)")
	f.DurationVar(&bf.timeout, "timeout", 0, "stop a run after this long (e.g. 20m) and validate it as it stands; 0 for no limit")
	f.StringVar(&bf.work, "work", "", "folder for the throwaway workspaces and the build cache, which then outlives the suite (default: a temporary folder)")
	f.BoolVar(&bf.keep, "keep", false, "keep the throwaway workspaces (their paths are in the results)")
	f.BoolVar(&bf.isolateCaches, "isolate-caches", false, "give every run its own build caches instead of one shared by the suite")
	cmd.AddCommand(newBenchMergeCmd())
	return cmd
}

func runBench(cmd *cobra.Command, common *commonFlags, bf *benchFlags, suiteDir string) error {
	ctx, stop := signalContext()
	defer stop()
	benches, err := bench.LoadSuite(suiteDir)
	if err != nil {
		return usageErr(err)
	}
	if benches, err = pickOne(benches, bf.one); err != nil {
		return usageErr(err)
	}
	if err := bf.check(); err != nil {
		return usageErr(err)
	}
	h, err := benchHarness(ctx, common, bf)
	if err != nil {
		return err
	}
	out, err := bf.outDir()
	if err != nil {
		return usageErr(err)
	}
	var writeErr error
	var mu sync.Mutex
	prog := newProgressPrinter(cmd.ErrOrStderr())
	h.Progress = prog.update
	h.OnResult = func(r bench.Result) {
		prog.result(r)
		if err := bench.WriteResult(out, r); err != nil {
			mu.Lock()
			writeErr = errors.Join(writeErr, err)
			mu.Unlock()
		}
	}
	rep, runErr := h.Run(ctx, suiteDir, benches)
	prog.done()
	if rep == nil {
		return &exitCodeError{code: exitError, err: runErr}
	}
	if err := writeReport(out, bf, rep); err != nil {
		writeErr = errors.Join(writeErr, err)
	}
	if err := printReport(cmd.OutOrStdout(), bf.json, rep); err != nil {
		return err
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "results:", render.SanitizeLine(out))
	switch {
	case runErr != nil:
		return &exitCodeError{code: exitInterrupted, err: fmt.Errorf("interrupted; %d runs finished", len(rep.Results))}
	case writeErr != nil:
		return &exitCodeError{code: exitError, err: writeErr}
	}
	for _, r := range rep.Results {
		if r.Error != "" {
			return &exitCodeError{code: exitError}
		}
	}
	return nil
}

func (bf *benchFlags) check() error {
	switch {
	case bf.repeat < 1 || bf.repeat > 1000:
		return fmt.Errorf("--repeat %d is not between 1 and 1000", bf.repeat)
	case bf.jobs < 1 || bf.jobs > 256:
		return fmt.Errorf("--jobs %d is not between 1 and 256", bf.jobs)
	case len(bf.guilds) > 2 || len(bf.models) > 2:
		return errors.New("--compare takes two variants: at most two --guild and two --model")
	case len(bf.guilds) == 2 && len(bf.models) == 2:
		return errors.New("compare two guilds or two models, not both at once")
	case bf.timeout < 0:
		return errors.New("--timeout must not be negative")
	}
	variants := max(len(bf.guilds), len(bf.models), 1)
	if bf.baseline != "" {
		variants++
	}
	if variants > 1 && !bf.compare {
		return fmt.Errorf("%d variants were given; add --compare to run them side by side", variants)
	}
	if bf.compare && variants != 2 {
		return errors.New("--compare needs two variants: --guild A --guild B, --model X --model Y, or --baseline crush|codex")
	}
	if bf.baseline != "" && !slices.Contains(bench.Baselines, bf.baseline) {
		return fmt.Errorf("--baseline %q is not one of %s", bf.baseline, strings.Join(bench.Baselines, ", "))
	}
	if bf.one != "" && bf.out == "" {
		return errors.New("--one needs --out DIR: the folder the result goes to (a volume, on a cluster)")
	}
	return nil
}

// pickOne keeps the benchmark --one names, by name or 0-based index.
func pickOne(benches []bench.Benchmark, one string) ([]bench.Benchmark, error) {
	if one == "" {
		return benches, nil
	}
	for _, b := range benches {
		if b.Name == one {
			return []bench.Benchmark{b}, nil
		}
	}
	if i, err := strconv.Atoi(strings.TrimPrefix(one, "#")); err == nil {
		if i < 0 || i >= len(benches) {
			return nil, fmt.Errorf("--one %s: the suite has %d benchmarks (indexes 0 to %d)", one, len(benches), len(benches)-1)
		}
		return []bench.Benchmark{benches[i]}, nil
	}
	names := make([]string, len(benches))
	for i, b := range benches {
		names[i] = b.Name
	}
	return nil, fmt.Errorf("--one %q: no such benchmark; the suite has %s", one, strings.Join(names, ", "))
}

func (bf *benchFlags) outDir() (string, error) {
	out := bf.out
	if out == "" {
		out = filepath.Join("bench-results", time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", fmt.Errorf("--out %s: %w", out, err)
	}
	return filepath.Abs(out)
}

// benchHarness resolves the variants, the sandbox and the records' seal.
// The guild and deployment are always the operator's: a benchmark's own
// guild/ or deployment.json is just a file of its workspace.
func benchHarness(ctx context.Context, common *commonFlags, bf *benchFlags) (*bench.Harness, error) {
	op, err := trust.Operator()
	if err != nil {
		return nil, &exitCodeError{code: exitError, err: err}
	}
	guilds := bf.guilds
	if len(guilds) == 0 {
		guilds = []string{""}
	}
	models := bf.models
	if len(models) == 0 {
		models = []string{""}
	}
	host := sandbox.NewHost()
	h := &bench.Harness{
		Repeat: bf.repeat, Jobs: bf.jobs, Effort: common.effort, Keep: bf.keep, Host: host, Timeout: bf.timeout,
		IsolateCaches: bf.isolateCaches, Redactor: common.keys.redactor(), Path: bf.path, WorkDir: bf.work,
		Sealer: op.Sealer,
	}
	if h.Path == "" {
		h.Path = bench.ScopedPath(os.Getenv("PATH"))
	}
	if h.Effort != "" && !runner.ValidEffort(h.Effort) {
		return nil, usageErr(fmt.Errorf("--effort %q is not one of quick, standard, thorough", h.Effort))
	}
	for _, g := range guilds {
		for _, m := range models {
			v, err := benchVariant(ctx, common, bf, op, g, m, len(guilds) > 1, len(models) > 1)
			if err != nil {
				return nil, err
			}
			h.Variants = append(h.Variants, v)
		}
	}
	d := h.Variants[0].Deployment
	if h.Policy, err = sandbox.NewPolicy(d.Sandbox); err != nil {
		return nil, usageErr(fmt.Errorf("%s: %w", d.Source, err))
	}
	if h.Policy.Confined() {
		if err := host.Check(h.Policy); err != nil {
			return nil, usageErr(err)
		}
	} else {
		fmt.Fprintln(os.Stderr, noneWarning)
		if h.Jobs > 1 {
			// Unconfined, the runs share this process as their subreaper:
			// one call's end would kill another run's programs.
			return nil, usageErr(fmt.Errorf("--jobs %d needs the sandbox: with --sandbox none the runs' processes are not apart; use --jobs 1", h.Jobs))
		}
	}
	if bf.baseline != "" {
		v, err := baselineVariant(bf.baseline, h.Variants[0], common)
		if err != nil {
			return nil, usageErr(err)
		}
		h.Variants = append(h.Variants, v)
	}
	return h, nil
}

// benchVariant is one guild with one model.
func benchVariant(ctx context.Context, common *commonFlags, bf *benchFlags, op trust.Dirs, guildDir, model string, nameGuild, nameModel bool) (bench.Variant, error) {
	var g *runner.Guild
	var err error
	switch opGuild, ok := operatorGuild(op); {
	case guildDir != "":
		g, err = guildFromDir(guildDir)
	case ok:
		g, err = guildFromDir(opGuild)
	default:
		g, err = seedGuild()
	}
	if err != nil {
		return bench.Variant{}, err
	}
	d, err := benchDeployment(common, op, g)
	if err != nil {
		return bench.Variant{}, err
	}
	if model != "" {
		d.Model.Name = model
		d.SetOrigin("model.name", "--model")
	}
	if common.sandbox.mode != "" {
		m, err := sandbox.ParseMode(common.sandbox.mode)
		if err != nil {
			return bench.Variant{}, usageErr(fmt.Errorf("--sandbox %q is not one of workspace-write, read-only, none", common.sandbox.mode))
		}
		d.Sandbox.Mode = string(m)
	}
	v := bench.Variant{Guild: g, Deployment: d}
	if d.Model.Provider == "script" {
		v.Provider = scriptFor(bf.scripts)
	} else {
		p, notes, err := newProvider(ctx, d, common.keys.forProvider(d.Model.Provider), "")
		if err != nil {
			return bench.Variant{}, err
		}
		for _, n := range notes {
			fmt.Fprintln(os.Stderr, "note:", render.SanitizeLine(n))
		}
		v.Provider = func(bench.Benchmark) (provider.Provider, error) { return p, nil }
		models, notes, err := benchModels(ctx, d, g, common.keys)
		if err != nil {
			return bench.Variant{}, err
		}
		for _, n := range notes {
			fmt.Fprintln(os.Stderr, "note:", render.SanitizeLine(n))
		}
		v.Models = models
	}
	v.Name = variantName(g, d, nameGuild, nameModel)
	return v, nil
}

func variantName(g *runner.Guild, d *runner.Deployment, nameGuild, nameModel bool) string {
	guild := filepath.Base(g.Path)
	switch {
	case nameModel && !nameGuild:
		if d.Model.Name == "" {
			return "model"
		}
		return d.Model.Name
	case nameGuild && nameModel:
		return guild + " · " + d.Model.Name
	}
	return guild
}

// benchDeployment is the operator's deployment (--deployment, else their
// own file over the defaults) fitted to the guild, with the flags and the
// environment over it.
func benchDeployment(common *commonFlags, op trust.Dirs, g *runner.Guild) (*runner.Deployment, error) {
	var d *runner.Deployment
	var err error
	if common.deployment != "" {
		file, _ := filepath.Abs(common.deployment)
		data, rerr := os.ReadFile(file)
		if rerr != nil {
			return nil, usageErr(&runner.ConfigError{File: common.deployment, Msg: "cannot read deployment file: " + rerr.Error()})
		}
		d, err = runner.ParseDeploymentOnto(nil, file, data)
	} else {
		d, err = operatorDeployment(op)
	}
	if err != nil {
		return nil, usageErr(err)
	}
	if d.Source == "built-in defaults" {
		d.FitToGuild(g)
	} else if err := d.CheckAgainstGuild(g); err != nil {
		return nil, usageErr(err)
	}
	if err := common.override(d); err != nil {
		return nil, err
	}
	return d, nil
}

// scriptFor plays the scripted model of each benchmark, a fresh one per
// run: DIR/<name>.json, else the benchmark's own script.json.
func scriptFor(dir string) func(bench.Benchmark) (provider.Provider, error) {
	if dir == "" {
		return bench.OwnScript
	}
	return func(b bench.Benchmark) (provider.Provider, error) {
		return bench.ScriptedModel(b.Name, filepath.Join(dir, b.Name+".json"))
	}
}

// baselineVariant drives crush or codex on the guild variant's endpoint
// and model.
func baselineVariant(program string, guild bench.Variant, common *commonFlags) (bench.Variant, error) {
	d := guild.Deployment
	if d.Model.Provider != "openai" && d.Model.Provider != "openai-responses" {
		return bench.Variant{}, fmt.Errorf("--baseline %s needs an OpenAI-compatible endpoint (--provider openai or openai-responses), not %q", program, d.Model.Provider)
	}
	exe, err := bench.FindBaseline(program, os.Getenv("PATH"))
	if err != nil {
		return bench.Variant{}, err
	}
	b := &bench.Baseline{Program: program, Exe: exe, Endpoint: d.Model.APIBase, Model: d.Model.Name,
		Key: common.keys.forProvider(d.Model.Provider), Responses: d.Model.Provider == "openai-responses",
		ContextWindow: d.Model.ContextWindow, MaxTokens: d.Model.Generation.MaxTokens, Sandbox: d.Sandbox}
	return bench.Variant{Name: program, Deployment: d, Baseline: b}, nil
}

func writeReport(out string, bf *benchFlags, rep *bench.Report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "report.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	html := bf.html
	if html == "-" || (html == "" && bf.one != "") {
		return nil
	}
	if html == "" {
		html = filepath.Join(out, "report.html")
	}
	f, err := os.Create(html)
	if err != nil {
		return fmt.Errorf("--html %s: %w", html, err)
	}
	if err := bench.WriteHTML(f, rep); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func printReport(w io.Writer, asJSON bool, rep *bench.Report) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	bench.WriteTable(w, rep)
	return nil
}

func newBenchMergeCmd() *cobra.Command {
	var asJSON bool
	var html, suite string
	cmd := &cobra.Command{
		Use:   "merge [flags] DIR...",
		Short: "Merge the result folders of benchmark runs into one report",
		Long: `Read every result file under the folders (what guildhall bench --one
TASK --out DIR wrote, on one machine or a cluster's volume) and print one
table, or the report as JSON; --html writes the HTML report.`,
		Args: args{min: 1, max: -1, what: "result folders", example: "guildhall bench merge results/"}.validate,
		RunE: func(cmd *cobra.Command, dirs []string) error {
			rep, err := bench.Merge(suite, dirs...)
			if err != nil {
				return &exitCodeError{code: exitError, err: err}
			}
			if html != "" {
				f, err := os.Create(html)
				if err != nil {
					return usageErr(fmt.Errorf("--html %s: %w", html, err))
				}
				if err := bench.WriteHTML(f, rep); err != nil {
					f.Close()
					return &exitCodeError{code: exitError, err: err}
				}
				if err := f.Close(); err != nil {
					return &exitCodeError{code: exitError, err: err}
				}
			}
			return printReport(cmd.OutOrStdout(), asJSON, rep)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the merged report as JSON")
	cmd.Flags().StringVar(&html, "html", "", "also write the HTML report to this file")
	cmd.Flags().StringVar(&suite, "suite", "merged results", "the suite's name in the report")
	return cmd
}

// progressPrinter shows a suite's progress on standard error: a live line
// on a terminal, one plain line per finished run otherwise.
type progressPrinter struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	width int
	last  bench.Status
	shown bool
}

func newProgressPrinter(w io.Writer) *progressPrinter {
	p := &progressPrinter{w: w}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
		if wd, _, err := term.GetSize(int(f.Fd())); err == nil {
			p.width = wd - 1
		}
	}
	return p
}

func (p *progressPrinter) update(st bench.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = st
	if p.tty {
		// The erase sequence is the program's own; the line is sanitised.
		fmt.Fprint(p.w, "\r\x1b[2K"+bench.ProgressLine(st, p.width))
		p.shown = true
	}
}

func (p *progressPrinter) result(r bench.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.last
	st.Done++
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[2K")
	}
	fmt.Fprintln(p.w, bench.ResultLine(r, st))
}

func (p *progressPrinter) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.shown {
		fmt.Fprint(p.w, "\r\x1b[2K")
	}
}
