package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestParseEval(t *testing.T) {
	cases := []struct {
		name, doc, err string
	}{
		{"original format", `{"taskType": "coding", "description": "Implement factorial.", "humanResponses": {"Q?": "A."},
		  "validation": {"command": "python3 -m unittest", "expectedExitCode": 0, "expectedFiles": ["src/f.py"], "expectedStdoutContains": ["OK"], "timeoutSeconds": 60}}`, ""},
		{"stdout text as a string", `{"taskType": "t", "description": "d", "validation": {"command": "c", "expectedStdoutContains": "ok"}}`, ""},
		{"misspelt key", `{"taskType": "t", "description": "d", "validation": {"command": "c", "expectedExitcode": 0}}`, `unknown field "expectedExitcode"`},
		{"no task", `{"taskType": "t", "validation": {"command": "c"}}`, "description is missing"},
		{"no check", `{"taskType": "t", "description": "d", "validation": {}}`, "validation.command is missing"},
		{"bad regexp", `{"taskType": "t", "description": "d", "validation": {"command": "c", "expectedStdoutMatches": "("}}`, "expectedStdoutMatches"},
		{"file outside", `{"taskType": "t", "description": "d", "validation": {"command": "c", "expectedFiles": ["../x"]}}`, `"../x" must be a relative path`},
		{"absolute file", `{"taskType": "t", "description": "d", "validation": {"command": "c", "expectedFileContains": {"/etc/passwd": "root"}}}`, "must be a relative path"},
		{"difficulty", `{"taskType": "t", "description": "d", "difficulty": "brutal", "validation": {"command": "c"}}`, `difficulty "brutal"`},
		{"timeout", `{"taskType": "t", "description": "d", "validation": {"command": "c", "timeoutSeconds": -1}}`, "timeoutSeconds"},
		{"stdout list of numbers", `{"taskType": "t", "description": "d", "validation": {"command": "c", "expectedStdoutContains": [1]}}`, "string or a list of strings"},
		{"two documents", `{"taskType": "t", "description": "d", "validation": {"command": "c"}} {}`, "more than one JSON value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseEval([]byte(c.doc))
			if c.err == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("error %v, want it to mention %q", err, c.err)
			}
		})
	}
}

func TestLoadSuiteNamesTheBadBenchmark(t *testing.T) {
	dir := t.TempDir()
	writeBench(t, dir, "good", map[string]string{}, `{"taskType": "t", "description": "d", "validation": {"command": "true"}}`, "")
	writeBench(t, dir, "bad", map[string]string{}, `{"taskType": "t"}`, "")
	_, err := LoadSuite(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "bad", EvalFile)) {
		t.Fatalf("error %v does not name bad/eval.json", err)
	}
	if _, err := LoadSuite(t.TempDir()); err == nil || !strings.Contains(err.Error(), "holds no benchmark") {
		t.Errorf("empty suite: %v", err)
	}
	weird := filepath.Join(t.TempDir(), "a b;rm")
	writeBench(t, filepath.Dir(weird), filepath.Base(weird), map[string]string{}, `{"taskType": "t", "description": "d", "validation": {"command": "true"}}`, "")
	if _, err := LoadBenchmark(weird); err == nil || !strings.Contains(err.Error(), "letters, digits") {
		t.Errorf("a name with spaces and ';' was accepted: %v", err)
	}
}

func TestOperatorMatchesNearExactQuestions(t *testing.T) {
	op := NewOperator(map[string]string{
		"What language should I use?":     "Go.",
		"Should I handle negative input?": "Yes, return an error.",
	})
	cases := map[string]string{
		"What language should I use?":        "Go.",
		"what language should i use":         "Go.",
		"Which language should I use?":       "Go.",
		"  What   language should I use ?!":  "Go.",
		"Should I handle negative inputs?":   "Yes, return an error.",
		"Should I delete the tests?":         JudgementAnswer,
		"What should I name the new module?": JudgementAnswer,
		"":                                   JudgementAnswer,
	}
	for q, want := range cases {
		if got := op.Answer(q).Answer; got != want {
			t.Errorf("%q answered %q, want %q", q, got, want)
		}
	}
	asked, answered := op.Counts()
	if asked != len(cases) || answered != 5 {
		t.Errorf("counts %d asked, %d answered", asked, answered)
	}
	if NewOperator(nil).Answer("Anything?").Answer != JudgementAnswer {
		t.Error("an operator without responses did not use its judgement answer")
	}
}

