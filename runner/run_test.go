package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// recorder wraps a provider and keeps every request it was sent.
type recorder struct {
	provider.Provider
	mu   sync.Mutex
	reqs []provider.Request
}

func (r *recorder) Complete(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	r.mu.Lock()
	cp := req
	cp.Messages = append([]provider.Message(nil), req.Messages...)
	r.reqs = append(r.reqs, cp)
	r.mu.Unlock()
	return r.Provider.Complete(ctx, req, onDelta)
}

func (r *recorder) byRole(role string) []provider.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []provider.Request
	for _, q := range r.reqs {
		if q.Role == role {
			out = append(out, q)
		}
	}
	return out
}

// call builds a scripted tool call.
func call(name string, args any) provider.ScriptToolCall {
	b, _ := json.Marshal(args)
	return provider.ScriptToolCall{Name: name, Arguments: b}
}

func turn(content string, calls ...provider.ScriptToolCall) provider.ScriptTurn {
	return provider.ScriptTurn{Content: content, ToolCalls: calls, Usage: &provider.ScriptUsage{PromptTokens: 100, CompletionTokens: 10}}
}

func finishCall(status, summary string) provider.ScriptToolCall {
	return call("finish", map[string]any{"status": status, "summary": summary})
}

// testGuild is a two-role guild written in the original's format.
func testGuild(t *testing.T) *Guild {
	t.Helper()
	g, err := LoadGuild(os.DirFS("testdata/original"), "testdata/original")
	if err != nil {
		t.Fatalf("load test guild: %v", err)
	}
	return g
}

type harness struct {
	t    *testing.T
	dir  string
	rec  *recorder
	opts Options
}

func newHarness(t *testing.T, g *Guild, script map[string][]provider.ScriptTurn) *harness {
	t.Helper()
	dir := t.TempDir()
	d := DefaultDeployment()
	d.FitToGuild(g)
	rec := &recorder{Provider: provider.NewScripted(&provider.Script{Roles: script}, 0)}
	return &harness{t: t, dir: dir, rec: rec, opts: Options{
		Workspace: dir, Sealer: testSealer(dir), Guild: g, Deployment: d, Provider: rec, Task: "Do the thing", NoInput: true,
	}}
}

// onFirstQuestion gives the run a bus and a broker, as a session does,
// and calls fn with the broker (in its own goroutine) when the run asks
// its first question. The subscription ends when the test does.
func (h *harness) onFirstQuestion(fn func(b *Broker, q event.AskHumanPayload)) {
	h.opts.NoInput = false
	bus, broker := NewBus(), NewBroker()
	h.opts.Bus, h.opts.Broker = bus, broker
	_, sub := bus.Subscribe(64)
	h.t.Cleanup(sub.Close)
	go func() {
		for e := range sub.C {
			if e.Type == event.AskHuman {
				var q event.AskHumanPayload
				_ = e.Decode(&q)
				fn(broker, q)
				return
			}
		}
	}()
}

func (h *harness) run() (Outcome, []event.Event, *store.Meta) {
	h.t.Helper()
	r, err := Create(h.opts)
	if err != nil {
		h.t.Fatalf("create run: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := r.Execute(ctx)
	if err != nil {
		h.t.Fatalf("execute: %v", err)
	}
	ws := testWS(h.dir)
	meta, err := ws.ReadMeta(r.ID())
	if err != nil {
		h.t.Fatalf("read meta: %v", err)
	}
	return out, readEvents(h.t, ws, r.ID()), meta
}

func readEvents(t *testing.T, ws store.Workspace, id string) []event.Event {
	t.Helper()
	path, _ := ws.LogPath(id)
	var evs []event.Event
	problems, err := store.ReadLog(path, func(seq int64, rec []byte) error {
		var e event.Event
		if err := json.Unmarshal(rec, &e); err != nil {
			return err
		}
		e.Seq = seq
		evs = append(evs, e)
		return nil
	})
	if err != nil || len(problems) > 0 {
		t.Fatalf("log %s: err=%v problems=%v", path, err, problems)
	}
	return evs
}

func types(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Type))
	}
	return out
}

