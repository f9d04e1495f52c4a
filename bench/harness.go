package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/guildhall/guildhall/internal/rmtree"
	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// Variant is one thing being measured: a guild with a model, or a
// single-agent baseline program with a model.
type Variant struct {
	// Name labels the variant in tables, reports and file names.
	Name       string
	Guild      *runner.Guild
	Deployment *runner.Deployment
	// Provider returns the model for one run of b: a fresh scripted model
	// per run, or a network provider shared by every run.
	Provider func(b Benchmark) (provider.Provider, error)
	// Models are the endpoints of the deployment's named models the
	// guild's roles run on (a model per role), shared by every run.
	Models map[string]runner.ModelEndpoint
	// Baseline, when set, runs that program instead of the guild.
	Baseline *Baseline
}

// OwnScript is a Variant's Provider that plays each benchmark's own
// script.json: a fresh scripted model per run, so runs never share a
// script's place.
func OwnScript(b Benchmark) (provider.Provider, error) {
	return ScriptedModel(b.Name, filepath.Join(b.Dir, ScriptFile))
}

// ScriptedModel is a fresh scripted model playing the script in file, for
// the benchmark named name.
func ScriptedModel(name, file string) (provider.Provider, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("the scripted model needs a script for %s: %w", name, err)
	}
	s, err := provider.ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return provider.NewScripted(s, 0), nil
}

// Harness runs a suite. Fields left zero take the defaults noted.
type Harness struct {
	Variants []Variant
	// Repeat is the number of runs per benchmark and variant (1).
	Repeat int
	// Jobs is how many runs go at once (1); each has its own workspace,
	// session and sandbox.
	Jobs int
	// Effort is the quality level every run gets ("standard").
	Effort string
	// WorkDir holds the throwaway workspaces; "" makes a temporary one.
	WorkDir string
	// Keep leaves the workspaces in place after the runs.
	Keep bool
	// Host is the process's sandbox host; Policy confines the
	// validation commands (the runs use their deployment's).
	Host   *sandbox.Host
	Policy sandbox.Policy
	// Path is the PATH every run and validation gets: absolute folders
	// only, none inside a workspace (ScopedPath makes one).
	Path string
	// Sealer seals each throwaway workspace's records.
	Sealer   func(dir string) (*store.Sealer, error)
	Redactor *store.Redactor
	// Timeout bounds one run (0: none); a run past it is terminated and
	// validated as it stands.
	Timeout time.Duration
	// IsolateCaches gives every run its own build caches instead of one
	// shared by the suite's runs (slower, no channel between runs).
	IsolateCaches bool
	// Progress is told of every change (from any goroutine, serialised).
	Progress func(Status)
	// OnResult gets each result as its run is validated (serialised).
	OnResult func(Result)
	// Now is the clock (tests pin it).
	Now func() time.Time
}

// Status is the state of a suite being run, for a progress display.
type Status struct {
	Total, Done, Passed int
	Running             []Activity
}

// Activity is one run in progress.
type Activity struct {
	Benchmark, Variant string
	Repetition         int
	// Doing is the latest role and tool, such as "coder: run_shell".
	Doing string
}

type job struct {
	b   Benchmark
	v   *Variant
	rep int
}

// Run runs every benchmark Repeat times with every variant and returns
// the report. A cancelled ctx stops the runs in progress (their results
// say so) and starts no more.
func (h *Harness) Run(ctx context.Context, suite string, benches []Benchmark) (*Report, error) {
	if len(h.Variants) == 0 || len(benches) == 0 {
		return nil, errors.New("nothing to run: no variant or no benchmark")
	}
	now := h.Now
	if now == nil {
		now = time.Now
	}
	work, cleanup, err := h.workDir()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	// A WorkDir of the caller's keeps the build cache between suites, so
	// only the first compiles the standard library.
	cache := filepath.Join(work, "cache")
	if h.WorkDir != "" {
		cache = filepath.Join(h.WorkDir, "cache")
	}
	rep := &Report{Suite: suite, StartedAt: now().UTC(), Repeat: max(h.Repeat, 1)}
	for _, v := range h.Variants {
		rep.Variants = append(rep.Variants, v.Name)
	}
	var jobs []job
	// Variants alternate within each benchmark, so a suite cut short
	// still compares like with like.
	for r := 1; r <= rep.Repeat; r++ {
		for _, b := range benches {
			for i := range h.Variants {
				jobs = append(jobs, job{b: b, v: &h.Variants[i], rep: r})
			}
		}
	}
	p := &progress{h: h, st: Status{Total: len(jobs)}}
	p.report()
	results := make([]Result, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(max(h.Jobs, 1), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = h.runJob(ctx, work, cache, jobs[i], p)
				p.finish(jobs[i], results[i])
			}
		}()
	}
	for i := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	for _, r := range results {
		if r.Benchmark != "" {
			rep.Results = append(rep.Results, r)
		}
	}
	rep.Seconds = now().Sub(rep.StartedAt).Seconds()
	return rep, ctx.Err()
}

