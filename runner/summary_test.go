package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// summaryFake is a provider.Provider that plays a script for role calls
// and answers raw summariser calls (Role "") itself, recording them.
type summaryFake struct {
	provider.Provider
	mu      sync.Mutex
	raw     []provider.Request
	replies []string
	fail    error
	// failFirst makes the first role call fail with a provider body.
	failFirst bool
}

func (f *summaryFake) Complete(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	f.mu.Lock()
	if req.Role != "" {
		fail := f.failFirst
		f.failFirst = false
		f.mu.Unlock()
		if fail {
			return nil, &provider.Error{Category: provider.CategoryServer, StatusCode: 500, Body: "PROVIDER-BODY-CANARY", Err: errors.New("boom")}
		}
		return f.Provider.Complete(ctx, req, onDelta)
	}
	cp := req
	cp.Messages = append([]provider.Message(nil), req.Messages...)
	f.raw = append(f.raw, cp)
	i := len(f.raw) - 1
	f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	reply := "A summary"
	if i < len(f.replies) {
		reply = f.replies[i]
	}
	return &provider.Response{Content: reply, FinishReason: "stop"}, nil
}

func (f *summaryFake) requests() []provider.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]provider.Request(nil), f.raw...)
}

// canaryScript is a run whose non-human-facing content is all marked:
// reasoning, an internal turn, a tool result and a child conversation.
func canaryScript() map[string][]provider.ScriptTurn {
	return map[string][]provider.ScriptTurn{
		"orchestrator": {
			{Content: "INTERNAL-TURN-CANARY", Reasoning: "REASONING-CANARY", ToolCalls: []provider.ScriptToolCall{call("read_file", map[string]string{"path": "notes.txt"})}},
			turn("", call("agent", map[string]string{"role": "coder", "task": "CHILD-TASK-CANARY"})),
			turn("", finishCall("success", "## Parser fixed\n\nThe parser handles empty input now.")),
		},
		"coder": {
			turn("CHILD-MESSAGE-CANARY", finishCall("success", "CHILD-SUMMARY-CANARY")),
		},
	}
}

var canaries = []string{"INTERNAL-TURN-CANARY", "REASONING-CANARY", "TOOL-OUTPUT-CANARY", "CHILD-TASK-CANARY",
	"CHILD-MESSAGE-CANARY", "CHILD-SUMMARY-CANARY", "PROVIDER-BODY-CANARY", "[role:"}

func summarySession(t *testing.T, p provider.Provider) (*Session, store.Workspace) {
	t.Helper()
	g := testGuild(t)
	d := DefaultDeployment()
	d.FitToGuild(g)
	d.Model.Name = "summary-model"
	dir := t.TempDir()
	writeFile(t, dir, "notes.txt", "TOOL-OUTPUT-CANARY")
	s := openSession(t, SessionConfig{Workspace: dir, Guild: g, Deployment: d, Provider: p, NoInput: true})
	return s, testWS(dir)
}

func submitAndWait(t *testing.T, s *Session, sub Submission) (string, Outcome) {
	t.Helper()
	id, err := s.Submit(context.Background(), sub)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := s.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return id, out
}