func find(evs []event.Event, typ event.Type) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestDelegationRun(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("Delegating.", call("agent", map[string]string{"role": "coder", "task": "write hello.txt"})),
			turn("", finishCall("success", "All done: hello.txt written")),
		},
		"coder": {
			turn("", call("write_file", map[string]string{"path": "hello.txt", "content": "hi\n"})),
			turn("", call("finish", map[string]any{"status": "success", "summary": "wrote it", "artifacts": []string{"hello.txt"}})),
		},
	})
	out, evs, meta := h.run()
	if out.Status != store.StatusSuccess {
		t.Fatalf("status = %q, want success", out.Status)
	}
	if b, err := os.ReadFile(filepath.Join(h.dir, "hello.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("hello.txt = %q, %v; the coder's write_file should have run for real", b, err)
	}
	if meta.Status != "success" || meta.Result == nil || meta.Result.Summary != "All done: hello.txt written" {
		t.Fatalf("meta = %+v", meta)
	}
	starts := find(evs, event.RoleStart)
	if len(starts) != 2 {
		t.Fatalf("role_start events = %d, want 2: %v", len(starts), types(evs))
	}
	var child event.RoleStartPayload
	_ = starts[1].Decode(&child)
	if child.RoleID != "coder-1-2" || child.Parent != "orchestrator" || child.Depth != 1 || child.Task != "write hello.txt" {
		t.Fatalf("child role_start = %+v", child)
	}
	if n := len(find(evs, event.RoleFinished)); n != 2 {
		t.Fatalf("role_finished events = %d, want 2", n)
	}
	if len(find(evs, event.AgentCall)) != 1 || len(find(evs, event.EffortSet)) != 1 {
		t.Fatalf("want one agent_call and one effort_set: %v", types(evs))
	}
	// The orchestrator's second call sees the coder's card as the agent result.
	reqs := h.rec.byRole("orchestrator")
	last := reqs[len(reqs)-1].Messages
	res := last[len(last)-1]
	if res.Role != "tool" || !strings.Contains(res.Content, `"summary":"wrote it"`) || !strings.Contains(res.Content, "hello.txt") {
		t.Fatalf("agent result message = %+v", res)
	}
	// Tools offered follow each role's grant.
	if names := toolNames(h.rec.byRole("coder")[0]); strings.Join(names, ",") != "read_file,write_file,run_shell,finish" {
		t.Fatalf("coder was offered %v", names)
	}
	// The state file is gone once the run is terminal.
	if _, err := os.Stat(filepath.Join(h.dir, ".orchestration/runs", out.RunID, "state.json")); !os.IsNotExist(err) {
		t.Fatalf("state.json should be deleted at a terminal meta, stat err = %v", err)
	}
}

func toolNames(r provider.Request) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

func TestEffortDirectiveOnlyForEntryRole(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {turn("", call("agent", map[string]string{"role": "coder", "task": "x"})), turn("", finishCall("success", "ok"))},
		"coder":        {turn("", finishCall("success", "ok"))},
	})
	h.opts.Effort = "thorough"
	h.run()
	sys := h.rec.byRole("orchestrator")[0].Messages[0]
	want := "Quality level: thorough (one of quick, standard, thorough — quick is fastest and most direct; thorough is slowest and most careful)."
	if sys.Role != "system" || !strings.HasSuffix(sys.Content, want) {
		t.Fatalf("entry system message = %q, want it to end with the effort directive", sys.Content)
	}
	for _, m := range h.rec.byRole("coder")[0].Messages {
		if strings.Contains(m.Content, "Quality level:") {
			t.Fatalf("child role got the effort directive: %q", m.Content)
		}
	}
}

