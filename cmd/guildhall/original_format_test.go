package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/render/labelset"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
)

// originalFormat is a workspace whose guild/ and deployment/deployment.json
// are written in the original system's format, using every field it
// accepts.
const originalFormat = "testdata/original-format"

const originalTask = "Give the CLI a --version flag."

// queueOriginalFormat programs the run: the orchestrator delegates to each
// role in turn; the researcher calls the web tools through the original's
// manifests, the coder the checkers, the inspection tool with kind regex
// and edit_context with a half-open range.
func queueOriginalFormat(f *fakellm.Server) {
	call := func(name string, args any) fakellm.Reply {
		return fakellm.Reply{Calls: []fakellm.Call{{Name: name, Args: args}}}
	}
	f.Queue("orchestrator",
		call("agent", map[string]string{"role": "researcher", "task": "find how other CLIs print their version"}),
		call("agent", map[string]string{"role": "coder", "task": "add the flag"}),
		call("agent", map[string]string{"role": "style_reviewer", "task": "review the change"}),
		call("finish", map[string]any{"status": "success", "summary": "The CLI prints its version.", "artifacts": []string{"VERSION"}}),
	)
	f.Queue("researcher",
		call("web_search", map[string]any{"query": "cli version flag", "limit": 3}),
		call("fetch_url", map[string]string{"url": "https://example.com/cli-conventions"}),
		call("finish", map[string]string{"status": "success", "summary": "Print the version and exit 0."}),
	)
	test := call("test", map[string]any{"commands": []string{"echo tests pass", "exit 3"}, "timeoutSeconds": 10})
	test.Reasoning = "R1: run the tests first."
	f.Queue("coder",
		test,
		call("search_role_blocks", map[string]string{"targetRole": "orchestrator-0-1", "pattern": `--v[a-z]+ion`, "kind": "regex"}),
		call("write_file", map[string]string{"path": "VERSION", "content": "1.0.0\n"}),
		call("edit_context", map[string]any{"operations": []map[string]any{{"op": "drop", "range": []int{2, 4}}}}),
		call("finish", map[string]string{"status": "success", "summary": "VERSION holds 1.0.0"}),
	)
	f.Queue("style_reviewer", call("finish", map[string]string{"status": "success", "summary": "Style is fine."}))
}

// sentMessages are the messages of a Chat Completions request.
func sentMessages(t *testing.T, r fakellm.Request) []map[string]any {
	t.Helper()
	raw, _ := r.Body["messages"].([]any)
	out := make([]map[string]any, len(raw))
	for i, m := range raw {
		out[i], _ = m.(map[string]any)
	}
	return out
}

// sentTools are the tools of a request, by name, with their descriptions.
func sentTools(r fakellm.Request) ([]string, map[string]string) {
	var names []string
	desc := map[string]string{}
	raw, _ := r.Body["tools"].([]any)
	for _, t := range raw {
		fn, _ := t.(map[string]any)["function"].(map[string]any)
		name, _ := fn["name"].(string)
		names = append(names, name)
		desc[name], _ = fn["description"].(string)
	}
	return names, desc
}

// toolResults are the tool messages of a request, in order.
func toolResults(t *testing.T, r fakellm.Request) []string {
	var out []string
	for _, m := range sentMessages(t, r) {
		if m["role"] == "tool" {
			s, _ := m["content"].(string)
			out = append(out, s)
		}
	}
	return out
}

