package main

// Run budgets through the real binary: a scripted model that goes round in
// circles is stopped by --max-tool-calls with budget_exceeded (exit 1),
// and resumed with a higher limit; a model endpoint that answers slowly is
// stopped by --max-wall.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// budgetGuild is a one-role guild that lists folders and finishes.
func budgetGuild(t *testing.T, h *hostile) string {
	return oneRoleGuild(t, h, "[role:orchestrator] Look around.", "list_directory", "finish")
}

// rawScript writes a scripted conversation given as JSON.
func rawScript(t *testing.T, h *hostile, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(h.root, fmt.Sprintf("script-%d.json", time.Now().UnixNano()))
	h.write(p, string(b), 0o644)
	return p
}

// listTurn is one reply listing path.
func listTurn(path string) map[string]any {
	return map[string]any{"toolCalls": []any{map[string]any{"name": "list_directory", "arguments": map[string]any{"path": path}}}}
}

// budgetRun reads the run's meta and the list_directory paths it logged.
func budgetRun(t *testing.T, ws string) (*store.Meta, []string) {
	t.Helper()
	m, evs := readRun(t, ws)
	var paths []string
	for _, p := range payloadsOf[event.ToolCallPayload](t, evs, event.ToolCall) {
		if p.Tool == "list_directory" {
			var a struct{ Path string }
			_ = json.Unmarshal([]byte(p.Arguments), &a)
			paths = append(paths, a.Path)
		}
	}
	return m, paths
}

func TestBudgetEndsALoopingRun(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("loop")
	// The model lists the same folder for ever, alternating two spellings
	// of it: the same call three times in a row would be stopped by the
	// repetition check first (loop_detected), not by the budget.
	var circles []any
	for i := 0; i < 40; i++ {
		circles = append(circles, listTurn([]string{".", "./"}[i%2]))
	}
	script := rawScript(t, h, map[string]any{"roles": map[string]any{"orchestrator": circles}})
	res := h.run(ws, 0, "run", "--workspace", ws, "--guild", budgetGuild(t, h), "--provider", "script", "--script", script,
		"--no-input", "--max-tool-calls", "25", "Look around")
	h.assertSafe()
	if res.code != 1 {
		t.Fatalf("want exit 1 (error), got %s", res)
	}
	m, paths := budgetRun(t, ws)
	if m.Status != store.StatusError || m.Error == nil || m.Error.Kind != "budget_exceeded" || len(paths) != 25 {
		t.Fatalf("meta %+v %+v, %d calls", m, m.Error, len(paths))
	}
	want := "it made 25 tool calls, and its limit is 25 tool calls (--max-tool-calls)"
	if !strings.Contains(m.Error.Message, want) || !strings.Contains(res.stderr, want) ||
		!strings.Contains(res.stderr, "guildhall resume "+m.RunID+" --max-tool-calls 50") {
		t.Errorf("the operator is not told which limit and how to go on:\nmeta: %s\n%s", m.Error.Message, res)
	}
}

func TestBudgetResumesWithAHigherLimit(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("numbered")
	var turns []any
	for i := 1; i <= 12; i++ {
		h.write(filepath.Join(ws, fmt.Sprintf("d%d", i), "f"), "x\n", 0o644)
		turns = append(turns, listTurn(fmt.Sprintf("d%d", i)))
	}
	turns = append(turns, map[string]any{"toolCalls": []any{map[string]any{"name": "finish", "arguments": map[string]any{"status": "success", "summary": "looked"}}}})
	script := rawScript(t, h, map[string]any{"roles": map[string]any{"orchestrator": turns}})
	common := []string{"--workspace", ws, "--guild", budgetGuild(t, h), "--provider", "script", "--script", script, "--no-input"}
	res := h.run(ws, 0, append(append([]string{"run"}, common...), "--max-tool-calls", "5", "Look around")...)
	if res.code != 1 {
		t.Fatalf("first run: %s", res)
	}
	m, _ := budgetRun(t, ws)
	res = h.run(ws, 0, append(append([]string{"resume", m.RunID}, common...), "--max-tool-calls", "9")...)
	if res.code != 1 || !strings.Contains(res.stderr, "it made 9 tool calls") {
		t.Fatalf("first resume (the 5 calls made count): %s", res)
	}
	res = h.run(ws, 0, append(append([]string{"resume", m.RunID}, common...), "--max-tool-calls", "0")...)
	if res.code != 0 {
		t.Fatalf("resume without a limit: %s", res)
	}
	m, paths := budgetRun(t, ws)
	want := "d1,d2,d3,d4,d5,d6,d7,d8,d9,d10,d11,d12"
	if m.Status != store.StatusSuccess || m.Error != nil || strings.Join(paths, ",") != want {
		t.Errorf("status %s, error %+v, calls %v; want every call once: %s", m.Status, m.Error, paths, want)
	}
	if _, err := os.Stat(filepath.Join(ws, ".orchestration", "runs", m.RunID, "state.json")); !os.IsNotExist(err) {
		t.Errorf("the finished run kept its checkpoint: %v", err)
	}
}