func TestToolCallErrorKinds(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", call("write_file", map[string]string{"path": "x", "content": "y"})), // declared elsewhere, not granted
			turn("", call("no_such_tool", map[string]string{})),                          // no manifest
			turn("", call("read_file", map[string]int{"path": 3})),                       // schema violation
			turn("", call("agent", map[string]string{"role": "ghost", "task": "boo"})),   // unknown role
			turn("", finishCall("success", "survived")),
		},
	})
	_, evs, _ := h.run()
	var kinds []string
	for _, e := range find(evs, event.ToolResult) {
		var p event.ToolResultPayload
		_ = e.Decode(&p)
		kinds = append(kinds, p.Kind)
	}
	want := "invalid_tool_call,unknown_tool,invalid_arguments,role_not_found,success"
	if got := strings.Join(kinds, ","); got != want {
		t.Fatalf("tool result kinds = %s, want %s", got, want)
	}
	for _, typ := range []event.Type{event.InvalidToolCall, event.UnknownTool, event.RoleNotFound} {
		if len(find(evs, typ)) != 1 {
			t.Errorf("want one %s event; log: %v", typ, types(evs))
		}
	}
	// Nothing was written by the refused call.
	if _, err := os.Stat(filepath.Join(h.dir, "x")); !os.IsNotExist(err) {
		t.Fatalf("a refused write_file must not run")
	}
}

func TestImplicitFinish(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": {turn("Here is my answer.")}})
	out, evs, meta := h.run()
	if out.Status != "success" || meta.Result.Summary != "Here is my answer." || len(find(evs, event.ImplicitFinish)) != 1 {
		t.Fatalf("implicit finish: status=%s meta=%+v", out.Status, meta.Result)
	}
}

func TestDepthExceeded(t *testing.T) {
	g := testGuild(t)
	g.Roles["coder"].Tools = append(g.Roles["coder"].Tools, "agent")
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {turn("", call("agent", map[string]string{"role": "coder", "task": "a"})), turn("", finishCall("success", "ok"))},
		"coder": {
			turn("", call("agent", map[string]string{"role": "coder", "task": "deeper"})),
			turn("", finishCall("success", "inner")),
			turn("", finishCall("success", "outer")),
		},
	})
	h.opts.Deployment.Executor.MaxAgentDepth = 1
	_, evs, _ := h.run()
	if len(find(evs, event.DepthExceeded)) != 1 {
		t.Fatalf("want a depth_exceeded event: %v", types(evs))
	}
	if n := len(find(evs, event.RoleStart)); n != 2 {
		t.Fatalf("a refused agent call must not start a role; role_start count = %d", n)
	}
}

func TestContinuationTurns(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": {
		turn("", call("finish", map[string]any{"status": "error", "summary": "could not reach the API",
			"error": map[string]any{"kind": "unavailable", "message": "The API was down.", "details": map[string]string{"body": "SECRET-PROVIDER-BODY"}}})),
		turn("", finishCall("success", "second run done")),
	}})
	first, _, _ := h.run()
	h.opts.ContinuesFrom = first.RunID
	h.opts.Task = "Try again"
	h.opts.Now = func() time.Time { return time.Now().Add(2 * time.Second) }
	second, evs, meta := h.run()
	if meta.ContinuesFrom != first.RunID {
		t.Fatalf("meta.continuesFrom = %q, want %q", meta.ContinuesFrom, first.RunID)
	}
	var started event.RunStartedPayload
	_ = evs[0].Decode(&started)
	if started.ContinuesFrom != first.RunID || second.RunID == first.RunID {
		t.Fatalf("run_started = %+v", started)
	}
	msgs := h.rec.byRole("orchestrator")[1].Messages
	if len(msgs) != 4 || msgs[1].Role != "user" || msgs[1].Content != "Do the thing" || msgs[3].Content != "Try again" {
		t.Fatalf("continuation messages = %+v", msgs)
	}
	ref := msgs[2]
	if ref.Role != "assistant" || !strings.HasPrefix(ref.Content, "[Prior run result — status: error]") || len(ref.ToolCalls) != 0 || ref.Reasoning != "" {
		t.Fatalf("prior result turn = %+v", ref)
	}
	if !strings.Contains(ref.Content, "The API was down.") {
		t.Fatalf("prior result turn should carry the surfaced error message: %q", ref.Content)
	}
	for _, m := range msgs {
		if strings.Contains(m.Content, "SECRET-PROVIDER-BODY") {
			t.Fatalf("technical detail entered model history: %q", m.Content)
		}
	}
}

