package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

const testGuild = "../../runner/testdata/original"

type cliResult struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := execute(args, strings.NewReader(stdin), &out, &errOut)
	return cliResult{code, out.String(), errOut.String()}
}

func readRun(t *testing.T, ws string) (*store.Meta, []event.Event) {
	t.Helper()
	w := store.Workspace{Dir: ws}
	ids, err := w.ListRunIDs()
	if err != nil || len(ids) == 0 {
		t.Fatalf("no run recorded in %s: %v", ws, err)
	}
	m, err := w.ReadMeta(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	path, _ := w.LogPath(ids[0])
	var evs []event.Event
	problems, err := store.ReadLog(path, func(seq int64, rec []byte) error {
		var e event.Event
		if err := json.Unmarshal(rec, &e); err != nil {
			return err
		}
		evs = append(evs, e)
		return nil
	})
	if err != nil || len(problems) != 0 {
		t.Fatalf("log: %v %v", err, problems)
	}
	return m, evs
}

// payloadsOf decodes the payloads of the events of type typ, in order.
func payloadsOf[T any](t *testing.T, evs []event.Event, typ event.Type) []T {
	t.Helper()
	var out []T
	for _, e := range evs {
		if e.Type != typ {
			continue
		}
		var p T
		if err := e.Decode(&p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// jsonEvents decodes the events of type typ from --json output.
func jsonEvents[T any](t *testing.T, stdout string, typ event.Type) []T {
	t.Helper()
	var evs []event.Event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event.Event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			evs = append(evs, e)
		}
	}
	return payloadsOf[T](t, evs, typ)
}

// logLine is the log line (newline included) of an event of type typ
// with payload p at at, as the writer lays it out.
func logLine(tb testing.TB, at time.Time, typ event.Type, p any) []byte {
	tb.Helper()
	ev, err := event.New(at, typ, p)
	if err != nil {
		tb.Fatal(err)
	}
	line, err := json.Marshal(ev)
	if err != nil {
		tb.Fatal(err)
	}
	return append(line, '\n')
}

// editJSON rewrites the JSON object in file with edit.
func editJSON(t *testing.T, file string, edit func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	edit(v)
	b, _ = json.Marshal(v)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func queueDelegation(f *fakellm.Server) {
	f.Queue("orchestrator",
		fakellm.Reply{Content: "I'll delegate.", Calls: []fakellm.Call{{Name: "agent", Args: map[string]string{"role": "coder", "task": "create notes.txt"}}}, CachedTokens: 64},
		fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "## Done\nnotes.txt exists", "artifacts": []string{"notes.txt"}}}}},
	)
	f.Queue("coder",
		fakellm.Reply{Reasoning: "I should write the file.", Calls: []fakellm.Call{{Name: "write_file", Args: map[string]string{"path": "notes.txt", "content": "hello\n"}}}},
		fakellm.Reply{Reasoning: "Now check it.", Calls: []fakellm.Call{{Name: "run_shell", Args: map[string]string{"command": "cat notes.txt"}}}},
		fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "wrote notes.txt"}}}},
	)
}

