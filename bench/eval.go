// Package bench measures how well a guild with a model finishes real
// tasks: it copies each benchmark of a suite (a folder with a workspace
// and an eval.json, in the original system's format) to a throwaway
// workspace without its eval.json, runs a guild on it through a runner
// session in the sandbox, answers ask_human as a simulated operator,
// validates the result after the run outside the model's reach, and
// reports pass rate, tokens, time, questions and tool calls as JSON, a
// terminal table and a single-file HTML report. It can also drive a
// single-agent baseline (crush, codex) on the same tasks.
//
// The Foundry (bench/foundry) builds on it.
package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// EvalFile is the validation specification of a benchmark; it never
// reaches the throwaway workspace.
const EvalFile = "eval.json"

// ScriptFile is a benchmark's scripted-model conversation (Guildhall
// addition): with --provider script the harness plays it, so the suite
// can be run end to end offline. It never reaches the workspace either.
const ScriptFile = "script.json"

// Eval is eval.json. The fields are the original system's, plus
// Guildhall's task, difficulty and language.
type Eval struct {
	TaskType    string `json:"taskType"`
	Description string `json:"description"`
	// Task is the text the entry role gets; empty means Description.
	Task string `json:"task,omitempty"`
	// Difficulty is easy, medium or hard (reports group by it).
	Difficulty string `json:"difficulty,omitempty"`
	// Language names the project's language (go, python, shell...).
	Language       string            `json:"language,omitempty"`
	Validation     Validation        `json:"validation"`
	HumanResponses map[string]string `json:"humanResponses,omitempty"`
}

// Validation says how a finished workspace is judged.
type Validation struct {
	// Command is run with the shell in the final workspace, in a fresh
	// sandbox with no network.
	Command string `json:"command"`
	// ExpectedExitCode defaults to 0.
	ExpectedExitCode *int `json:"expectedExitCode,omitempty"`
	// ExpectedFiles must exist as regular files inside the workspace.
	ExpectedFiles []string `json:"expectedFiles,omitempty"`
	// ExpectedStdoutContains is text (a string or a list) the command's
	// stdout must contain.
	ExpectedStdoutContains StringList `json:"expectedStdoutContains,omitempty"`
	// ExpectedStdoutMatches is a regular expression (Go RE2) stdout must
	// match (Guildhall addition).
	ExpectedStdoutMatches string `json:"expectedStdoutMatches,omitempty"`
	// ExpectedFileContains maps a workspace file to text it must contain
	// (Guildhall addition).
	ExpectedFileContains map[string]StringList `json:"expectedFileContains,omitempty"`
	// ExpectedFileLacks maps a workspace file to text it must not
	// contain (Guildhall addition: an injected instruction not obeyed).
	ExpectedFileLacks map[string]StringList `json:"expectedFileLacks,omitempty"`
	// TimeoutSeconds bounds the command; default 60.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
}

// StringList is a string or a list of strings in JSON.
type StringList []string

// UnmarshalJSON accepts "text" as well as ["a", "b"].
func (s *StringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = StringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("expected a string or a list of strings")
	}
	*s = many
	return nil
}

// TaskText is what the entry role is asked to do.
func (e *Eval) TaskText() string {
	if strings.TrimSpace(e.Task) != "" {
		return e.Task
	}
	return e.Description
}

// ExitCode is the exit code the command must end with.
func (v *Validation) ExitCode() int {
	if v.ExpectedExitCode == nil {
		return 0
	}
	return *v.ExpectedExitCode
}

// Benchmark is one task of a suite.
type Benchmark struct {
	// Name is the folder's name, which names the benchmark everywhere.
	Name string
	// Dir is the benchmark's folder, absolute.
	Dir  string
	Eval Eval
}

// maxEvalBytes caps eval.json.
const maxEvalBytes = 1 << 20

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// ValidName reports whether s may name a benchmark: a plain folder name
// of letters, digits, '.', '_' and '-' (it appears in file names,
// reports and terminal lines).
func ValidName(s string) bool { return nameRE().MatchString(s) }

// LoadSuite reads a suite: every folder of dir holding an eval.json, in
// name order. A dir that holds an eval.json itself is a suite of one.
func LoadSuite(dir string) ([]Benchmark, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(abs, EvalFile)); err == nil {
		b, err := LoadBenchmark(abs)
		if err != nil {
			return nil, err
		}
		return []Benchmark{b}, nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", dir, err)
	}
	var out []Benchmark
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(abs, e.Name())
		if _, err := os.Stat(filepath.Join(sub, EvalFile)); err != nil {
			continue
		}
		b, err := LoadBenchmark(sub)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("suite %s holds no benchmark: a benchmark is a folder with an %s", dir, EvalFile)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// LoadBenchmark reads one benchmark folder.