func TestCopyWorkspace(t *testing.T) {
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(src, EvalFile), []byte("{}"), 0o644))
	must(os.WriteFile(filepath.Join(src, ScriptFile), []byte("{}"), 0o644))
	must(os.MkdirAll(filepath.Join(src, ".orchestration", "runs"), 0o755))
	must(os.MkdirAll(filepath.Join(src, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(src, "sub", EvalFile), []byte("nested, kept"), 0o644))
	must(os.WriteFile(filepath.Join(src, "run.sh"), []byte("#!/bin/sh\n"), 0o4755))
	must(os.Symlink("run.sh", filepath.Join(src, "inside")))
	dst := filepath.Join(t.TempDir(), "ws")
	must(CopyWorkspace(src, dst))
	for _, gone := range []string{EvalFile, ScriptFile, ".orchestration"} {
		if _, err := os.Lstat(filepath.Join(dst, gone)); err == nil {
			t.Errorf("%s reached the workspace", gone)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "sub", EvalFile)); string(b) != "nested, kept" {
		t.Errorf("a nested eval.json is a workspace file and should be copied")
	}
	fi, err := os.Stat(filepath.Join(dst, "run.sh"))
	if err != nil || fi.Mode()&os.ModeSetuid != 0 || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh mode %v: want executable without setuid", fi.Mode())
	}
	if l, _ := os.Readlink(filepath.Join(dst, "inside")); l != "run.sh" {
		t.Errorf("an inside link became %q", l)
	}
	for name, target := range map[string]string{"abs": "/etc/passwd", "up": "../../secret", "sneaky": "sub/../../x"} {
		bad := t.TempDir()
		must(os.Symlink(target, filepath.Join(bad, name)))
		err := CopyWorkspace(bad, filepath.Join(t.TempDir(), "ws"))
		if err == nil || !strings.Contains(err.Error(), "link out of the benchmark") {
			t.Errorf("link %s -> %s: %v", name, target, err)
		}
	}
}

// reportOf builds a report from pass patterns: per variant, per
// benchmark, one verdict per repetition.
func reportOf(pattern map[string][]string) *Report {
	r := &Report{Suite: "s"}
	for v, benches := range pattern {
		r.Variants = append(r.Variants, v)
		for i, reps := range benches {
			for k, c := range reps {
				r.Results = append(r.Results, Result{Benchmark: fmt.Sprintf("b%02d", i), Variant: v, Repetition: k + 1, Pass: c == '1', Score: RunScore(c == '1', 0)})
			}
		}
	}
	return r
}

func TestCompareBootstrap(t *testing.T) {
	strong := reportOf(map[string][]string{
		"guild": {"111", "111", "111", "110", "111", "111", "011", "111", "111", "111", "101", "111"},
		"solo":  {"000", "100", "000", "000", "010", "000", "000", "001", "000", "000", "000", "000"},
	})
	c := Compare(strong, "solo", "guild")
	if c.A != "guild" || c.B != "solo" || !c.Significant() || c.Low <= 0 || c.High > c.Diff+0.2 {
		t.Errorf("a clear win: %+v", c)
	}
	if d := c.RateA - c.RateB; d != c.Diff || c.RateA != 33.0/36 || c.RateB != 3.0/36 {
		t.Errorf("rates %v − %v = %v", c.RateA, c.RateB, c.Diff)
	}
	if !strings.Contains(c.Note(), "the interval excludes 0") {
		t.Errorf("note: %s", c.Note())
	}
	same := reportOf(map[string][]string{
		"a": {"110", "011", "101", "100", "010", "001", "111", "000"},
		"b": {"011", "110", "100", "101", "001", "010", "000", "111"},
	})
	c = Compare(same, "a", "b")
	if c.Significant() || c.Low >= 0 || c.High <= 0 || !strings.Contains(c.Note(), "may be noise") {
		t.Errorf("equal variants: %+v %s", c, c.Note())
	}
	if again := Compare(same, "a", "b"); again != c {
		t.Error("the interval is not reproducible")
	}
}

func TestHTMLReportEscapesAndFetchesNothing(t *testing.T) {
	hostile := `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	r := reportOf(map[string][]string{"guild " + hostile: {"1", "0"}, "https://evil.example/x": {"0", "0"}})
	r.Results[0].Summary = hostile
	r.Results[1].Validation = &Check{Reasons: []string{"stdout lacks " + hostile}}
	r.Suite = hostile
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", "<img", "<link", "@import", "url("} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	allowed := map[string]bool{}
	for _, tag := range strings.Fields("html head meta title style body h1 h2 p table tr th td span svg text rect br details summary pre") {
		allowed[tag] = true
	}
	for _, m := range regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9]*)`).FindAllStringSubmatch(page, -1) {
		if !allowed[strings.ToLower(m[1])] {
			t.Errorf("the page has a <%s> element", m[1])
		}
	}
	if strings.Count(page, "http://www.w3.org/2000/svg") != 4 || strings.Count(page, "<svg") != 4 {
		t.Errorf("want four inline plots")
	}
	if !strings.Contains(page, "Content-Security-Policy") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("no CSP, or the hostile text is not shown escaped")
	}
	if strings.Contains(page, `href="https://evil`) {
		t.Error("a variant name became a link")
	}
}

func TestMerge(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range []Result{
		{Benchmark: "x", Variant: "seed", Repetition: 1, Pass: true, Score: 1, Seconds: 2},
		{Benchmark: "y", Variant: "seed", Repetition: 1, Seconds: 3},
	} {
		if err := WriteResult([]string{a, b}[i], r); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Merge("suite", a, b)
	if err != nil {
		t.Fatal(err)
	}
	if agg := Sum(rep.Select("seed", "")); agg.Runs != 2 || agg.Passes != 1 || rep.Seconds != 5 {
		t.Errorf("merged %+v", agg)
	}
	if err := WriteResult(b, Result{Benchmark: "x", Variant: "seed", Repetition: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge("suite", a, b); err == nil || !strings.Contains(err.Error(), "hold the same run") {
		t.Errorf("a duplicate run: %v", err)
	}
	if err := os.WriteFile(filepath.Join(a, "notes.json"), []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge("suite", a); err == nil || !strings.Contains(err.Error(), "notes.json is not a benchmark result") {
		t.Errorf("a stray file: %v", err)
	}
}
