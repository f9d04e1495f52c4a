package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/guildhall/guildhall/internal/sandboxtest"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools/sandbox"
)

var testKey = bytes.Repeat([]byte{7}, 32)

// testGuild is a one-role guild granting tools.
func testGuild(t testing.TB, name string, tools ...string) *runner.Guild {
	t.Helper()
	list, _ := json.Marshal(tools)
	g, err := runner.LoadGuild(fstest.MapFS{
		"guild.json":      {Data: []byte(`{"entryRole": "solo", "roles": {"solo": {"systemPrompt": "prompts/solo.md", "tools": ` + string(list) + `}}}`)},
		"prompts/solo.md": {Data: []byte("You are solo. Do the task, then finish.\n")},
	}, name)
	if err != nil {
		t.Fatal(err)
	}
	g.Path = name
	return g
}

// writeBench writes a benchmark folder: files plus eval.json and, when
// given, script.json.
func writeBench(t testing.TB, dir, name string, files map[string]string, eval, script string) {
	t.Helper()
	root := filepath.Join(dir, name)
	files[EvalFile] = eval
	if script != "" {
		files[ScriptFile] = script
	}
	for p, body := range files {
		f := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// twoTaskSuite is a task that needs a file written and one that needs a
// question answered first; both scripts write with write_file.
func twoTaskSuite(t testing.TB) string {
	dir := t.TempDir()
	writeBench(t, dir, "greet", map[string]string{"README.md": "Write hello.txt saying hello.\n"},
		`{"taskType": "coding", "description": "Write hello.txt containing the word hello.", "difficulty": "easy",
		  "validation": {"command": "grep -q hello hello.txt && echo greeted", "expectedFiles": ["hello.txt"], "expectedStdoutContains": "greeted"}}`,
		`{"roles": {"solo": [
		   {"content": "writing", "toolCalls": [{"name": "write_file", "arguments": {"path": "hello.txt", "content": "hello\n"}}], "usage": {"promptTokens": 100, "completionTokens": 10}},
		   {"content": "", "toolCalls": [{"name": "finish", "arguments": {"status": "success", "summary": "wrote it"}}], "usage": {"promptTokens": 120, "completionTokens": 5}}]}}`)
	writeBench(t, dir, "name", map[string]string{"README.md": "Greet the person the operator names.\n"},
		`{"taskType": "coding", "description": "Write name.txt with the name of the person to greet; ask who it is.",
		  "humanResponses": {"Who should I greet?": "Ada"},
		  "validation": {"command": "cat name.txt", "expectedStdoutMatches": "^Ada\\n?$", "expectedFileLacks": {"name.txt": ["Bob"]}}}`,
		`{"roles": {"solo": [
		   {"content": "asking", "toolCalls": [{"name": "ask_human", "arguments": {"question": "who should i greet"}}], "usage": {"promptTokens": 50, "completionTokens": 5}}]},
		  "branches": {"solo": [{"name": "answered", "when": ["\"answer\":\"(?P<who>[A-Za-z]+)\""],
		   "turns": [
		     {"content": "", "toolCalls": [{"name": "write_file", "arguments": {"path": "name.txt", "content": "{{who}}\n"}}], "usage": {"promptTokens": 60, "completionTokens": 5}},
		     {"content": "", "toolCalls": [{"name": "finish", "arguments": {"status": "success", "summary": "greeted {{who}}"}}], "usage": {"promptTokens": 70, "completionTokens": 5}}]}]}}`)
	return dir
}

func newHarness(t *testing.T, variants ...Variant) *Harness {
	host := sandbox.NewHost()
	return &Harness{
		Variants: variants, Host: host, Policy: sandboxtest.Policy(t, host), Path: ScopedPath(os.Getenv("PATH")),
		Sealer:  func(dir string) (*store.Sealer, error) { return store.NewSealer(testKey, dir), nil },
		WorkDir: t.TempDir(), Effort: "quick",
	}
}

func variant(t *testing.T, name string, tools ...string) Variant {
	d := runner.DefaultDeployment()
	g := testGuild(t, name, tools...)
	d.FitToGuild(g)
	return Variant{Name: name, Guild: g, Deployment: d, Provider: OwnScript}
}

// TestHarnessPassingAndFailingGuilds runs the same scripted model with a
// guild that lets it write and one that does not: the first passes both
// tasks (answering the question from humanResponses), the second none,
// and the table and the comparison put the passing guild first although
// it was listed second.
func TestHarnessPassingAndFailingGuilds(t *testing.T) {
	suite := twoTaskSuite(t)
	benches, err := LoadSuite(suite)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t,
		variant(t, "readonly", "read_file", "ask_human", "finish"),
		variant(t, "writer", "read_file", "write_file", "ask_human", "finish"))
	h.Jobs = 2
	var mu sync.Mutex
	var seen []Result
	h.OnResult = func(r Result) { mu.Lock(); seen = append(seen, r); mu.Unlock() }
	rep, err := h.Run(context.Background(), suite, benches)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 4 || len(seen) != 4 {
		t.Fatalf("want 4 results, got %d (%d reported)", len(rep.Results), len(seen))
	}
	get := func(v, b string) Result { return rep.Select(v, b)[0] }
	w := get("writer", "name")
	if !w.Pass || w.QuestionsAsked != 1 || w.QuestionsAnswered != 1 || w.Questions[0].Answer != "Ada" {
		t.Errorf("writer/name: %+v", w)
	}
	if w.Tokens != (Tokens{Prompt: 180, Completion: 15, Total: 195}) || w.ModelCalls != 3 || w.ToolCalls != 3 {
		t.Errorf("writer/name counts: tokens %+v, %d model calls, %d tool calls", w.Tokens, w.ModelCalls, w.ToolCalls)
	}
	if w.Score != 0.95 {
		t.Errorf("score = %v, want 1 − 0.05", w.Score)
	}
	if g := get("writer", "greet"); !g.Pass || g.Status != "success" || g.Validation.Stdout != "greeted\n" {
		t.Errorf("writer/greet: %+v", g)
	}
	r := get("readonly", "greet")
	if r.Pass || len(r.Validation.Reasons) == 0 || !strings.Contains(r.Validation.Reasons[0], "hello.txt: missing") {
		t.Errorf("readonly/greet passed or says why not badly: %+v", r.Validation)
	}
	if rn := get("readonly", "name"); rn.Pass || rn.Score != -0.05 {
		t.Errorf("readonly/name: pass %v score %v", rn.Pass, rn.Score)
	}
	var out bytes.Buffer
	WriteTable(&out, rep)
	table := out.String()
	lines := strings.Split(table, "\n")
	if !strings.HasPrefix(lines[0], "BENCHMARK") || !strings.Contains(lines[0], "PASS writer") ||
		strings.Index(lines[0], "PASS writer") > strings.Index(lines[0], "PASS readonly") {
		t.Errorf("header does not put the passing guild first:\n%s", table)
	}
	for _, b := range []string{"greet", "name"} {
		row := findLine(lines, b+" ")
		if f := strings.Fields(row); len(f) < 8 || f[1] != "1/1" || f[7] != "0/1" {
			t.Errorf("row %q: want writer 1/1 then readonly 0/1", row)
		}
	}
	if !strings.Contains(table, "1. writer: pass rate 100.0% (2/2), score 0.97") || !strings.Contains(table, "2. readonly: pass rate 0.0% (0/2), score -0.03") {
		t.Errorf("summary lines:\n%s", table)
	}
	if !strings.Contains(table, "writer − readonly: pass rate +100.0 points") {
		t.Errorf("no comparison note:\n%s", table)
	}
	// The throwaway workspaces are gone; only the build cache stays in a
	// work folder of the caller's, for the next suite.
	left, _ := os.ReadDir(h.WorkDir)
	for _, e := range left {
		if e.Name() != "cache" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func findLine(lines []string, prefix string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestWorkspaceHasNoEvalAndScopedEnvironment keeps a run's workspace and
// checks what the model could see: no eval.json or script.json, and a
// PATH without relative entries.
func TestWorkspaceHasNoEvalAndScopedEnvironment(t *testing.T) {
	dir := t.TempDir()
	writeBench(t, dir, "env", map[string]string{"x.txt": "x"},
		`{"taskType": "coding", "description": "Record the environment.", "validation": {"command": "test -f env.txt"}}`,
		`{"roles": {"solo": [
		   {"content": "", "toolCalls": [{"name": "run_shell", "arguments": {"command": "ls -a > listing.txt; echo \"$PATH|$HOME|$TMPDIR\" > env.txt"}}]},
		   {"content": "", "toolCalls": [{"name": "finish", "arguments": {"status": "success", "summary": "ok"}}]}]}}`)
	benches, err := LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, variant(t, "shell", "run_shell", "finish"))
	h.Keep = true
	h.Path = "/usr/bin:/bin"
	rep, err := h.Run(context.Background(), dir, benches)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if !r.Pass {
		t.Fatalf("%+v %+v", r, r.Validation)
	}
	listing, _ := os.ReadFile(filepath.Join(r.Workspace, "listing.txt"))
	if strings.Contains(string(listing), "eval.json") || strings.Contains(string(listing), "script.json") || !strings.Contains(string(listing), "x.txt") {
		t.Errorf("workspace listing:\n%s", listing)
	}
	env, _ := os.ReadFile(filepath.Join(r.Workspace, "env.txt"))
	f := strings.Split(strings.TrimSpace(string(env)), "|")
	if len(f) != 3 || f[0] != "/usr/bin:/bin" || f[2] != "/tmp" {
		t.Errorf("environment inside: %q", env)
	}
	if home, _ := os.UserHomeDir(); len(f) == 3 && f[1] != home && !strings.HasPrefix(f[1], "/tmp") {
		t.Errorf("HOME inside the sandbox is %q", f[1])
	}
}

func TestScopedPathDropsRelativeAndHiddenEntries(t *testing.T) {
	home, _ := os.UserHomeDir()
	got := ScopedPath(strings.Join([]string{".", "", "/usr/bin", "relative/bin", "/nonexistent-dir", "/usr/bin", home + "/bin", os.TempDir(), "/bin"}, ":"))
	if got != "/usr/bin:/bin" {
		t.Errorf("ScopedPath = %q", got)
	}
}