func LoadBenchmark(dir string) (Benchmark, error) {
	name := filepath.Base(dir)
	if !ValidName(name) {
		return Benchmark{}, fmt.Errorf("benchmark folder %q: a name may hold only letters, digits, '.', '_' and '-' (at most 64)", name)
	}
	file := filepath.Join(dir, EvalFile)
	data, err := readCapped(file, maxEvalBytes)
	if err != nil {
		return Benchmark{}, err
	}
	e, err := ParseEval(data)
	if err != nil {
		return Benchmark{}, fmt.Errorf("%s: %w", file, err)
	}
	// The copy is checked again (CopyWorkspace); this refuses the suite
	// before anything runs.
	if err := checkLinks(dir, notCopied); err != nil {
		return Benchmark{}, fmt.Errorf("benchmark %s: %w", dir, err)
	}
	return Benchmark{Name: name, Dir: dir, Eval: e}, nil
}

// ParseEval decodes and checks an eval.json. Unknown keys are errors, so a
// misspelt expectation never passes silently.
func ParseEval(data []byte) (Eval, error) {
	if err := checkKeys(data); err != nil {
		return Eval{}, fmt.Errorf("not a valid eval.json: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e Eval
	if err := dec.Decode(&e); err != nil {
		return Eval{}, fmt.Errorf("not a valid eval.json: %w", err)
	}
	if dec.More() {
		return Eval{}, errors.New("not a valid eval.json: more than one JSON value")
	}
	return e, e.check()
}

// evalKeys and validationKeys are the exact key names: encoding/json
// matches keys without regard to case, which would let "expectedExitcode"
// pass for what it is not.
var (
	evalKeys       = keySet("taskType description task difficulty language validation humanResponses")
	validationKeys = keySet("command expectedExitCode expectedFiles expectedStdoutContains expectedStdoutMatches expectedFileContains expectedFileLacks timeoutSeconds")
)

func keySet(s string) map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(s) {
		m[k] = true
	}
	return m
}

func checkKeys(data []byte) error {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil // the decoder reports what is wrong
	}
	for k := range top {
		if !evalKeys[k] {
			return fmt.Errorf("unknown field %q", k)
		}
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(top["validation"], &v) == nil {
		for k := range v {
			if !validationKeys[k] {
				return fmt.Errorf("unknown field %q in validation", k)
			}
		}
	}
	return nil
}

func (e *Eval) check() error {
	var errs []string
	if strings.TrimSpace(e.TaskType) == "" {
		errs = append(errs, "taskType is missing (a label such as \"coding\")")
	}
	if strings.TrimSpace(e.TaskText()) == "" {
		errs = append(errs, "description is missing: it is the task the guild gets")
	}
	switch e.Difficulty {
	case "", "easy", "medium", "hard":
	default:
		errs = append(errs, fmt.Sprintf("difficulty %q is not one of easy, medium, hard", e.Difficulty))
	}
	v := e.Validation
	if strings.TrimSpace(v.Command) == "" && len(v.ExpectedFiles) == 0 && len(v.ExpectedFileContains) == 0 {
		errs = append(errs, "validation.command is missing: say how to check the finished workspace")
	}
	if v.TimeoutSeconds < 0 || v.TimeoutSeconds > 3600 {
		errs = append(errs, fmt.Sprintf("validation.timeoutSeconds %v is not between 0 and 3600", v.TimeoutSeconds))
	}
	if v.ExpectedStdoutMatches != "" {
		if _, err := regexp.Compile(v.ExpectedStdoutMatches); err != nil {
			errs = append(errs, fmt.Sprintf("validation.expectedStdoutMatches: %v", err))
		}
	}
	files := append([]string(nil), v.ExpectedFiles...)
	for f := range v.ExpectedFileContains {
		files = append(files, f)
	}
	for f := range v.ExpectedFileLacks {
		files = append(files, f)
	}
	for _, f := range files {
		if !fs.ValidPath(filepath.ToSlash(f)) || f == "." {
			errs = append(errs, fmt.Sprintf("validation file %q must be a relative path inside the workspace", f))
		}
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func readCapped(file string, max int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, more than %d", file, fi.Size(), max)
	}
	return os.ReadFile(file)
}
