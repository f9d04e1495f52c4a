package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// QuestionPenalty is what each ask_human costs a run's score (the
// original Foundry's humanQuestionPenalty).
const QuestionPenalty = 0.05

// Result is one run of one benchmark with one variant: what a JSON result
// file holds.
type Result struct {
	Benchmark  string `json:"benchmark"`
	Variant    string `json:"variant"`
	Repetition int    `json:"repetition"`
	Difficulty string `json:"difficulty,omitempty"`
	Language   string `json:"language,omitempty"`
	// Guild and Model say what ran (a baseline's Guild is its program).
	Guild string `json:"guild"`
	Model string `json:"model,omitempty"`
	// RoleModels names, per role, the model its instances ran on
	// ("qwen-7b (fast)" for one of the deployment's named models).
	RoleModels map[string]string `json:"roleModels,omitempty"`
	// Pass is the validation's verdict on the finished workspace,
	// whatever the run said about itself.
	Pass bool `json:"pass"`
	// Status is how the run ended: success, error, needs_clarification,
	// interrupted, timeout (the harness stopped it), or harness_error.
	Status string `json:"status"`
	RunID  string `json:"runId,omitempty"`
	Tokens Tokens `json:"tokens"`
	// Seconds is the run's wall time, validation excluded.
	Seconds float64 `json:"seconds"`
	// QuestionsAsked counts every ask_human; QuestionsAnswered those a
	// humanResponses entry answered.
	QuestionsAsked    int        `json:"questionsAsked"`
	QuestionsAnswered int        `json:"questionsAnswered"`
	Questions         []Exchange `json:"questions,omitempty"`
	ToolCalls         int        `json:"toolCalls"`
	ModelCalls        int        `json:"modelCalls"`
	// Score is pass (1 or 0) − QuestionPenalty × questions asked.
	Score      float64 `json:"score"`
	Validation *Check  `json:"validation,omitempty"`
	// Error is why the harness could not run or validate the benchmark.
	Error string `json:"error,omitempty"`
	// Summary is the run's own account (the entry role's finish summary):
	// model prose, shown escaped.
	Summary   string    `json:"summary,omitempty"`
	Workspace string    `json:"workspace,omitempty"`
	StartedAt time.Time `json:"startedAt"`
}

// SuccessButFailed reports a run that ended success but failed its
// validation: the sign of a model that claims work it did not do.
func (r Result) SuccessButFailed() bool {
	return r.Status == "success" && !r.Pass && r.Validation != nil
}

// Verdict is the validation's verdict as a word: pass, fail, or
// unchecked when the harness could not validate.
func (r Result) Verdict() string {
	switch {
	case r.Pass:
		return "pass"
	case r.Validation == nil:
		return "unchecked"
	}
	return "fail"
}

// SuccessButFailedName names those runs in the table and the report.
const SuccessButFailedName = "success, validation failed"

// Tokens are the token counts the endpoint reported.
type Tokens struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	Total      int `json:"total"`
}

// Add sums two counts.
func (t Tokens) Add(o Tokens) Tokens {
	return Tokens{Prompt: t.Prompt + o.Prompt, Completion: t.Completion + o.Completion, Total: t.Total + o.Total}
}

// RunScore is the score of one run.
func RunScore(pass bool, questions int) float64 {
	s := -QuestionPenalty * float64(questions)
	if pass {
		s++
	}
	return s
}

// Report is a whole suite's results.
type Report struct {
	Suite     string    `json:"suite"`
	StartedAt time.Time `json:"startedAt"`
	Seconds   float64   `json:"seconds"`
	Repeat    int       `json:"repeat"`
	Variants  []string  `json:"variants"`
	Results   []Result  `json:"results"`
}

// Aggregate is a set of runs summed up.
type Aggregate struct {
	Runs      int     `json:"runs"`
	Passes    int     `json:"passes"`
	PassRate  float64 `json:"passRate"`
	Score     float64 `json:"score"` // mean run score
	Tokens    Tokens  `json:"tokens"`
	Seconds   float64 `json:"seconds"`
	Questions int     `json:"questions"`
	ToolCalls int     `json:"toolCalls"`
	// SuccessButFailed counts the runs that ended success but failed
	// validation (Result.SuccessButFailed).
	SuccessButFailed int `json:"successValidationFailed"`
}

// MeanTokens is the mean total tokens per run.
func (a Aggregate) MeanTokens() float64 { return safeDiv(float64(a.Tokens.Total), a.Runs) }

// MeanSeconds is the mean wall time per run.
func (a Aggregate) MeanSeconds() float64 { return safeDiv(a.Seconds, a.Runs) }

func safeDiv(x float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return x / float64(n)
}

// Sum aggregates results.
func Sum(rs []Result) Aggregate {
	var a Aggregate
	score := 0.0
	for _, r := range rs {
		a.Runs++
		if r.Pass {
			a.Passes++
		}
		score += r.Score
		a.Tokens = a.Tokens.Add(r.Tokens)
		a.Seconds += r.Seconds
		a.Questions += r.QuestionsAsked
		a.ToolCalls += r.ToolCalls
		if r.SuccessButFailed() {
			a.SuccessButFailed++
		}
	}
	a.PassRate = safeDiv(float64(a.Passes), a.Runs)
	a.Score = safeDiv(score, a.Runs)
	return a
}

// Select returns the results of one variant (and one benchmark, unless
// bench is "").
func (r *Report) Select(variant, bench string) []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Variant == variant && (bench == "" || x.Benchmark == bench) {
			out = append(out, x)
		}
	}
	return out
}

// Benchmarks lists the benchmark names, sorted.
func (r *Report) Benchmarks() []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range r.Results {
		if !seen[x.Benchmark] {
			seen[x.Benchmark] = true
			out = append(out, x.Benchmark)
		}
	}
	sort.Strings(out)
	return out
}

// Ranked lists the variants best first: by pass rate, then score, then
// fewer tokens, then name.
func (r *Report) Ranked() []string {
	vs := append([]string(nil), r.Variants...)
	agg := map[string]Aggregate{}
	for _, v := range vs {
		agg[v] = Sum(r.Select(v, ""))
	}
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := agg[vs[i]], agg[vs[j]]
		switch {
		case a.PassRate != b.PassRate:
			return a.PassRate > b.PassRate
		case a.Score != b.Score:
			return a.Score > b.Score
		case a.Tokens.Total != b.Tokens.Total:
			return a.Tokens.Total < b.Tokens.Total
		}
		return vs[i] < vs[j]
	})
	return vs
}

// ResultFileName is where a run's JSON goes in a results folder.
func ResultFileName(r Result) string {
	return fmt.Sprintf("%s.%s.%d.json", slug(r.Variant), r.Benchmark, r.Repetition)
}

// WriteResult writes one run's JSON into dir.
func WriteResult(dir string, r Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, ResultFileName(r)), append(b, '\n'))
}

func writeAtomic(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// slug turns a variant label into a file-name part.
func slug(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), "._")
	if out == "" {
		out = "variant"
	}
	if len(out) > 60 {
		out = out[:60]
	}
	return out
}