func TestWholeRunOverEachWireFormat(t *testing.T) {
	for _, prov := range []string{"openai", "openai-responses", "anthropic"} {
		t.Run(prov, func(t *testing.T) {
			f := fakellm.New()
			defer f.Close()
			queueDelegation(f)
			ws := t.TempDir()
			base := f.BaseURL()
			if prov == "anthropic" {
				base = f.URL
			}
			res := runCLI(t, "", "run", "--workspace", ws, "--guild", testGuild, "--provider", prov, "--base-url", base,
				"--model", "fake-model", "--effort", "quick", "--no-input", "Make notes")
			if res.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
			}
			if b, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(b) != "hello\n" {
				t.Fatalf("notes.txt = %q %v", b, err)
			}
			meta, evs := readRun(t, ws)
			if meta.Status != "success" || meta.Effort != "quick" || meta.Result.Summary != "## Done\nnotes.txt exists" {
				t.Fatalf("meta = %+v", meta)
			}
			var calls []event.LLMCallPayload
			for _, e := range evs {
				if e.Type == event.LLMCall {
					var p event.LLMCallPayload
					_ = e.Decode(&p)
					calls = append(calls, p)
				}
			}
			if len(calls) != 5 {
				t.Fatalf("llm_call events = %d, want 5", len(calls))
			}
			if calls[0].Usage.CachedPromptTokens != 64 || calls[0].Usage.PromptTokens == 0 {
				t.Fatalf("usage not recorded: %+v", calls[0].Usage)
			}
			if r := calls[1].Received; r == nil || r.Reasoning != "I should write the file." || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "write_file" {
				t.Fatalf("coder's first reply = %+v", calls[1].Received)
			}
			if !strings.Contains(res.stdout, "coder-1-2") || !strings.Contains(res.stdout, "write_file") {
				t.Fatalf("headless output lacks the coder's work:\n%s", res.stdout)
			}
			// What the fake received.
			orch := f.RequestsFor("orchestrator")
			if len(orch) != 2 || !strings.Contains(string(orch[0].Raw), "Quality level: quick") {
				t.Fatalf("orchestrator requests = %d; effort directive missing", len(orch))
			}
			coder := f.RequestsFor("coder")
			if strings.Contains(string(coder[0].Raw), "Quality level") {
				t.Fatal("the effort directive is for the entry role only")
			}
			raw := string(coder[0].Raw)
			for _, tool := range []string{"read_file", "write_file", "run_shell", "finish"} {
				if !strings.Contains(raw, `"`+tool+`"`) {
					t.Errorf("coder was not offered %s", tool)
				}
			}
			if strings.Contains(raw, `"agent"`) || strings.Contains(raw, `"ask_human"`) {
				t.Errorf("coder was offered tools it was not granted")
			}
			if strings.Contains(string(orch[0].Raw), `"write_file"`) {
				t.Errorf("orchestrator was offered write_file")
			}
			// The coder has includeReasoning: its second request carries
			// the first reply's reasoning (not for Anthropic, which needs
			// signatures Guildhall does not keep).
			if prov != "anthropic" && !strings.Contains(string(coder[1].Raw), "I should write the file.") {
				t.Errorf("reasoning was not sent back to a role with includeReasoning")
			}
			if strings.Contains(string(orch[1].Raw), "I should write the file.") {
				t.Errorf("a child's reasoning leaked into the parent's request")
			}
		})
	}
}

func TestContinuationRequestAndNoTechnicalDetail(t *testing.T) {
	f := fakellm.New()
	defer f.Close()
	f.Queue("orchestrator", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{
		"status": "error", "summary": "The deploy failed.",
		"error": map[string]any{"kind": "unavailable", "message": "Registry refused the push.", "details": map[string]string{"body": "TOKEN=abc123 internal trace"}}}}}})
	ws := t.TempDir()
	res := runCLI(t, "", "run", "--workspace", ws, "--guild", testGuild, "--base-url", f.BaseURL(), "--no-input", "Deploy it")
	if res.code != exitError {
		t.Fatalf("an error result exits 1, got %d: %s", res.code, res.stderr)
	}
	first, _ := readRun(t, ws)
	f.Queue("orchestrator", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "Deployed."}}}})
	res = runCLI(t, "", "run", "--workspace", ws, "--guild", testGuild, "--base-url", f.BaseURL(), "--no-input", "--continue", first.RunID, "Try again")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	second, _ := readRun(t, ws)
	if second.ContinuesFrom != first.RunID {
		t.Fatalf("continuesFrom = %q", second.ContinuesFrom)
	}
	req := f.RequestsFor("orchestrator")[1]
	msgs, _ := req.Body["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("continuation request has %d messages", len(msgs))
	}
	prior := msgs[2].(map[string]any)
	content, _ := prior["content"].(string)
	if prior["role"] != "assistant" || !strings.HasPrefix(content, "[Prior run result — status: error]") || prior["tool_calls"] != nil {
		t.Fatalf("prior result turn = %v", prior)
	}
	if !strings.Contains(content, "Registry refused the push.") || msgs[1].(map[string]any)["content"] != "Deploy it" {
		t.Fatalf("reference turns = %v", msgs[1:3])
	}
	if strings.Contains(string(req.Raw), "abc123") {
		t.Fatal("the error's technical detail entered model history")
	}
}