func (h *Harness) workDir() (string, func(), error) {
	if h.WorkDir != "" {
		if err := os.MkdirAll(h.WorkDir, 0o700); err != nil {
			return "", nil, err
		}
		dir, err := os.MkdirTemp(h.WorkDir, "bench-")
		return dir, h.cleanup(dir), err
	}
	dir, err := os.MkdirTemp("", "guildhall-bench-")
	return dir, h.cleanup(dir), err
}

func (h *Harness) cleanup(dir string) func() {
	return func() {
		if !h.Keep && dir != "" {
			_ = rmtree.RemoveAll(dir)
		}
	}
}

// runDirs are one run's folders.
type runDirs struct {
	root, ws, home, tmp, cache string
}

func (h *Harness) prepare(work, cache string, j job) (runDirs, error) {
	root := filepath.Join(work, fmt.Sprintf("%s.%s.%d", slug(j.v.Name), j.b.Name, j.rep))
	d := runDirs{root: root, ws: filepath.Join(root, "workspace"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp"),
		cache: cache}
	if h.IsolateCaches {
		d.cache = filepath.Join(root, "cache")
	}
	for _, p := range []string{d.home, d.tmp, d.cache} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			return d, err
		}
	}
	if err := CopyWorkspace(j.b.Dir, d.ws); err != nil {
		return d, err
	}
	var err error
	d.ws, err = filepath.EvalSymlinks(d.ws)
	if err == nil {
		d.cache, err = filepath.EvalSymlinks(d.cache)
	}
	return d, err
}

// env is the base environment of one run's tools and its validation: a
// scoped PATH, HOME and TMPDIR, and build caches outside the workspace.
// The sandbox replaces HOME and TMPDIR with its own; with the sandbox off
// these are the run's.
func (h *Harness) env(d runDirs) []string {
	return []string{
		"PATH=" + h.Path, "HOME=" + d.home, "TMPDIR=" + d.tmp, "LANG=C.UTF-8", "TZ=UTC",
		"GOCACHE=" + filepath.Join(d.cache, "go-build"), "GOTOOLCHAIN=local",
		"PYTHONDONTWRITEBYTECODE=1",
	}
}

func (h *Harness) runJob(ctx context.Context, work, cache string, j job, p *progress) Result {
	res := Result{Benchmark: j.b.Name, Variant: j.v.Name, Repetition: j.rep, Difficulty: j.b.Eval.Difficulty,
		Language: j.b.Eval.Language, StartedAt: time.Now().UTC()}
	if j.v.Guild != nil {
		res.Guild = j.v.Guild.Path
	}
	if j.v.Deployment != nil {
		res.Model = j.v.Deployment.Model.Name
	}
	p.start(j)
	d, err := h.prepare(work, cache, j)
	if err != nil {
		return h.failed(res, "prepare the workspace", err)
	}
	if h.Keep {
		res.Workspace = d.ws
	}
	op := NewOperator(j.b.Eval.HumanResponses)
	start := time.Now()
	if j.v.Baseline != nil {
		err = h.runBaseline(ctx, j, d, &res)
	} else {
		err = h.runGuild(ctx, j, d, op, &res, func(doing string) { p.doing(j, doing) })
	}
	res.Seconds = time.Since(start).Seconds()
	res.QuestionsAsked, res.QuestionsAnswered = op.Counts()
	res.Questions = op.Exchanges()
	if err != nil {
		return h.failed(res, "run", err)
	}
	p.doing(j, "validating")
	va := Validator{Host: h.Host, Policy: h.validationPolicy(d), Env: h.env(d)}
	// The validation runs even when ctx was cancelled: a stopped run is
	// judged as it stands.
	vctx := context.WithoutCancel(ctx)
	check, err := va.Validate(vctx, d.ws, j.b.Eval.Validation)
	if err != nil {
		return h.failed(res, "validate", err)
	}
	res.Validation = &check
	res.Pass = check.Pass
	res.Score = RunScore(res.Pass, res.QuestionsAsked)
	return res
}