func TestSummaryCallsAreRawAndCarryOnlyTheNeededText(t *testing.T) {
	fake := &summaryFake{Provider: provider.NewScripted(&provider.Script{Roles: canaryScript()}, 0), failFirst: true,
		replies: []string{"Fix the parser for empty input", "\"Summary: Parser fixed; it now handles empty input.\"\n"}}
	s, ws := summarySession(t, fake)
	id, out := submitAndWait(t, s, Submission{Task: "Fix the **parser** so empty input works"})
	if out.Status != store.StatusSuccess {
		t.Fatalf("outcome %+v", out)
	}
	reqs := fake.requests()
	if len(reqs) != 2 {
		t.Fatalf("want a start and an outcome summary call, got %d", len(reqs))
	}
	for i, want := range []string{startSummaryPrompt, endSummaryPrompt} {
		r := reqs[i]
		if r.Role != "" || r.RoleID != "" || len(r.Tools) != 0 || r.Model != "summary-model" {
			t.Errorf("call %d is not a raw call: role %q, %d tools, model %q", i, r.Role, len(r.Tools), r.Model)
		}
		if len(r.Messages) != 2 || r.Messages[0].Role != "system" || r.Messages[0].Content != want || r.Messages[1].Role != "user" {
			t.Fatalf("call %d messages = %+v", i, r.Messages)
		}
		body := r.Messages[1].Content
		if !strings.Contains(body, "Fix the **parser** so empty input works") {
			t.Errorf("call %d lacks the task: %q", i, body)
		}
		b, _ := json.Marshal(r.Messages)
		for _, c := range canaries {
			if strings.Contains(string(b), c) {
				t.Errorf("call %d carries %q: %s", i, c, b)
			}
		}
	}
	if end := reqs[1].Messages[1].Content; !strings.Contains(end, "The parser handles empty input now.") || !strings.Contains(end, "Status: success") {
		t.Errorf("the outcome summary call lacks the result: %q", end)
	}
	if got := ws.ReadSummary(id); got != "Parser fixed; it now handles empty input." {
		t.Fatalf("summary.txt = %q", got)
	}
	// Summaries are never run events.
	for _, e := range readEvents(t, ws, id) {
		if strings.Contains(string(e.Payload), "Parser fixed; it now") || strings.Contains(string(e.Payload), "Fix the parser for empty input") {
			t.Errorf("a summary reached the log: %s %s", e.Type, e.Payload)
		}
	}
}

func TestOutcomeSummaryCarriesOperatorInterrupts(t *testing.T) {
	m := &store.Meta{Task: "Write docs", Status: "error",
		Result: &store.MetaResult{Status: "error", Summary: "Gave up.", Error: &store.MetaError{Kind: "llm_unavailable", Message: "The model went away.", Detail: json.RawMessage(`"DETAIL-CANARY"`)}},
		Error:  &store.MetaError{Kind: "llm_unavailable", Message: "The model went away.", Detail: json.RawMessage(`"DETAIL-CANARY"`)}}
	ev := func(typ event.Type, p any) event.Event {
		e, _ := event.New(time.Now(), typ, p)
		return e
	}
	in := endSummaryInput(m, []event.Event{
		ev(event.Interrupt, event.InterruptPayload{Trigger: "inquiry", Handler: "inquiry_responder", Message: "How is it going?"}),
		ev(event.InterruptResolved, event.InterruptResolvedPayload{Trigger: "inquiry", Summary: "HANDLER-CANARY"}),
		ev(event.Interrupt, event.InterruptPayload{Trigger: "loop_check", Handler: "loop_detector"}),
		ev(event.PlanModification, event.PlanModificationPayload{Message: "Skip the API section"}),
	})
	for _, want := range []string{"Task:\nWrite docs", "- question: How is it going?", "- plan change: Skip the API section", "Result:\nGave up.", "Error:\nThe model went away."} {
		if !strings.Contains(in, want) {
			t.Errorf("outcome input lacks %q:\n%s", want, in)
		}
	}
	for _, bad := range []string{"DETAIL-CANARY", "HANDLER-CANARY", "loop_detector"} {
		if strings.Contains(in, bad) {
			t.Errorf("outcome input carries %q", bad)
		}
	}
}

