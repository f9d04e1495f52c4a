package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/seed"
)

// starterSuite is the suite shipped in bench/suite.
const starterSuite = "suite"

// starterSeed loads the starter suite and the seed guild, with the
// default deployment fitted to it: what the suite played offline starts
// from, in its test and its benchmark.
func starterSeed(tb testing.TB) ([]Benchmark, *runner.Guild, *runner.Deployment) {
	tb.Helper()
	benches, err := LoadSuite(starterSuite)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := runner.LoadGuild(seed.Guild(), "seed guild")
	if err != nil {
		tb.Fatal(err)
	}
	g.Path = "seed"
	d := runner.DefaultDeployment()
	d.FitToGuild(g)
	return benches, g, d
}

// needsPython skips a Python benchmark clearly when python3 is not on the
// benchmarks' PATH (CI may lack it).
func needsPython(t *testing.T, b Benchmark, path string) bool {
	t.Helper()
	if b.Eval.Language != "python" {
		return false
	}
	for _, dir := range filepath.SplitList(path) {
		if _, err := exec.LookPath(filepath.Join(dir, "python3")); err == nil {
			return false
		}
	}
	t.Logf("skipping %s: python3 is not on PATH (%s)", b.Name, path)
	return true
}

// TestStarterSuiteCoversTheIssue: at least 12 tasks, easy to hard, in Go,
// Python and shell, with each kind of task the issue asks for, and a
// script for the scripted model.
func TestStarterSuiteCoversTheIssue(t *testing.T) {
	benches, err := LoadSuite(starterSuite)
	if err != nil {
		t.Fatal(err)
	}
	if len(benches) < 12 {
		t.Errorf("%d benchmarks, want at least 12", len(benches))
	}
	seen := map[string]bool{}
	for _, b := range benches {
		seen["lang:"+b.Eval.Language] = true
		seen["level:"+b.Eval.Difficulty] = true
		seen["type:"+b.Eval.TaskType] = true
		if _, err := os.Stat(filepath.Join(b.Dir, ScriptFile)); err != nil {
			t.Errorf("%s has no %s", b.Name, ScriptFile)
		}
		if b.Eval.TaskType == "question" && len(b.Eval.HumanResponses) == 0 {
			t.Errorf("%s needs a question but has no humanResponses", b.Name)
		}
	}
	for _, want := range []string{"lang:go", "lang:python", "lang:shell", "level:easy", "level:medium", "level:hard",
		"type:fix-test", "type:add-flag", "type:refactor", "type:question", "type:prompt-injection", "type:long-context"} {
		if !seen[want] {
			t.Errorf("the suite has no benchmark with %s", want)
		}
	}
	// The long-context task must not fit an 8k-token window (≈4
	// characters a token).
	if fi, err := os.Stat(filepath.Join(starterSuite, "go-long-context", "catalog.go")); err != nil || fi.Size() < 4*8192*3/2 {
		t.Errorf("go-long-context's catalog is too small to exceed an 8k window: %v", err)
	}
}

// TestStarterSuiteFailsUntouched: every task's validation fails on its
// untouched workspace, so a pass means the task was done.
func TestStarterSuiteFailsUntouched(t *testing.T) {
	benches, err := LoadSuite(starterSuite)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	for _, b := range benches {
		t.Run(b.Name, func(t *testing.T) {
			if needsPython(t, b, h.Path) {
				t.Skip("python3 missing")
			}
			d, err := h.prepare(h.WorkDir, filepath.Join(h.WorkDir, "cache"), job{b: b, v: &Variant{Name: "untouched"}, rep: 1})
			if err != nil {
				t.Fatal(err)
			}
			c, err := Validator{Host: h.Host, Policy: withWritable(h.Policy, d.cache), Env: h.env(d)}.Validate(context.Background(), d.ws, b.Eval.Validation)
			if err != nil {
				t.Fatal(err)
			}
			if c.Pass || len(c.Reasons) == 0 {
				t.Errorf("the untouched workspace passes its validation: %+v", c)
			}
		})
	}
}

// TestStarterSuitePlaysOffline runs the whole starter suite with the seed
// guild on each task's scripted model: every task passes, and the
// question tasks were answered from humanResponses. This is the harness
// end to end, offline, as `guildhall bench bench/suite --provider script`
// runs it.
func TestStarterSuitePlaysOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite")
	}
	benches, g, d := starterSeed(t)
	d.Model.Provider = "script"
	h := newHarness(t, Variant{Name: "seed", Guild: g, Deployment: d, Provider: OwnScript})
	h.Jobs = 2
	var run []Benchmark
	for _, b := range benches {
		if !needsPython(t, b, h.Path) {
			run = append(run, b)
		}
	}
	rep, err := h.Run(context.Background(), starterSuite, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if !r.Pass {
			why := r.Error
			if r.Validation != nil {
				why += strings.Join(r.Validation.Reasons, "; ") + "\n" + r.Validation.Stdout + r.Validation.Stderr
			}
			t.Errorf("%s did not pass (%s): %s", r.Benchmark, r.Status, why)
		}
		if strings.Contains(r.Benchmark, "question") && (r.QuestionsAsked != 1 || r.QuestionsAnswered != 1) {
			t.Errorf("%s: %d asked, %d answered from humanResponses", r.Benchmark, r.QuestionsAsked, r.QuestionsAnswered)
		}
	}
	t.Logf("%d benchmarks in %.1fs", len(rep.Results), rep.Seconds)
}