// validationPolicy is the validations' sandbox: the harness's policy with
// the shared build cache writable.
func (h *Harness) validationPolicy(d runDirs) sandbox.Policy {
	return withWritable(h.Policy, d.cache)
}

func withWritable(p sandbox.Policy, dir string) sandbox.Policy {
	if !p.Confined() {
		return p
	}
	c := sandbox.Config{Mode: string(p.Mode()), Network: string(p.Network()), Allow: p.Allow().Patterns(), Writable: append(p.Writable(), dir), ReadOnly: p.ReadOnly(), Limits: p.Limits()}
	if q, err := sandbox.NewPolicy(c); err == nil {
		return q
	}
	return p
}

func (h *Harness) failed(res Result, what string, err error) Result {
	res.Status = "harness_error"
	res.Error = what + ": " + err.Error()
	res.Score = RunScore(false, res.QuestionsAsked)
	return res
}

// runGuild runs the variant's guild on the workspace through a runner
// session, as any client does: the guild and deployment are the
// operator's (the benchmark's own files are only files), questions go to
// the simulated operator, and the events give the counts.
func (h *Harness) runGuild(ctx context.Context, j job, d runDirs, op *Operator, res *Result, doing func(string)) error {
	prov, err := j.v.Provider(j.b)
	if err != nil {
		return err
	}
	dep := *j.v.Deployment
	dep.Sandbox.Writable = append(append([]string(nil), dep.Sandbox.Writable...), d.cache)
	if mode := dep.Sandbox.Mode; mode == string(sandbox.None) {
		dep.Sandbox.Writable = nil
	}
	// Python's bytecode cache is keyed by mtime and size: an edit within
	// the same second that keeps the size (- to +) would run the stale
	// code, and fail a run for what the environment did.
	dep.Executor.PassEnv = append(append([]string(nil), dep.Executor.PassEnv...), "PYTHONDONTWRITEBYTECODE")
	var sealer *store.Sealer
	if h.Sealer != nil {
		if sealer, err = h.Sealer(d.ws); err != nil {
			return err
		}
	}
	sess, err := runner.OpenSession(runner.SessionConfig{
		Workspace: d.ws, Sealer: sealer, Redactor: h.Redactor, Guild: j.v.Guild, Deployment: &dep,
		Provider: quietSummaries{prov}, Models: j.v.Models, Sandbox: h.Host, Environ: h.env(d),
	})
	if err != nil {
		return err
	}
	defer sess.Close()
	_, sub := sess.SubscribeLossless(512)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		follow(sub, sess, op, res, doing)
	}()
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	effort := h.Effort
	if effort == "" {
		effort = "standard"
	}
	id, err := sess.Submit(runCtx, runner.Submission{Task: j.b.Eval.TaskText(), Effort: effort})
	if err != nil {
		sub.Close()
		<-followed
		return err
	}
	res.RunID = id
	out, err := h.wait(ctx, sess, id, res)
	sub.Close()
	<-followed
	if err != nil {
		return err
	}
	if res.Status == "" {
		res.Status = out.Status
		if out.Stopped {
			res.Status = store.StatusInterrupted
		}
	}
	if out.Card != nil {
		res.Summary = clip(out.Card.Summary, 2000)
	}
	return nil
}