func TestClampSummaryCaps(t *testing.T) {
	long := strings.Repeat("word ", 40)
	giant := strings.Repeat("x", 400)
	tests := []struct{ in, want string }{
		{"Fixed the slug tests.", "Fixed the slug tests."},
		{"  \"Summary: Fixed the\n\nslug   tests.\"  ", "Fixed the slug tests."},
		{"**Fixed** the `slug` tests", "Fixed the slug tests"},
		{"# Heading summary", "Heading summary"},
		{"Fix\x1b[31m red\x07 text\u202e", "Fix [31m red text"},
		{strings.TrimSpace(long), strings.TrimSpace(strings.Repeat("word ", SummaryMaxWords))},
		{"", ""},
		{"\n\t ", ""},
	}
	for _, tt := range tests {
		if got := ClampSummary(tt.in); got != tt.want {
			t.Errorf("ClampSummary(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, in := range []string{long, giant, strings.Repeat("abcdefghij ", 30), strings.Repeat("é", 500)} {
		got := ClampSummary(in)
		if n := utf8.RuneCountInString(got); n > SummaryMaxChars || n == 0 {
			t.Errorf("ClampSummary gave %d characters", n)
		}
		if n := len(strings.Fields(got)); n > SummaryMaxWords {
			t.Errorf("ClampSummary gave %d words", n)
		}
		if strings.ContainsAny(got, "\n\r") {
			t.Errorf("ClampSummary gave several lines: %q", got)
		}
	}
}

func TestSummaryIsBestEffort(t *testing.T) {
	fake := &summaryFake{Provider: provider.NewScripted(&provider.Script{Roles: canaryScript()}, 0),
		fail: &provider.Error{Category: provider.CategoryServer, StatusCode: 503, Body: "SUMMARY-FAILURE-BODY", Err: errors.New("down")}}
	s, ws := summarySession(t, fake)
	id, out := submitAndWait(t, s, Submission{Task: "Fix the parser"})
	if out.Status != store.StatusSuccess || out.Card == nil || !strings.HasPrefix(out.Card.Summary, "## Parser fixed") {
		t.Fatalf("a failing summariser changed the run: %+v", out)
	}
	if len(fake.requests()) == 0 {
		t.Fatal("the summariser was never asked")
	}
	dir, _ := ws.RunDir(id)
	if _, err := os.Stat(filepath.Join(dir, store.SummaryFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed summary must leave no summary.txt (stat: %v)", err)
	}
	for _, e := range readEvents(t, ws, id) {
		if strings.Contains(string(e.Payload), "SUMMARY-FAILURE-BODY") {
			t.Fatalf("a summariser failure reached the log: %s", e.Type)
		}
	}
	if h := s.Health(); h.ConsecutiveFailures != 0 {
		t.Fatalf("a summariser failure counted against provider health: %+v", h)
	}
}

func TestThreadSummarySendsOnlyTheThreadAndIsCached(t *testing.T) {
	fake := &summaryFake{Provider: provider.NewScripted(&provider.Script{Roles: canaryScript()}, 0), failFirst: true}
	s, ws := summarySession(t, fake)
	id, _ := submitAndWait(t, s, Submission{Task: "Fix the parser for empty input"})
	before := len(fake.requests())

	thr := &summaryFake{replies: []string{"Here it is:\n{\"title\": \"Empty input parser fix, done quickly and well today\", \"description\": \"The operator asked for\nan empty-input fix; it is done.\"}"}}
	title, desc, err := ThreadSummary(context.Background(), thr, "summary-model", ws, id)
	if err != nil {
		t.Fatal(err)
	}
	if title != "Empty input parser fix, done quickly and well" || desc != "The operator asked for an empty-input fix; it is done." {
		t.Fatalf("title %q, description %q", title, desc)
	}
	reqs := thr.requests()
	if len(reqs) != 1 {
		t.Fatalf("want one thread summary call, got %d", len(reqs))
	}
	r := reqs[0]
	if r.Role != "" || len(r.Tools) != 0 || r.Model != "summary-model" || len(r.Messages) != 2 || r.Messages[0].Content != threadSummaryPrompt {
		t.Fatalf("thread summary call = %+v", r)
	}
	th, err := LoadThread(ws, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Messages[1].Content != ThreadPrompt(th) {
		t.Fatalf("the call must carry exactly the thread text:\n%s", r.Messages[1].Content)
	}
	for _, want := range []string{"Fix the parser for empty input", "The parser handles empty input now.", "1 run(s)"} {
		if !strings.Contains(r.Messages[1].Content, want) {
			t.Errorf("thread text lacks %q", want)
		}
	}
	for _, c := range canaries {
		if strings.Contains(r.Messages[1].Content, c) {
			t.Errorf("thread text carries %q", c)
		}
	}

	// The second call is served from the cache, with or without a model.
	for _, p := range []provider.Provider{thr, nil} {
		t2, d2, err := ThreadSummary(context.Background(), p, "summary-model", ws, id)
		if err != nil || t2 != title || d2 != desc {
			t.Fatalf("cached summary = %q %q %v", t2, d2, err)
		}
	}
	if n := len(thr.requests()); n != 1 {
		t.Fatalf("a cached thread was summarised again (%d calls)", n)
	}
	if t3, _, ok := CachedThreadSummary(ws, id); !ok || t3 != title {
		t.Fatalf("CachedThreadSummary = %q %v", t3, ok)
	}
	if len(fake.requests()) != before {
		t.Fatal("the thread summary used the run's provider")
	}

	// A continuation changes the thread: the new run has no summary yet,
	// and without a model the caller is told so.
	id2, _ := submitAndWait(t, s, Submission{Task: "And the lexer", ContinuesFrom: id})
	if _, _, err := ThreadSummary(context.Background(), nil, "", ws, id2); !errors.Is(err, ErrNoSummarizer) {
		t.Fatalf("no model: err = %v", err)
	}
	failing := &summaryFake{fail: errors.New("model down")}
	if _, _, err := ThreadSummary(context.Background(), failing, "", ws, id2); err == nil {
		t.Fatal("a failed thread summary must report its error")
	}
}

func TestLoadThreadFollowsTheChain(t *testing.T) {
	script := map[string][]provider.ScriptTurn{"orchestrator": {
		turn("", finishCall("success", "one")), turn("", finishCall("success", "two")), turn("", finishCall("success", "three")),
	}}
	s, ws := summarySession(t, &summaryFake{Provider: provider.NewScripted(&provider.Script{Roles: script}, 0)})
	id1, _ := submitAndWait(t, s, Submission{Task: "first"})
	id2, _ := submitAndWait(t, s, Submission{Task: "second", ContinuesFrom: id1})
	id3, _ := submitAndWait(t, s, Submission{Task: "third", ContinuesFrom: id2})
	th, err := LoadThread(ws, id3)
	if err != nil {
		t.Fatal(err)
	}
	if id := th.Identity; id.Runs != 3 || id.Continuations != 2 || id.FirstTask != "first" || id.LatestHumanText != "third" {
		t.Fatalf("identity = %+v", id)
	}
	if th2, _ := LoadThread(ws, id2); th2.Identity.Runs != 2 {
		t.Fatalf("the thread of the middle run holds %d runs", th2.Identity.Runs)
	}
	if _, err := LoadThread(ws, "../../etc"); err == nil {
		t.Fatal("an invalid run id must be refused")
	}

	// A cycle and a hostile link both end the chain.
	m1, _ := ws.ReadMeta(id1)
	m1.ContinuesFrom = id3
	if err := ws.WriteMeta(m1); err != nil {
		t.Fatal(err)
	}
	th, err = LoadThread(ws, id3)
	if err != nil || th.Identity.Runs != 3 {
		t.Fatalf("cycle: %+v %v", th.Identity, err)
	}
	m1.ContinuesFrom = "../../../outside"
	if err := ws.WriteMeta(m1); err != nil {
		t.Fatal(err)
	}
	if th, err = LoadThread(ws, id3); err != nil || th.Identity.Runs != 3 {
		t.Fatalf("hostile link: %+v %v", th.Identity, err)
	}
}

func TestScriptedModelAnswersSummariserCalls(t *testing.T) {
	sc := provider.NewScripted(&provider.Script{
		Roles:     map[string][]provider.ScriptTurn{"orchestrator": {turn("", finishCall("success", "done")), turn("", finishCall("success", "again"))}},
		Summaries: []string{"Scripted start summary"},
	}, 0)
	ctx := context.Background()
	role := func() string {
		resp, err := sc.Complete(ctx, provider.Request{Role: "orchestrator"}, nil)
		if err != nil || len(resp.ToolCalls) != 1 {
			t.Fatalf("role call: %v %+v", err, resp)
		}
		return resp.ToolCalls[0].ID
	}
	raw := func(input string) string {
		resp, err := sc.Complete(ctx, summaryRequest("m", endSummaryPrompt, input), nil)
		if err != nil || len(resp.ToolCalls) != 0 {
			t.Fatalf("summary call: %v %+v", err, resp)
		}
		return resp.Content
	}
	first := role()
	if got := raw(startSummaryInput("Fix it")); got != "Scripted start summary" {
		t.Fatalf("scripted summary = %q", got)
	}
	m := &store.Meta{Task: "Fix the slug tests\n\nmore detail", Status: "success", Result: &store.MetaResult{Status: "success", Summary: "## Slug tests fixed\n\nDetails."}}
	if got := raw(endSummaryInput(m, nil)); got != "Slug tests fixed" {
		t.Fatalf("fallback outcome summary = %q", got)
	}
	if got := raw(startSummaryInput("Task: tidy the README, then stop")); got != "tidy the README, then stop" {
		t.Fatalf("fallback task summary = %q", got)
	}
	// Summariser calls leave the role conversation's numbering alone.
	if second := role(); first != "call_1_0" || second != "call_2_0" {
		t.Fatalf("role call ids %s, %s", first, second)
	}
}

func TestRecordTypeReadsTheHeadOnly(t *testing.T) {
	e, _ := event.New(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), event.AskHuman, event.AskHumanPayload{ID: "q", Question: `"type":"run_status"`})
	line, _ := json.Marshal(e)
	if got := recordType(line); got != event.AskHuman {
		t.Fatalf("recordType = %q", got)
	}
	for line, want := range map[string]event.Type{
		`{"payload":{"type":"run_status"},"type":"tool_result"}`: event.ToolResult,
		`{"timestamp":"x","type":"run\"_status","payload":{}}`:   event.Type(`run"_status`),
		`not json`: "",
	} {
		if got := recordType([]byte(line)); got != want {
			t.Errorf("recordType(%s) = %q, want %q", line, got, want)
		}
	}
}

// A resumed run's outcome summary reads the whole run, the backlog from
// before the restart included, not only what happened after it.
func TestOutcomeSummaryOfAResumedRunReadsItsBacklog(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, resumeScript())
	id := stopAt(t, h, "coder", 2)
	ws := testWS(h.dir)
	path, err := ws.LogPath(id)
	if err != nil {
		t.Fatal(err)
	}
	e, err := event.New(time.Now(), event.PlanModification, event.PlanModificationPayload{Message: "Skip the API section"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write(append(e.AppendJSON(nil), '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	fake := &summaryFake{Provider: provider.NewScripted(&provider.Script{Roles: resumeScript()}, 0)}
	sess, err := OpenSession(SessionConfig{Workspace: h.dir, Sealer: testSealer(h.dir), Guild: g, Deployment: h.opts.Deployment,
		Provider: fake, NoInput: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.Resume(id); err != nil {
		t.Fatalf("resume: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := sess.Wait(ctx); err != nil || out.Status != store.StatusSuccess {
		t.Fatalf("outcome %+v %v", out, err)
	}
	var end string
	for _, r := range fake.requests() {
		if len(r.Messages) == 2 && r.Messages[0].Content == endSummaryPrompt {
			end = r.Messages[1].Content
		}
	}
	if !strings.Contains(end, "- plan change: Skip the API section") || !strings.Contains(end, "Status: success") {
		t.Fatalf("the outcome summary of the resumed run lacks its backlog's plan change:\n%s", end)
	}
}
