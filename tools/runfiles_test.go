package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeOS(p, s string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(s), 0o644)
}

func TestPlans(t *testing.T) {
	ws, dir := newWS(t, nil)
	env := testEnv(ws)
	if r := call(t, env, "read_plan", map[string]any{}); r.Kind != KindNotFound {
		t.Errorf("no plan: %v", r)
	}
	data(t, call(t, env, "write_plan", map[string]any{"content": "# Plan\n1. a\n"}))
	data(t, call(t, env, "write_plan", map[string]any{"content": "# Plan v2\n"}))
	if got := readString(t, filepath.Join(dir, ".orchestration/runs/run-20250101-120000/plan.md")); got != "# Plan v2\n" {
		t.Errorf("plan.md = %q", got)
	}
	d := data(t, call(t, env, "read_plan", map[string]any{"runId": "run-20250101-120000"}))
	if d["content"] != "# Plan v2\n" || d["truncated"] != false {
		t.Errorf("%v", d)
	}
	long := strings.Repeat("é", 25_000)
	data(t, call(t, env, "write_plan", map[string]any{"content": long}))
	d = data(t, call(t, env, "read_plan", map[string]any{}))
	if d["truncated"] != true || d["totalChars"] != float64(25_000) || strings.Count(d["content"].(string), "é") != planMaxChars {
		t.Errorf("cap: %v %v", d["truncated"], d["totalChars"])
	}
	for _, id := range []string{"../../etc", "run-20250101-120000/../x", "run-2025-1", "run-20250101-120000-2", "run-20251301-120000"} {
		if r := call(t, env, "read_plan", map[string]any{"runId": id}); r.Kind != KindInvalidArguments {
			t.Errorf("runId %q: %v", id, r)
		}
	}
	if r := call(t, env, "read_plan", map[string]any{"runId": "run-20240101-000000"}); r.Kind != KindNotFound {
		t.Errorf("other run: %v", r)
	}
}

func TestPlanSymlinkedRunDirStaysInside(t *testing.T) {
	ws, dir := newWS(t, nil)
	outside := filepath.Join(filepath.Dir(dir), "elsewhere")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, outside, filepath.Join(dir, ".orchestration/runs/run-20250101-120000"))
	env := testEnv(ws)
	if r := call(t, env, "write_plan", map[string]any{"content": "x"}); !r.Failed() {
		t.Error("plan written through a symlink out")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("files written outside: %v", ents)
	}
}

func TestRunLog(t *testing.T) {
	ws, dir := newWS(t, nil)
	env := testEnv(ws)
	if r := call(t, env, "read_run_log", map[string]any{}); r.Kind != KindUnavailable {
		t.Errorf("no log: %v", r)
	}
	var lines []string
	for i := 0; i < 250; i++ {
		typ := "tool_call"
		if i%2 == 1 {
			typ = "llm_call"
		}
		lines = append(lines, fmt.Sprintf(`{"timestamp":"t%d","type":"%s","payload":{"n":%d,"text":"Needle-%d"}}`, i, typ, i, i))
	}
	lines = append(lines, `{"timestamp":"big","type":"tool_result","payload":{"result":"`+strings.Repeat("q", 5000)+` needle-big"}}`)
	content := strings.Join(lines, "\n") + "\n" + `{"timestamp":"torn","type":"tool_ca`
	if err := writeOS(filepath.Join(dir, ".orchestration/runs/run-20250101-120000/log.jsonl"), content); err != nil {
		t.Fatal(err)
	}
	d := data(t, call(t, env, "read_run_log", map[string]any{}))
	if evs := d["events"].([]any); len(evs) != runLogDefaultLimit || d["nextOffset"] != float64(50) || d["hasMore"] != true {
		t.Errorf("default page: %d %v", len(evs), d["nextOffset"])
	}
	d = data(t, call(t, env, "read_run_log", map[string]any{"offset": 100, "limit": 1000}))
	evs := d["events"].([]any)
	if len(evs) != 151 || d["hasMore"] != false {
		t.Errorf("last page: %d events, hasMore %v", len(evs), d["hasMore"])
	}
	last := evs[len(evs)-1].(map[string]any)
	if last["type"] != "tool_result" || last["payloadTruncated"] != true || len([]rune(last["payload"].(string))) > runLogPayloadChars+60 {
		t.Errorf("big payload: %v", last["payloadTruncated"])
	}
	if first := evs[0].(map[string]any); first["index"] != float64(100) || first["timestamp"] != "t100" {
		t.Errorf("first: %v", first)
	}

	d = data(t, call(t, env, "search_run_log", map[string]any{"query": "NEEDLE-1", "type": "llm_call"}))
	ms := d["matches"].([]any)
	if len(ms) != searchLogDefaultLimit || d["truncated"] != true {
		t.Errorf("search: %d %v", len(ms), d["truncated"])
	}
	for _, m := range ms {
		if m.(map[string]any)["type"] != "llm_call" {
			t.Errorf("type filter: %v", m)
		}
	}
	d = data(t, call(t, env, "search_run_log", map[string]any{"query": "needle-big"}))
	ex := d["matches"].([]any)[0].(map[string]any)["excerpt"].(string)
	if !strings.Contains(ex, "needle-big") || len(ex) > 2*searchLogContext+40 {
		t.Errorf("excerpt %d: %.80s", len(ex), ex)
	}
	d = data(t, call(t, env, "search_run_log", map[string]any{"query": "torn"}))
	if len(d["matches"].([]any)) != 0 {
		t.Error("torn line searched")
	}
}

type fakeAsker struct {
	q   Question
	err error
}

func (a *fakeAsker) Ask(ctx context.Context, q Question) (string, error) {
	a.q = q
	return "yes", a.err
}

func TestAskHuman(t *testing.T) {
	ws, _ := newWS(t, nil)
	env := testEnv(ws)
	args := map[string]any{"question": "Proceed?", "context": "why", "options": []map[string]any{{"label": "yes"}, {"label": "no", "description": "stop"}}}
	if r := call(t, env, "ask_human", args); r.Kind != KindUnavailable || !strings.Contains(r.Message, "no operator available") {
		t.Errorf("nil asker: %v", r)
	}
	asker := &fakeAsker{}
	env.Asker = asker
	if d := data(t, call(t, env, "ask_human", args)); d["answer"] != "yes" {
		t.Errorf("%v", d)
	}
	if asker.q.Question != "Proceed?" || asker.q.Context != "why" || len(asker.q.Options) != 2 || asker.q.Options[1].Description != "stop" {
		t.Errorf("question %+v", asker.q)
	}
	asker.err = errors.New("closed")
	if r := call(t, env, "ask_human", args); r.Kind != KindUnavailable {
		t.Errorf("asker error: %v", r)
	}
	if r := call(t, env, "ask_human", map[string]any{"question": "q", "options": []map[string]any{{"label": "only"}}}); r.Kind != KindInvalidArguments {
		t.Errorf("one option: %v", r)
	}
}