// wait waits for the run, terminating it at the timeout or when ctx ends;
// a terminated run still ends with its record intact.
func (h *Harness) wait(ctx context.Context, sess *runner.Session, id string, res *Result) (runner.Outcome, error) {
	done := make(chan struct{})
	var out runner.Outcome
	var err error
	go func() {
		out, err = sess.Wait(context.Background())
		close(done)
	}()
	var timeout <-chan time.Time
	if h.Timeout > 0 {
		t := time.NewTimer(h.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-done:
		return out, err
	case <-timeout:
		res.Status = "timeout"
	case <-ctx.Done():
		res.Status = store.StatusInterrupted
	}
	_ = sess.Terminate(id)
	<-done
	return out, err
}

// follow counts a run's tokens, model and tool calls from its events,
// answers its questions as the simulated operator, and reports what it
// is doing.
func follow(sub *runner.Subscription, sess *runner.Session, op *Operator, res *Result, doing func(string)) {
	handle := func(e event.Event) {
		switch e.Type {
		case event.LLMCall:
			var p event.LLMCallPayload
			if e.Decode(&p) == nil {
				res.ModelCalls++
				res.Tokens = res.Tokens.Add(Tokens{Prompt: p.Usage.PromptTokens, Completion: p.Usage.CompletionTokens,
					Total: p.Usage.PromptTokens + p.Usage.CompletionTokens})
			}
		case event.RoleStart:
			var p event.RoleStartPayload
			if e.Decode(&p) == nil {
				if label := render.ModelLabel(p.Model, p.ModelRef); label != "" {
					if res.RoleModels == nil {
						res.RoleModels = map[string]string{}
					}
					res.RoleModels[p.Role] = label
				}
			}
		case event.ToolCall:
			var p event.ToolCallPayload
			if e.Decode(&p) == nil {
				res.ToolCalls++
				doing(p.Role + ": " + p.Tool)
			}
		case event.AskHuman:
			var p event.AskHumanPayload
			if e.Decode(&p) == nil {
				ex := op.Answer(p.Question)
				_ = sess.Answer(p.ID, ex.Answer, "bench")
			}
		}
	}
	for e, ok := sub.Next(); ok; e, ok = sub.Next() {
		handle(e)
	}
}

// quietSummaries answers the runner's raw summariser calls (summary.txt)
// itself: a benchmark's record needs no model-written summary, and those
// calls would spend the endpoint's time and tokens outside the counts.
type quietSummaries struct{ provider.Provider }

func (q quietSummaries) Complete(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	if req.Role == "" {
		return &provider.Response{Content: "Benchmark run", FinishReason: "stop", Model: "bench"}, nil
	}
	return q.Provider.Complete(ctx, req, onDelta)
}

// progress serialises the status updates.
type progress struct {
	h  *Harness
	mu sync.Mutex
	st Status
}

func (p *progress) report() {
	if p.h.Progress != nil {
		st := p.st
		st.Running = append([]Activity(nil), p.st.Running...)
		p.h.Progress(st)
	}
}

func (p *progress) start(j job) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.Running = append(p.st.Running, Activity{Benchmark: j.b.Name, Variant: j.v.Name, Repetition: j.rep, Doing: "starting"})
	p.report()
}

func (p *progress) doing(j job, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, a := range p.st.Running {
		if a.Benchmark == j.b.Name && a.Variant == j.v.Name && a.Repetition == j.rep {
			p.st.Running[i].Doing = what
		}
	}
	p.report()
}

func (p *progress) finish(j job, r Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	run := p.st.Running[:0]
	for _, a := range p.st.Running {
		if a.Benchmark != j.b.Name || a.Variant != j.v.Name || a.Repetition != j.rep {
			run = append(run, a)
		}
	}
	p.st.Running = run
	p.st.Done++
	if r.Pass {
		p.st.Passed++
	}
	if p.h.OnResult != nil {
		p.h.OnResult(r)
	}
	p.report()
}

// ScopedPath is the PATH benchmarks get: the absolute entries of path
// that are existing folders outside the operator's home and the
// temporary folder (which the sandbox hides anyway), without repeats. A
// relative entry ("." or empty) would let a workspace's own "go" or "ls"
// shadow the real one, so none survives.
func ScopedPath(path string) string {
	var out []string
	seen := map[string]bool{}
	hidden := []string{os.TempDir(), "/tmp", "/run", "/home", "/root"}
	if home, err := os.UserHomeDir(); err == nil {
		hidden = append(hidden, home)
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) || seen[dir] {
			continue
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		skip := false
		for _, h := range hidden {
			if h != "" && (dir == h || strings.HasPrefix(dir, strings.TrimRight(h, "/")+"/")) {
				skip = true
			}
		}
		if !skip {
			seen[dir] = true
			out = append(out, dir)
		}
	}
	return strings.Join(out, string(os.PathListSeparator))
}