func TestToolOutputTruncatedInConversationKeptInLog(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": {
		turn("", call("read_file", map[string]string{"path": "big.txt"})),
		turn("", finishCall("success", "read")),
	}})
	big := strings.Repeat("abcdefghij", 1000)
	if err := os.WriteFile(filepath.Join(h.dir, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	h.opts.Deployment.ContextPolicy.MaxToolOutputChars = 500
	_, evs, _ := h.run()
	msgs := h.rec.byRole("orchestrator")[1].Messages
	res := msgs[len(msgs)-1].Content
	if len([]rune(res)) > 700 || !strings.Contains(res, "[truncated: showing 500 of") {
		t.Fatalf("conversation tool result should be truncated with a marker, got %d chars", len(res))
	}
	var logged event.ToolResultPayload
	_ = find(evs, event.ToolResult)[0].Decode(&logged)
	if !strings.Contains(string(logged.Result), big) {
		t.Fatalf("the log must keep the untruncated result")
	}
}

func TestLogLevelStandardDropsBodies(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": {
		turn("reading", call("read_file", map[string]string{"path": "a.txt"})),
		turn("", finishCall("success", "ok")),
	}})
	_ = os.WriteFile(filepath.Join(h.dir, "a.txt"), []byte("BODY-MARKER"), 0o644)
	h.opts.LogLevel = LogStandard
	_, evs, _ := h.run()
	raw, _ := json.Marshal(evs)
	if strings.Contains(string(raw), "BODY-MARKER") {
		t.Fatalf("standard log level must drop tool result bodies")
	}
	var call event.LLMCallPayload
	_ = find(evs, event.LLMCall)[0].Decode(&call)
	if call.Sent != nil || call.Received != nil || call.Usage.PromptTokens != 100 {
		t.Fatalf("standard llm_call = %+v", call)
	}
}

func TestLLMCallLogsSentDelta(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": {
		turn("one", call("read_file", map[string]string{"path": "missing.txt"})),
		turn("", finishCall("success", "ok")),
	}})
	_, evs, _ := h.run()
	calls := find(evs, event.LLMCall)
	var first, second event.LLMCallPayload
	_ = calls[0].Decode(&first)
	_ = calls[1].Decode(&second)
	if first.SentFrom != 0 || len(first.Sent) != 2 {
		t.Fatalf("first call should send system+task, got from=%d n=%d", first.SentFrom, len(first.Sent))
	}
	if second.SentFrom != 3 || len(second.Sent) != 1 || second.Sent[0].Role != "tool" {
		t.Fatalf("second call should log only the new tool message, got from=%d %+v", second.SentFrom, second.Sent)
	}
	if second.MessageCount != 4 {
		t.Fatalf("messageCount = %d, want 4", second.MessageCount)
	}
}

func TestAskHumanThroughBroker(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": {
		turn("I need to know.", call("ask_human", map[string]any{"question": "Tabs or spaces?", "options": []map[string]string{{"label": "Tabs"}, {"label": "Spaces"}}})),
		turn("", finishCall("success", "ok")),
	}})
	h.onFirstQuestion(func(broker *Broker, q event.AskHumanPayload) {
		if err := broker.Answer(q.ID, "Tabs", "browser"); err != nil {
			t.Errorf("answer: %v", err)
		}
		if err := broker.Answer(q.ID, "Spaces", "terminal"); err != ErrAlreadyAnswered {
			t.Errorf("second answer: err = %v, want ErrAlreadyAnswered", err)
		}
	})
	_, evs, _ := h.run()
	asks := find(evs, event.AskHuman)
	if len(asks) != 1 {
		t.Fatalf("ask_human events: %v", types(evs))
	}
	var q event.AskHumanPayload
	_ = asks[0].Decode(&q)
	if q.AssistantText != "I need to know." || len(q.Options) != 2 || q.Question != "Tabs or spaces?" {
		t.Fatalf("ask_human payload = %+v", q)
	}
	var a event.HumanAnswerPayload
	_ = find(evs, event.HumanAnswer)[0].Decode(&a)
	if a.Answer != "Tabs" || a.ID != q.ID || a.Source != "browser" {
		t.Fatalf("human_answer = %+v, want the first answer, from the browser", a)
	}
	msgs := h.rec.byRole("orchestrator")[1].Messages
	if !strings.Contains(msgs[len(msgs)-1].Content, "Tabs") {
		t.Fatalf("the answer should reach the model: %+v", msgs[len(msgs)-1])
	}
}