func readFixture(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(originalFormat, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOriginalFormatGuildRunsEndToEnd runs the original-format workspace,
// trusted, against the fake provider, with the original's environment
// overrides, and checks what each role was sent and what was recorded.
func TestOriginalFormatGuildRunsEndToEnd(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(ws, os.DirFS(originalFormat)); err != nil {
		t.Fatal(err)
	}
	f := fakellm.New()
	defer f.Close()
	// No contextWindow in the file: the probe reports 131072, which
	// maxTokens 40000 fits (the built-in 32768 would not).
	f.ContextWindow = 131072
	queueOriginalFormat(f)
	t.Setenv("ORCHESTRATOR_API_BASE", f.BaseURL())
	t.Setenv("ORCHESTRATOR_TEMPERATURE", "0.3")

	res := runCLI(t, "", "run", "--workspace", ws, "--trust-workspace", "--no-input", originalTask)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	out := res.stdout + res.stderr
	for _, w := range []string{`guild warning: guild/guild.json:3:2: unknown key "$comment"`, `"playful"`, `tool "read_file" is declared again`, `"$schema"`, `"emoji"`} {
		if !strings.Contains(out, w) {
			t.Errorf("the run does not report the warning %q:\n%s", w, out)
		}
	}

	// Each role's system prompt and tools, as sent.
	prompts := map[string]string{
		"orchestrator":   readFixture(t, "guild/prompts/orchestrator.md"),
		"researcher":     readFixture(t, "guild/prompts/researcher.md"),
		"coder":          "[role:coder] You change the code.\n\n" + readFixture(t, "guild/prompts/style.md"),
		"style_reviewer": "[role:style_reviewer] You review style.\n\n" + readFixture(t, "STYLE.md"),
	}
	tools := map[string]string{
		"orchestrator":   "agent ask_human finish",
		"researcher":     "read_file web_search fetch_url finish",
		"coder":          "read_file write_file test typecheck search_role_blocks edit_context finish",
		"style_reviewer": "read_file finish",
	}
	for role, want := range prompts {
		reqs := f.RequestsFor(role)
		if len(reqs) == 0 {
			t.Fatalf("%s was never called", role)
		}
		first := reqs[0]
		got, _ := sentMessages(t, first)[0]["content"].(string)
		if role == "orchestrator" {
			// The entry role alone also has the effort directive, which
			// this provider sends in the same system message.
			got = strings.TrimSuffix(got, "\nQuality level: standard (one of quick, standard, thorough — quick is fastest and most direct; thorough is slowest and most careful).")
		}
		if got != want {
			t.Errorf("%s's system prompt:\n%q\nwant\n%q", role, got, want)
		}
		names, desc := sentTools(first)
		if strings.Join(names, " ") != tools[role] {
			t.Errorf("%s was offered %v, want %s", role, names, tools[role])
		}
		if d, ok := desc["read_file"]; ok && d != "Read a workspace file and return its text." {
			t.Errorf("%s got the first read_file declaration (%q); the last one wins", role, d)
		}
		if temp := first.Body["temperature"]; temp != 0.3 {
			t.Errorf("%s: temperature %v, want ORCHESTRATOR_TEMPERATURE's 0.3", role, temp)
		}
	}

	// The web tools of the original's manifests are Guildhall's.
	research := f.RequestsFor("researcher")
	if r := toolResults(t, research[2]); len(r) != 2 || !strings.Contains(r[0], "web_search is not configured") || !strings.Contains(r[1], "fetch_url may not reach example.com") {
		t.Errorf("the researcher's web tool results: %q", r)
	}

	coder := f.RequestsFor("coder")
	if len(coder) != 5 {
		t.Fatalf("coder requests = %d, want 5", len(coder))
	}
	// test: data is the original's array; reasoning is sent back (no
	// includeReasoning: the original always replays it).
	var tested struct {
		Kind string
		Data []struct {
			Command  string
			ExitCode *int
			Stdout   string
		}
	}
	if r := toolResults(t, coder[1]); len(r) != 1 || json.Unmarshal([]byte(r[0]), &tested) != nil {
		t.Fatalf("test's result as the coder read it: %q", r)
	}
	if tested.Kind != "success" || len(tested.Data) != 2 || tested.Data[0].Command != "echo tests pass" || tested.Data[0].Stdout != "tests pass\n" ||
		tested.Data[1].ExitCode == nil || *tested.Data[1].ExitCode != 3 {
		t.Errorf("test's data: %+v", tested)
	}
	if !strings.Contains(string(coder[1].Raw), "R1: run the tests first.") {
		t.Errorf("the coder's reasoning was not sent back")
	}
	// search_role_blocks {pattern, kind: "regex"} found the regex in the
	// orchestrator's task, message 1.
	var found struct {
		Data struct {
			Matches []struct {
				Index   int
				Snippet string
			}
		}
	}
	if r := toolResults(t, coder[2]); len(r) != 2 || json.Unmarshal([]byte(r[1]), &found) != nil || len(found.Data.Matches) != 1 ||
		found.Data.Matches[0].Index != 1 || !strings.Contains(found.Data.Matches[0].Snippet, "--version") {
		t.Errorf("search_role_blocks with kind regex: %q", r)
	}
	// edit_context {range: [2, 4]} dropped messages 2 and 3 (the test call
	// and its result), no more.
	before, after := sentMessages(t, coder[3]), sentMessages(t, coder[4])
	if !strings.Contains(string(coder[3].Raw), "echo tests pass") || strings.Contains(string(coder[4].Raw), "echo tests pass") || len(after) != len(before)+2-2 {
		t.Errorf("edit_context [2, 4): %d messages before, %d after", len(before), len(after))
	}
	if r := toolResults(t, coder[4]); len(r) == 0 || !strings.Contains(r[len(r)-1], `"messageCount"`) {
		t.Errorf("edit_context's result: %q", r)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "VERSION")); err != nil || string(b) != "1.0.0\n" {
		t.Errorf("VERSION = %q %v", b, err)
	}

	checkOriginalRecords(t, ws)
}

// checkOriginalRecords checks the run's records against what the
// original's readers accept, and the deployment's logging level.
func checkOriginalRecords(t *testing.T, ws string) {
	t.Helper()
	meta, evs := readRun(t, ws)
	if meta.Status != store.StatusSuccess || meta.LogLevel != "standard" || meta.GuildPath != filepath.Join(ws, "guild") {
		t.Errorf("meta: status %q, logLevel %q (deployment logging.level is standard), guildPath %q", meta.Status, meta.LogLevel, meta.GuildPath)
	}
	dir := filepath.Join(ws, ".orchestration", "runs", meta.RunID)
	raw, err := os.ReadFile(filepath.Join(dir, store.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if problem := originalRejectsMeta(raw); problem != "" {
		t.Errorf("the original's isRunMeta would reject Guildhall's meta: %s\n%s", problem, raw)
	}
	children := 0
	for _, e := range evs {
		switch e.Type {
		case event.RoleStart:
			var p map[string]any
			_ = json.Unmarshal(e.Payload, &p)
			if p["depth"].(float64) > 0 {
				children++
				if p["parentRoleId"] != "orchestrator-0-1" || p["parent"] != "orchestrator" {
					t.Errorf("role_start of a child lacks the original's parentRoleId: %s", e.Payload)
				}
			}
		case event.RoleFinished, event.AgentCall:
			var p map[string]any
			_ = json.Unmarshal(e.Payload, &p)
			if p["parent"] == "orchestrator" && p["parentRoleId"] != "orchestrator-0-1" {
				t.Errorf("%s lacks the original's parentRoleId: %s", e.Type, e.Payload)
			}
		case event.LLMCall:
			var p map[string]any
			_ = json.Unmarshal(e.Payload, &p)
			if _, ok := p["sent"]; ok {
				t.Errorf("llm_call at log level standard carries its bodies: %s", e.Payload)
			}
		}
	}
	if children != 3 {
		t.Errorf("%d child role starts, want 3", children)
	}
}

// originalRejectsMeta applies the checks of the original's isRunMeta (its
// validation.ts) to a meta.json, with its status and error-kind lists; ""
// when it would accept it.
func originalRejectsMeta(raw []byte) string {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "not a JSON object"
	}
	str := func(k string) (string, bool) { s, ok := m[k].(string); return s, ok }
	optStr := func(k string) bool { _, present := m[k]; _, ok := m[k].(string); return !present || ok }
	if _, ok := str("runId"); !ok {
		return "runId"
	}
	if !optStr("guildPath") || !optStr("benchmarkPath") || !optStr("endTime") {
		return "guildPath, benchmarkPath or endTime is not a string"
	}
	if _, ok := str("task"); !ok {
		return "task"
	}
	if e, present := m["effort"]; present && e != "quick" && e != "standard" && e != "thorough" {
		return "effort"
	}
	if l, present := m["logLevel"]; present && l != "full" && l != "standard" {
		return "logLevel"
	}
	if c, present := m["continuesFrom"]; present && (c == nil || store.CheckRunID(c.(string)) != nil) {
		return "continuesFrom"
	}
	switch m["status"] {
	case "running", "success", "error", "needs_clarification", "interrupted":
	default:
		return "status"
	}
	if _, ok := str("startTime"); !ok {
		return "startTime"
	}
	kinds := map[string]bool{"invalid_tool_call": true, "unknown_tool": true, "invalid_arguments": true, "timeout": true, "llm_unavailable": true,
		"unavailable": true, "context_budget_exceeded": true, "context_handoff": true, "tool_budget_exceeded": true, "loop_detected": true,
		"interrupted": true, "compaction_failed": true, "permission_denied": true}
	if r, present := m["result"]; present {
		card, ok := r.(map[string]any)
		if !ok {
			return "result"
		}
		switch card["status"] {
		case "success", "error", "needs_clarification":
		default:
			return "result.status"
		}
		if _, ok := card["summary"].(string); !ok {
			return "result.summary"
		}
		if e, present := card["error"]; present {
			ce, ok := e.(map[string]any)
			if k, _ := ce["kind"].(string); !ok || !kinds[k] {
				return "result.error.kind"
			}
		}
	}
	if e, present := m["error"]; present {
		me, ok := e.(map[string]any)
		if k, _ := me["kind"].(string); !ok || !kinds[k] {
			return "error.kind"
		}
		if _, ok := me["message"].(string); !ok {
			return "error.message"
		}
	}
	return ""
}

// TestOriginalFormatCheck: check reports the format's warnings and passes;
// --strict refuses them; the labels build from its visualization.
func TestOriginalFormatCheck(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(ws, os.DirFS(originalFormat)); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, "", "check", "--workspace", ws, "--trust-workspace")
	if res.code != 0 || strings.Count(res.stdout, "warning: ") != 5 || !strings.Contains(res.stdout, "deployment deployment/deployment.json: ok") {
		t.Fatalf("check: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, "", "check", "--workspace", ws, "--strict")
	if res.code != exitUsage || !strings.Contains(res.stderr, "5 warning(s), which --strict makes errors") || !strings.Contains(res.stderr, `guild/guild.json:22:5: unknown key "playful"`) {
		t.Fatalf("check --strict: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	w, err := tools.OpenWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	g, err := runner.LoadGuildIn(w.ConfigFS("", 1<<20, nil), "guild", "guild")
	if err != nil {
		t.Fatal(err)
	}
	labels, err := labelset.FromGuild(g)
	if err != nil {
		t.Fatalf("the original's visualization section: %v", err)
	}
	if got := labels.Visualization.PseudoRoleLabels["human"].Friendly; len(got) != 1 || got[0] != "You" {
		t.Errorf("pseudo-role label of the human: %v", got)
	}
}
