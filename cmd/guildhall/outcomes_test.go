package main

// What the model did, not what it said (issue 28), on the real binary
// against the fake endpoint's real wire: tool calls written as text in
// every format are run or corrected and the operator is told; a run whose
// model never acted never ends success; an empty reply, repeated, ends the
// run error; `show` reads a failing command as failed.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// writerGuild is a one-role guild whose role may write files and run
// commands, but not commit.
func writerGuild(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"guild.json": `{"entryRole":"solo","roles":{"solo":{"systemPrompt":"prompts/solo.md",` +
			`"tools":["read_file","write_file","run_shell","test","finish"]}}}`,
		"prompts/solo.md": "[role:solo] You work alone.",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		mkdirs(t, filepath.Dir(p))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func finishReply(status, summary string) fakellm.Reply {
	return fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": status, "summary": summary}}}}
}

// runWriter runs the binary on a fresh workspace against f.
func runWriter(t *testing.T, h *hostile, f *fakellm.Server, task string) (string, result) {
	t.Helper()
	ws := h.workspace(strings.NewReplacer(" ", "-", "/", "-").Replace(t.Name()))
	res := h.run(ws, 2*time.Minute, "run", "--workspace", ws, "--guild", writerGuild(t), "--base-url", f.BaseURL(),
		"--model", "fake-model", "--no-input", task)
	return ws, res
}

// TestBinaryRunsToolCallsWrittenAsText: a call in each format that names
// a granted tool with valid arguments runs; its tool_call is marked as
// text; the operator reads once that the endpoint returns tool calls as
// text, and the usual cause.
func TestBinaryRunsToolCallsWrittenAsText(t *testing.T) {
	h := newHostile(t)
	for _, format := range fakellm.TextFormats() {
		t.Run(format, func(t *testing.T) {
			f := fakellm.New()
			defer f.Close()
			f.Queue("solo", fakellm.TextCall(format, "write_file", map[string]string{"path": "CONTRIBUTING.md", "content": "# Contributing\n"}),
				fakellm.TextCall(format, "read_file", map[string]string{"path": "CONTRIBUTING.md"}),
				finishReply("success", "Added CONTRIBUTING.md."))
			ws, res := runWriter(t, h, f, "Add a CONTRIBUTING.md file")
			if res.code != exitOK {
				t.Fatalf("%s", res)
			}
			if b, err := os.ReadFile(filepath.Join(ws, "CONTRIBUTING.md")); err != nil || string(b) != "# Contributing\n" {
				t.Fatalf("CONTRIBUTING.md = %q, %v: the call was not run\n%s", b, err, res)
			}
			if n := strings.Count(res.stdout, "returns tool calls as text"); n != 1 {
				t.Errorf("the operator is told %d times, want once:\n%s", n, res.stdout)
			}
			for _, want := range []string{"read them and ran them", "llama-server started without --jinja", "a chat template without tools", "→ write_file", "← write_file success"} {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
				}
			}
			_, evs := readRun(t, ws)
			marked := 0
			for _, p := range payloadsOf[event.ToolCallPayload](t, evs, event.ToolCall) {
				if p.AsText != "" {
					marked++
				}
			}
			if marked != 2 {
				t.Errorf("%d tool calls marked as text, want 2", marked)
			}
		})
	}
}

// TestBinaryCorrectsToolCallsItCannotRun: a call written as text to a tool
// the role lacks is answered with a reminder, twice; the third time the
// run ends error (invalid_tool_call), nothing ran, and the operator is
// told once.
func TestBinaryCorrectsToolCallsItCannotRun(t *testing.T) {
	h := newHostile(t)
	for _, format := range fakellm.TextFormats() {
		t.Run(format, func(t *testing.T) {
			f := fakellm.New()
			defer f.Close()
			bad := fakellm.TextCall(format, "git_commit", map[string]string{"message": "add file"})
			f.Queue("solo", bad, bad, bad, finishReply("success", "never reached"))
			ws, res := runWriter(t, h, f, "Commit the work")
			if res.code != exitError {
				t.Fatalf("want exit %d:\n%s", exitError, res)
			}
			for _, want := range []string{"invalid_tool_call", "did not run them", "run error"} {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
				}
			}
			if n := strings.Count(res.stdout, "returns tool calls as text"); n != 1 {
				t.Errorf("told %d times:\n%s", n, res.stdout)
			}
			reqs := f.RequestsFor("solo")
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			if !strings.Contains(string(reqs[2].Raw), "Call tools through the API; this reply contained a tool call as text") {
				t.Errorf("the third request carries no reminder")
			}
			m, _ := readRun(t, ws)
			if m.Status != "error" || m.Error == nil || m.Error.Kind != "invalid_tool_call" {
				t.Errorf("meta %s %+v", m.Status, m.Error)
			}
		})
	}
}