func TestExitCodes(t *testing.T) {
	f := fakellm.New()
	defer f.Close()
	ws := t.TempDir()
	f.Queue("orchestrator", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "needs_clarification", "summary": "Which file?"}}}})
	if res := runCLI(t, "", "run", "--workspace", ws, "--guild", testGuild, "--base-url", f.BaseURL(), "--no-input", "Fix it"); res.code != exitNeedsInput {
		t.Fatalf("needs_clarification exits 3, got %d", res.code)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--workspace", ws, "--effort", "extreme", "--guild", testGuild, "--base-url", f.BaseURL(), "x"}, `"extreme" is not one of`},
		{[]string{"run", "--workspace", filepath.Join(ws, "missing"), "x"}, "--workspace"},
		{[]string{"run", "--workspace", ws, "--provider", "gemini", "x"}, `"gemini"`},
		{[]string{"show", "--workspace", ws, "run-1"}, "run-YYYYMMDD-HHMMSS"},
		{[]string{"run", "--workspace", ws, "--guild", testGuild, "--base-url", f.BaseURL(), "--continue", "run-20000101-000000", "x"}, "--continue: no run run-20000101-000000 in this workspace"},
		{[]string{"check", "testdata/bad-guild"}, "guild.json:3:"},
		{[]string{"run", "--nope"}, "unknown flag"},
	}
	for _, c := range cases {
		res := runCLI(t, "", c.args...)
		if res.code != exitUsage || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v: exit %d stderr %q; want exit 2 naming %q", c.args, res.code, res.stderr, c.want)
		}
	}
}

func TestRunsAndShow(t *testing.T) {
	f := fakellm.New()
	defer f.Close()
	ws := t.TempDir()
	f.Queue("orchestrator", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "Title \x1b]0;pwned\x07 **bold**", "artifacts": []string{"a\x1b[31m.txt"}}}}})
	if res := runCLI(t, "", "run", "--workspace", ws, "--guild", testGuild, "--base-url", f.BaseURL(), "--no-input", "List \x1b[2J things"); res.code != 0 {
		t.Fatalf("exit %d %s", res.code, res.stderr)
	}
	list := runCLI(t, "", "runs", "--workspace", ws)
	show := runCLI(t, "", "show", "--workspace", ws, strings.Fields(strings.Split(list.stdout, "\n")[1])[0])
	for name, out := range map[string]string{"runs": list.stdout, "show": show.stdout} {
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s printed a control sequence: %q", name, out)
		}
	}
	if !strings.Contains(list.stdout, "success") || !strings.Contains(show.stdout, "bold") || !strings.Contains(show.stdout, "a.txt") {
		t.Fatalf("runs:\n%s\nshow:\n%s", list.stdout, show.stdout)
	}
}

// TestRejectionsOverEachWireFormat drives runs against a fake that rejects
// prompts above a size in each provider's own error format, with and
// without the prompt size in the error: the backstop compacts and the run
// finishes.
func TestRejectionsOverEachWireFormat(t *testing.T) {
	for _, prov := range []string{"openai", "openai-responses", "anthropic"} {
		for _, report := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/reported=%v", prov, report), func(t *testing.T) {
				f := fakellm.New()
				defer f.Close()
				// Six files: the same read six times in a row would be
				// stopped by the repetition check.
				var turns []fakellm.Reply
				for i := 0; i < 6; i++ {
					turns = append(turns, fakellm.Reply{Calls: []fakellm.Call{{Name: "read_file", Args: map[string]string{"path": fmt.Sprintf("big%d.txt", i)}}}})
				}
				turns = append(turns, fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "survived"}}}})
				f.Queue("orchestrator", turns...)
				f.MaxPromptChars, f.ReportTokens = 20000, report
				ws := t.TempDir()
				for i := 0; i < 6; i++ {
					if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("big%d.txt", i)), []byte(strings.Repeat("word ", 1500)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				dep := filepath.Join(t.TempDir(), "deployment.json")
				os.WriteFile(dep, []byte(`{"model": {"contextWindow": 4000, "generation": {"maxTokens": 500}}}`), 0o644)
				base := f.BaseURL()
				if prov == "anthropic" {
					base = f.URL
				}
				res := runCLI(t, "", "run", "--workspace", ws, "--guild", testGuild, "--deployment", dep, "--provider", prov,
					"--base-url", base, "--model", "fake-model", "--no-input", "Read it all")
				if res.code != 0 {
					t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
				}
				_, evs := readRun(t, ws)
				var rejected, compacted int
				for _, e := range evs {
					switch e.Type {
					case event.ContextBudgetExceeded:
						rejected++
					case event.ContextCompacted:
						compacted++
					}
				}
				if rejected == 0 || compacted == 0 {
					t.Fatalf("rejections %d, compactions %d; the fake's limit should have been hit", rejected, compacted)
				}
				for _, r := range f.RequestsFor("orchestrator") {
					if !strings.Contains(string(r.Raw), "Read it all") {
						t.Fatal("a compacted request lost the task")
					}
				}
			})
		}
	}
}
