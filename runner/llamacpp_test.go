package runner

// Integration tests against a real llama.cpp llama-server (internal/
// llamatest): whole runs over the real wire, the seed guild's prompt sizes
// counted by the server's own tokenizer, and the permanent-error bound
// with the server's own HTTP 500.

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/guildhall/guildhall/internal/llamatest"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

func llamaSession(t *testing.T, base string, g *Guild, window int, health ProviderHealth) (*Session, string) {
	t.Helper()
	d := DefaultDeployment()
	d.FitToGuild(g)
	d.Model.ContextWindow = window
	d.Executor.ProviderHealth = health
	d.Executor.InterruptTriggers = nil
	p := provider.NewOpenAIChat(provider.Config{BaseURL: base, RequestTimeout: 60 * time.Second})
	models, err := p.(provider.Prober).Probe(context.Background())
	if err != nil || len(models) == 0 {
		t.Fatalf("probe %s: %v", base, err)
	}
	d.Model.Name = models[0].ID
	dir := t.TempDir()
	s := openSession(t, SessionConfig{Workspace: dir, Guild: g, Deployment: d, Provider: p, NoInput: true, EndpointAnswered: true})
	return s, dir
}

func soloGuild(t *testing.T, tools string) *Guild {
	t.Helper()
	g, err := LoadGuild(fstest.MapFS{
		"guild.json":      {Data: []byte(`{"entryRole":"solo","roles":{"solo":{"systemPrompt":"prompts/solo.md","tools":` + tools + `}}}`)},
		"prompts/solo.md": {Data: []byte("You work alone. Answer briefly.")},
	}, "solo guild")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestLlamaSeedGuildFitsEightK counts, with llama-server's tokenizer, the
// opening prompt each role sends (system prompt, tool schemas, a short
// task): the compact seed guild's roles all take less than half of an 8k
// window's budget, and the estimate the first-line warning uses stays
// close to those counts. The full seed orchestrator is the reason: it does
// not fit.
func TestLlamaSeedGuildFitsEightK(t *testing.T) {
	srv := llamatest.Start(t, llamatest.Steered, 8192)
	p := provider.NewOpenAIChat(provider.Config{BaseURL: srv.BaseURL(), RequestTimeout: 60 * time.Second})
	d := DefaultDeployment()
	d.Model.ContextWindow = 8192
	budget := 8192 - d.OutputReserve()
	count := func(g *Guild, role string) int {
		t.Helper()
		r := g.Roles[role]
		sys := r.Prompt
		if role == g.EntryRole {
			sys = strings.TrimRight(sys, "\n") + "\n\n" + EffortDirective("standard")
		}
		req := provider.Request{MaxTokens: 1, Messages: []provider.Message{{Role: "system", Content: sys}, {Role: "user", Content: "Say hello"}}}
		for _, name := range r.Tools {
			m := g.Manifests[name]
			req.Tools = append(req.Tools, provider.ToolSpec{Name: m.Name, Description: m.Description, Parameters: m.Parameters})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		resp, err := p.Complete(ctx, req, nil)
		if err != nil && !strings.Contains(err.Error(), "empty reply") {
			t.Fatalf("%s: %v", role, err)
		}
		if resp == nil || resp.Usage.PromptTokens == 0 {
			t.Fatalf("%s: no prompt count in %+v", role, resp)
		}
		return resp.Usage.PromptTokens
	}
	full := loadSeed(t)
	compact := loadCompact(t)
	fullOrch := count(full, "orchestrator")
	t.Logf("seed guild orchestrator opening prompt: %d tokens (budget at 8k: %d)", fullOrch, budget)
	if fullOrch <= budget/2 {
		t.Errorf("the seed orchestrator's %d tokens fit 8k after all: the compact guild is not needed", fullOrch)
	}
	est := compact.OpeningTokens()
	for _, role := range []string{"orchestrator", "coder", "inquiry_responder", "acceptance_reviewer", "planner"} {
		n := count(compact, role)
		t.Logf("compact %s: %d tokens (estimate %d)", role, n, est[role])
		if n > budget/2 {
			t.Errorf("compact %s: %d tokens, more than half of the %d-token budget", role, n, budget)
		}
		if d := est[role] - n; d > n/10 || -d > n/10 {
			t.Errorf("compact %s: estimate %d is more than 10%% off the counted %d", role, est[role], n)
		}
	}
}

// TestLlamaStreamedRun: a whole run over the real wire: the model's reply
// streams, its usage is logged, and a reply without tool calls finishes
// the run.
func TestLlamaStreamedRun(t *testing.T) {
	srv := llamatest.Start(t, llamatest.Steered, 4096)
	s, dir := llamaSession(t, srv.BaseURL(), testGuild(t), 4096, ProviderHealth{})
	_, sub := s.Subscribe(256)
	defer sub.Close()
	id, err := s.Submit(context.Background(), Submission{Task: "Say hello"})
	if err != nil {
		t.Fatal(err)
	}
	out := waitOutcome(t, s, 60*time.Second)
	if out.Status != store.StatusSuccess {
		t.Fatalf("outcome %+v\n%s", out, srv.Log())
	}
	evs := readEvents(t, testWS(dir), id)
	var call event.LLMCallPayload
	_ = find(evs, event.LLMCall)[0].Decode(&call)
	if call.Usage.PromptTokens == 0 || call.Usage.CompletionTokens == 0 || !strings.HasSuffix(call.Model, llamatest.Steered) || call.Received.Content == "" {
		t.Errorf("llm_call = %+v", call)
	}
	deltas := 0
	for drained := false; !drained; {
		select {
		case e := <-sub.C:
			if e.Type == event.LLMDelta {
				deltas++
			}
		default:
			drained = true
		}
	}
	if deltas == 0 {
		t.Error("no streamed delta reached the bus")
	}
}

// TestLlamaOverflowIsAContextRejection: at -c 512 the real HTTP 400
// exceed_context_size_error is a context rejection, not a provider
// failure: the run logs context_budget_exceeded with the server's count
// and the role ends with that kind.
func TestLlamaOverflowIsAContextRejection(t *testing.T) {
	srv := llamatest.Start(t, llamatest.Steered, 512)
	s, dir := llamaSession(t, srv.BaseURL(), testGuild(t), 512, ProviderHealth{})
	id, err := s.Submit(context.Background(), Submission{Task: strings.Repeat("Summarise this sentence. ", 200)})
	if err != nil {
		t.Fatal(err)
	}
	out := waitOutcome(t, s, 60*time.Second)
	if out.Card == nil || out.Card.Error == nil || out.Card.Error.Kind != "context_budget_exceeded" {
		t.Fatalf("outcome %+v", out)
	}
	evs := readEvents(t, testWS(dir), id)
	rej := find(evs, event.ContextBudgetExceeded)
	if len(rej) == 0 {
		t.Fatal("no context_budget_exceeded")
	}
	var p event.FailurePayload
	_ = rej[0].Decode(&p)
	if !strings.Contains(p.Message, "rejected a ") || !strings.Contains(p.Message, "-token prompt") {
		t.Errorf("rejection = %q: the server's prompt count is missing", p.Message)
	}
	if n := len(find(evs, event.ProviderFailure)); n != 0 {
		t.Errorf("%d provider failures: an overflow is not an outage", n)
	}
}

// TestLlamaToolCallRun: the tool-call model's streamed calls are
// dispatched as tool calls of the run (every one gets its result). A proxy
// adds tool_choice "required" so the random model calls a tool each turn;
// the run is stopped once tools ran.
func TestLlamaToolCallRun(t *testing.T) {
	srv := llamatest.Start(t, llamatest.ToolCall, 4096)
	base := llamatest.Proxy(t, srv.URL, func(b map[string]any) {
		b["tool_choice"], b["parallel_tool_calls"], b["temperature"], b["max_tokens"] = "required", false, 0.2, 100
	}) + "/v1"
	s, dir := llamaSession(t, base, soloGuild(t, `["read_file","list_directory","finish"]`), 4096, ProviderHealth{})
	ws := testWS(dir)
	var evs []event.Event
	var calls, results []event.Event
	// A reply the token limit cuts inside its call is retried, and one
	// that still carries none ends the run: try a few runs.
	for attempt := 0; attempt < 3 && len(results) == 0; attempt++ {
		id, err := s.Submit(context.Background(), Submission{Task: "List the files"})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(90 * time.Second)
		for {
			evs = readEvents(t, ws, id)
			if len(find(evs, event.ToolResult)) > 0 || time.Now().After(deadline) {
				break
			}
			if _, live := s.Active(); !live {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		s.Stop()
		_ = waitOutcome(t, s, 60*time.Second)
		evs = readEvents(t, ws, id)
		calls, results = find(evs, event.ToolCall), find(evs, event.ToolResult)
	}
	if len(calls) == 0 || len(results) == 0 {
		t.Fatalf("no tool ran in three runs: %v\n%s", types(evs), srv.Log())
	}
	for _, e := range calls {
		var c event.ToolCallPayload
		_ = e.Decode(&c)
		if c.Tool != "read_file" && c.Tool != "list_directory" && c.Tool != "finish" {
			t.Errorf("a call of %q, which the role was not offered", c.Tool)
		}
	}
	var received int
	for _, e := range find(evs, event.LLMCall) {
		var p event.LLMCallPayload
		_ = e.Decode(&p)
		if p.Received != nil {
			received += len(p.Received.ToolCalls)
		}
	}
	if received == 0 || len(results) != len(calls) {
		t.Errorf("%d calls received from the server, %d dispatched, %d results: every dispatched call gets its result", received, len(calls), len(results))
	}
}

// TestLlamaPermanentErrorIsBounded: the real server answers its model
// list but refuses every call with its own HTTP 500 ("Failed to parse tool
// call arguments as JSON", from a history carrying a call whose arguments
// are not JSON, which a proxy adds). The run resumes from each suspension,
// fails again, and stops after the bound with the server's message on
// every failure.
func TestLlamaPermanentErrorIsBounded(t *testing.T) {
	srv := llamatest.Start(t, llamatest.Steered, 4096)
	base := llamatest.Proxy(t, srv.URL, func(b map[string]any) {
		msgs, _ := b["messages"].([]any)
		b["messages"] = append(msgs,
			map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": "bad", "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": "not json{"}}}},
			map[string]any{"role": "tool", "tool_call_id": "bad", "content": "x"})
	}) + "/v1"
	s, dir := llamaSession(t, base, testGuild(t), 4096, ProviderHealth{Retries: 3, SuspendAfter: 3, ProbeSeconds: 1})
	id, err := s.Submit(context.Background(), Submission{Task: "Say hello"})
	if err != nil {
		t.Fatal(err)
	}
	out := waitOutcome(t, s, 90*time.Second)
	if out.Card == nil || out.Card.Error == nil || out.Card.Error.Kind != "llm_unavailable" || !strings.Contains(out.Card.Error.Message, "kept failing") {
		t.Fatalf("outcome %+v", out)
	}
	fails := find(readEvents(t, testWS(dir), id), event.ProviderFailure)
	if len(fails) != (maxRelapses+1)*3 {
		t.Errorf("%d failures, want %d", len(fails), (maxRelapses+1)*3)
	}
	for _, e := range fails {
		var p event.ProviderFailurePayload
		_ = e.Decode(&p)
		if p.StatusCode != 500 || !strings.HasPrefix(p.Message, "Failed to parse tool call arguments as JSON") {
			t.Fatalf("failure %+v: want the server's own message", p)
		}
	}
}