func TestNoInputAnswersWithToolError(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": {
		turn("", call("ask_human", map[string]any{"question": "Anyone?"})),
		turn("", finishCall("success", "ok")),
	}})
	_, evs, _ := h.run()
	var p event.ToolResultPayload
	_ = find(evs, event.ToolResult)[0].Decode(&p)
	if p.Kind == "success" || !strings.Contains(strings.ToLower(string(p.Result)), "no operator") {
		t.Fatalf("--no-input ask_human result = %s %s", p.Kind, p.Result)
	}
}

func TestGitExcludeAdded(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": {turn("", finishCall("success", "ok"))}})
	if err := os.MkdirAll(filepath.Join(h.dir, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.run()
	b, _ := os.ReadFile(filepath.Join(h.dir, ".git", "info", "exclude"))
	if !strings.Contains(string(b), "/.orchestration/") {
		t.Fatalf("exclude = %q", b)
	}
}

func TestSeedGuildFormatWithInlineFS(t *testing.T) {
	fsys := fstest.MapFS{
		"guild.json":      {Data: []byte(`{"entryRole":"solo","roles":{"solo":{"systemPrompt":"prompts/solo.md","tools":["read_file","write_file","run_shell","ask_human","finish"]}}}`)},
		"prompts/solo.md": {Data: []byte("You work alone.")},
	}
	g, err := LoadGuild(fsys, "mem")
	if err != nil {
		t.Fatalf("the minimal guild of DESIGN.md must load: %v", err)
	}
	for _, name := range []string{"read_file", "write_file", "run_shell", "ask_human", "finish"} {
		if _, ok := g.Manifests[name]; !ok {
			t.Errorf("built-in %s should get its embedded default manifest", name)
		}
	}
}

// Once nobody is left to answer, a pending question and every later one
// fail at once: the role gets "no operator available" and the run goes on.
func TestUnattendedBrokerFailsQuestions(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{"orchestrator": {
		turn("", call("ask_human", map[string]any{"question": "First?"})),
		turn("", call("ask_human", map[string]any{"question": "Second?"})),
		turn("", finishCall("success", "went on")),
	}})
	h.onFirstQuestion(func(broker *Broker, _ event.AskHumanPayload) {
		broker.Unattended() // the first question is pending now
	})
	out, evs, _ := h.run()
	if out.Status != "success" {
		t.Fatalf("outcome %+v, want the run to go on and finish", out)
	}
	results := find(evs, event.ToolResult)
	unavailable := 0
	for _, e := range results {
		var p event.ToolResultPayload
		_ = e.Decode(&p)
		if p.Tool == "ask_human" && p.Kind == "unavailable" {
			unavailable++
		}
	}
	if unavailable != 2 || len(find(evs, event.HumanAnswer)) != 0 {
		t.Fatalf("%d ask_human results unavailable, %d answers; want 2 and 0", unavailable, len(find(evs, event.HumanAnswer)))
	}
}

// testKey is the records key of the runner tests' operator.
var testKey = []byte("runner-tests-records-key-32bytes")

// testSealer seals the records of the test workspace dir.
func testSealer(dir string) *store.Sealer { return store.NewSealer(testKey, dir) }

// openSession opens a session on cfg.Workspace, sealed with testKey, and
// closes it when the test ends.
func openSession(t *testing.T, cfg SessionConfig) *Session {
	t.Helper()
	cfg.Sealer = testSealer(cfg.Workspace)
	s, err := OpenSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// testWS is the test workspace dir's records, sealed with testKey.
func testWS(dir string) store.Workspace { return store.Workspace{Dir: dir, Seal: testSealer(dir)} }