// TestBinaryNeverActedIsNotSuccess: the model that writes its calls as
// text, is told, and then claims the work in words ends error; one that
// only sends markup, or nothing, ends error/empty_reply within the retry
// bound; one that just answers is a success that says it did nothing.
func TestBinaryNeverActedIsNotSuccess(t *testing.T) {
	h := newHostile(t)
	cases := []struct {
		name    string
		replies []fakellm.Reply
		code    int
		want    []string
	}{
		{"claims after a refused call", []fakellm.Reply{fakellm.TextCall(fakellm.Hermes, "git_commit", map[string]string{}),
			{Content: "Sure! I have added the CONTRIBUTING.md file."}}, exitError, []string{"[invalid_tool_call]", "run error"}},
		{"markup only", []fakellm.Reply{fakellm.MarkupOnly(), fakellm.MarkupOnly(), fakellm.MarkupOnly(), finishReply("success", "never")},
			exitError, []string{"only markup or template tokens", "[empty_reply]", "run error"}},
		{"empty", []fakellm.Reply{{}, {Content: " \n "}, {}, finishReply("success", "never")},
			exitError, []string{"[empty_reply]", "run error"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fakellm.New()
			defer f.Close()
			f.Queue("solo", c.replies...)
			_, res := runWriter(t, h, f, "Add a CONTRIBUTING.md file")
			if res.code != c.code {
				t.Fatalf("want exit %d:\n%s", c.code, res)
			}
			for _, w := range c.want {
				if !strings.Contains(res.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, res.stdout)
				}
			}
			if strings.Contains(res.stdout, "run success") {
				t.Errorf("a model that never acted ended success:\n%s", res.stdout)
			}
		})
	}
}

// TestBinaryShowSaysWhatFailed: `show` on a run whose command exited 1
// reads it as failed, with the counts the test runner printed; on a run
// whose model answered in words at once, it says the model did nothing.
func TestBinaryShowSaysWhatFailed(t *testing.T) {
	h := newHostile(t)
	f := fakellm.New()
	defer f.Close()
	f.Queue("solo", fakellm.Reply{Calls: []fakellm.Call{{Name: "test", Args: map[string]any{"commands": []string{"printf 'ok a\\nFAIL b\\n\\n4 passed, 2 failed\\n'; exit 1"}}}}},
		finishReply("success", "The tests pass."))
	ws, res := runWriter(t, h, f, "Fix the tests")
	if res.code != exitOK || !strings.Contains(res.stdout, "← test ✗ failed: 4 passed, 2 failed · exit 1") {
		t.Fatalf("%s", res)
	}
	m, _ := readRun(t, ws)
	show := h.run(ws, 0, "show", m.RunID)
	if show.code != 0 {
		t.Fatalf("%s", show)
	}
	for _, want := range []string{"Activity", "1 tool call, 1 failed", "\n  solo-0-1 ← test ✗ failed: 4 passed, 2 failed · exit 1\n"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, show.stdout)
		}
	}
	if strings.Contains(show.stdout, render.NoActionText) {
		t.Errorf("the run acted:\n%s", show.stdout)
	}

	f.Queue("solo", fakellm.Reply{Content: "Hello! The tests look fine to me."})
	ws, res = runWriter(t, h, f, "Are the tests fine?")
	if res.code != exitOK {
		t.Fatalf("%s", res)
	}
	m, _ = readRun(t, ws)
	show = h.run(ws, 0, "show", m.RunID)
	if !strings.Contains(show.stdout, render.NoActionText) || !strings.Contains(show.stdout, "0 tool calls, 0 failed") {
		t.Errorf("show does not say the model did nothing:\n%s", show.stdout)
	}
}

// TestShowActivityReadsInterruptedAsInterrupted: `show` on the log of a
// run whose coder's command failed and which a plan change stopped lists
// the failed command and the coder as interrupted, not as an error.
func TestShowActivityReadsInterruptedAsInterrupted(t *testing.T) {
	ws := store.Workspace{Dir: t.TempDir()}
	const id = "run-20261201-185459"
	b, err := os.ReadFile(filepath.Join("..", "..", "render", "testdata", "model", "planchange.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(ws.Runs(), id)
	mkdirs(t, dir)
	if err := os.WriteFile(filepath.Join(dir, store.LogFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	showActivity(&out, ws, id)
	got := out.String()
	for _, want := range []string{"2 tool calls, 2 failed", "\n  coder-1-2 ← run_shell ✗ failed: 1 passed, 1 failed · exit 1\n",
		"\n  coder-1-2 ← read_file ✗ not_found", "\n  ■ coder-1-2 interrupted: "} {
		if !strings.Contains(got, want) {
			t.Errorf("activity lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "✗ coder-1-2") || strings.Contains(got, render.NoActionText) {
		t.Errorf("activity:\n%s", got)
	}
}