// TestBudgetMaxWallStopsASlowModel: a model endpoint that takes 0.4 s per
// reply; --max-wall 1s ends the run after a few, and a resume with a
// higher limit finishes it.
func TestBudgetMaxWallStopsASlowModel(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("slow")
	f := fakellm.New()
	defer f.Close()
	for i := 0; i < 8; i++ {
		// Two spellings of the folder: not the same call in a row.
		f.Queue("orchestrator", fakellm.Reply{Calls: []fakellm.Call{{Name: "list_directory", Args: map[string]string{"path": []string{".", "./"}[i%2]}}}})
	}
	f.Queue("orchestrator", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "looked"}}}})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			time.Sleep(400 * time.Millisecond)
		}
		f.Config.Handler.ServeHTTP(w, r)
	}))
	defer slow.Close()
	common := []string{"--workspace", ws, "--guild", budgetGuild(t, h), "--provider", "openai", "--base-url", slow.URL + "/v1", "--model", "fake-model", "--no-input"}
	res := h.run(ws, 0, append(append([]string{"run"}, common...), "--max-wall", "1s", "Look around")...)
	if res.code != 1 {
		t.Fatalf("want exit 1, got %s", res)
	}
	m, paths := budgetRun(t, ws)
	if m.Error == nil || m.Error.Kind != "budget_exceeded" || !strings.Contains(m.Error.Message, "its limit is 1s (--max-wall)") ||
		!strings.Contains(m.Error.Message, "has been working for") {
		t.Fatalf("meta error: %+v", m.Error)
	}
	// A reply takes 0.4 s: the second second is reached after a few.
	if len(paths) < 1 || len(paths) > 4 {
		t.Errorf("%d calls before the stop", len(paths))
	}
	res = h.run(ws, 0, append(append([]string{"resume", m.RunID}, common...), "--max-wall", "1h")...)
	if res.code != 0 {
		t.Fatalf("resume with a higher limit: %s", res)
	}
	if m, paths = budgetRun(t, ws); m.Status != store.StatusSuccess || len(paths) != 8 {
		t.Errorf("status %s after %d calls", m.Status, len(paths))
	}
}

// TestBudgetFlagsAreChecked: a malformed limit is a usage error (exit 2)
// naming the flag, on every command that runs.
func TestBudgetFlagsAreChecked(t *testing.T) {
	ws := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--max-tool-calls", "-3", "task"}, `--max-tool-calls "-3" is not a whole number`},
		{[]string{"run", "--max-tokens", "lots", "task"}, `--max-tokens "lots" is not a whole number`},
		{[]string{"run", "--max-wall", "5 parsecs", "task"}, `--max-wall "5 parsecs" is not a duration`},
		{[]string{"queue", "run", "--max-wall", "-1h"}, `--max-wall "-1h" is not a duration`},
	} {
		res := runCLI(t, "", append(c.args, "--workspace", ws, "--provider", "script")...)
		if res.code != 2 || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 with %q", c.args, res.code, res.stderr, c.want)
		}
	}
}
