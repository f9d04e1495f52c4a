package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

func TestIndexIsServedWithTheCSP(t *testing.T) {
	ts := newTestServer(t)
	res := ts.do("GET", "/", nil, nil)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(body), `<script type="module" src="static/app.js">`) {
		t.Fatalf("GET /: %d %s", res.StatusCode, body)
	}
	if got := res.Header.Get("Content-Security-Policy"); !strings.Contains(got, "script-src 'self'") || strings.Contains(got, "unsafe-inline") {
		t.Errorf("CSP %q", got)
	}
	if strings.Contains(string(body), "style=") || strings.Contains(string(body), "onload") {
		t.Error("index.html has inline style or handlers")
	}
	for _, asset := range []string{"/static/app.js", "/static/css/app.css", "/static/vendor/showdown.js", "/static/css/favicon-running.svg"} {
		if res := ts.do("GET", asset, nil, nil); res.StatusCode != 200 {
			t.Errorf("GET %s: %d", asset, res.StatusCode)
		}
	}
	if res := ts.do("GET", "/static/tooltip.test.js", nil, nil); res.StatusCode != 404 {
		t.Errorf("test suites are served in production: %d", res.StatusCode)
	}
}

func TestConfigCarriesLabelsAndNoDeploymentSecrets(t *testing.T) {
	ts := newTestServer(t)
	var c Config
	res := ts.do("GET", "/api/config", nil, &c)
	raw, _ := io.ReadAll(res.Body)
	if c.Version != "test-1.2.3" || c.EntryRole != "orchestrator" || len(c.Roles) < 3 {
		t.Fatalf("config %+v", c)
	}
	if got := c.Labels.Roles["coder"].Label.Friendly; len(got) == 0 || got[0] != "Coder" {
		t.Errorf("coder label %v", got)
	}
	if len(c.Visualization.PseudoRoleLabels) == 0 {
		t.Error("no visualization section")
	}
	for _, secret := range []string{"apiBase", "127.0.0.1:8080", "apiKey", "provider", "contextWindow"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("config mentions %q", secret)
		}
	}
}

func TestSettingsValidateStrictly(t *testing.T) {
	ts := newTestServer(t)
	var s Settings
	ts.do("GET", "/api/settings", nil, &s)
	if s != (Settings{}) {
		t.Fatalf("fresh settings %+v", s)
	}
	if res := ts.do("PUT", "/api/settings", Settings{Effort: "thorough", LogLevel: "standard"}, &s); res.StatusCode != 200 {
		t.Fatalf("PUT: %d", res.StatusCode)
	}
	if got := ts.sess.WS.ReadSettings(); got.Effort != "thorough" || got.LogLevel != "standard" {
		t.Errorf("stored %+v", got)
	}
	ts.wantError("PUT", "/api/settings", map[string]string{"effort": "huge"}, 400, "invalid_body")
	ts.wantError("PUT", "/api/settings", map[string]string{"effort": "quick", "colour": "red"}, 400, "invalid_body")
	ts.wantError("PUT", "/api/settings", `{"effort":"quick"} {"effort":"quick"}`, 400, "invalid_body")
	ts.wantError("PUT", "/api/settings", `[1,2]`, 400, "invalid_body")
	req, _ := http.NewRequest("PUT", ts.http.URL+"/api/settings", strings.NewReader(`{"effort":"quick"}`))
	req.Header.Set("Content-Type", "text/plain")
	ts.authorize(req)
	if res := sent(t, http.DefaultClient, req); res.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain body: %d", res.StatusCode)
	}
}

func TestCreateRun(t *testing.T) {
	ts := newTestServer(t)
	past := addPastRun(t, ts.sess.WS, "delegation.jsonl", nil)
	ts.wantError("POST", "/api/runs", map[string]string{"task": "  "}, 400, "invalid_body")
	ts.wantError("POST", "/api/runs", map[string]string{"task": "x", "effort": "max"}, 400, "invalid_body")
	ts.wantError("POST", "/api/runs", map[string]string{"task": "x", "continuesFrom": "run-20990101-000000"}, 404, "unknown_run")
	ts.wantError("POST", "/api/runs", map[string]string{"task": "x", "continuesFrom": "../etc"}, 404, "unknown_run")
	var created map[string]string
	res := ts.do("POST", "/api/runs", map[string]string{"task": "Fix the tests", "effort": "quick", "continuesFrom": past}, &created)
	if res.StatusCode != 201 || !store.ValidRunID(created["runId"]) {
		t.Fatalf("POST /api/runs: %d %v", res.StatusCode, created)
	}
	if got := ts.sess.submitted[0]; got.Task != "Fix the tests" || got.Effort != "quick" || got.ContinuesFrom != past {
		t.Errorf("submitted %+v", got)
	}
	ts.wantError("POST", "/api/runs", map[string]string{"task": "another"}, 409, "run_in_progress")
}

func TestListRunsNewestFirstWithSummary(t *testing.T) {
	ts := newTestServer(t)
	older := addPastRun(t, ts.sess.WS, "delegation.jsonl", nil) // run-20250314-093000
	newer := addPastRun(t, ts.sess.WS, "inquiry.jsonl", nil)    // run-20250314-110000
	dir, _ := ts.sess.WS.RunDir(newer)
	if err := store.WriteFileAtomic(dir+"/"+store.SummaryFile, []byte("Tokenizer tests written\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Runs []map[string]any `json:"runs"`
	}
	ts.do("GET", "/api/runs", nil, &out)
	if len(out.Runs) != 2 || out.Runs[0]["runId"] != newer || out.Runs[1]["runId"] != older {
		t.Fatalf("runs %v", out.Runs)
	}
	if out.Runs[0]["summary"] != "Tokenizer tests written" {
		t.Errorf("summary %v", out.Runs[0]["summary"])
	}
	if v, ok := out.Runs[1]["summary"]; !ok || v != nil {
		t.Errorf("a run without summary.txt must have summary null, got %v (present %v)", v, ok)
	}
}

func TestRunViewOfAPastRun(t *testing.T) {
	ts := newTestServer(t)
	id := addPastRun(t, ts.sess.WS, "delegation.jsonl", nil)
	var v RunView
	res := ts.do("GET", "/api/runs/"+id, nil, &v)
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || v.RunID != id || v.Status != "success" || v.Result == nil {
		t.Fatalf("run view: %d %s", res.StatusCode, raw)
	}
	if len(v.Roles) != 3 || v.Roles[0].Role != "orchestrator" || v.Roles[0].Status != "success" {
		t.Errorf("roles %+v", v.Roles)
	}
	if len(v.RoleTree) != 1 || len(v.RoleTree[0].Children) != 2 {
		t.Errorf("role tree %+v", v.RoleTree)
	}
	if len(v.Questions) != 1 || !v.Questions[0].Answered || v.Questions[0].Answer == "" {
		t.Errorf("questions %+v", v.Questions)
	}
	if len(v.RecentLog) == 0 || len(v.RecentLog) > recentEvents {
		t.Errorf("recent log has %d events", len(v.RecentLog))
	}
	if v.CurrentActivity != "" {
		t.Errorf("a finished run has no current activity, got %q", v.CurrentActivity)
	}
	// The model's name is the meters' (the terminal's footer shows it
	// too), and nowhere else: not the log's payloads, not the record's.
	if v.Meters == nil || v.Meters.Model != "qwen2.5-coder:32b" || v.Meters.RoleID == "" || v.Meters.Context <= 0 {
		t.Errorf("meters %+v", v.Meters)
	}
	if n := strings.Count(string(raw), "qwen2.5-coder"); n != 1 || strings.Contains(string(raw), "secret-model-name") {
		t.Errorf("the run view names the model %d times (want once, in the meters), or names the record's", n)
	}
	if v.FlowVersion == 0 || v.Totals.Tokens == 0 {
		t.Errorf("flow version %d, totals %+v", v.FlowVersion, v.Totals)
	}

	inq := addPastRun(t, ts.sess.WS, "inquiry.jsonl", nil)
	ts.do("GET", "/api/runs/"+inq, nil, &v)
	if len(v.Interrupts) != 1 || v.Interrupts[0].Trigger != "inquiry" || !v.Interrupts[0].Resolved || v.Interrupts[0].Answer == "" {
		t.Errorf("interrupts %+v", v.Interrupts)
	}

	ts.wantError("GET", "/api/runs/run-20990101-000000", nil, 404, "unknown_run")
	ts.wantError("GET", "/api/runs/not-a-run", nil, 404, "unknown_run")
}

func TestLatestRunAndFlowAlias(t *testing.T) {
	ts := newTestServer(t)
	ts.wantError("GET", "/api/run", nil, 404, "no_runs")
	ts.wantError("GET", "/api/run/flow", nil, 404, "no_runs")
	addPastRun(t, ts.sess.WS, "delegation.jsonl", nil)
	newer := addPastRun(t, ts.sess.WS, "inquiry.jsonl", nil)
	var v RunView
	ts.do("GET", "/api/run", nil, &v)
	if v.RunID != newer {
		t.Errorf("latest run %s, want %s", v.RunID, newer)
	}
	var env render.Envelope
	ts.do("GET", "/api/run/flow", nil, &env)
	if env.Kind != "snapshot" || env.Model == nil || env.Model.RunID != newer {
		t.Errorf("flow alias %+v", env)
	}
}

func TestLogPaging(t *testing.T) {
	ts := newTestServer(t)
	id := addPastRun(t, ts.sess.WS, "delegation.jsonl", nil)
	var page struct {
		Events []LogEntry `json:"events"`
		Total  int        `json:"total"`
	}
	ts.do("GET", "/api/runs/"+id+"/log?offset=2&limit=3", nil, &page)
	if len(page.Events) != 3 || page.Events[0].Seq != 2 || page.Events[2].Seq != 4 || page.Total < 40 {
		t.Fatalf("page %+v", page)
	}
	ts.do("GET", "/api/runs/"+id+"/log?limit=500", nil, &page)
	if len(page.Events) != page.Total {
		t.Errorf("got %d of %d", len(page.Events), page.Total)
	}
	for _, e := range page.Events {
		if strings.Contains(string(e.Payload), "qwen2.5") {
			t.Fatalf("log payload of %s carries the model name", e.Type)
		}
	}
	ts.wantError("GET", "/api/runs/"+id+"/log?limit=501", nil, 400, "invalid_query")
	ts.wantError("GET", "/api/runs/"+id+"/log?offset=-1", nil, 400, "invalid_query")
	ts.wantError("GET", "/api/runs/"+id+"/log?limit=x", nil, 400, "invalid_query")
	ts.wantError("GET", "/api/runs/run-20990101-000000/log", nil, 404, "unknown_run")
}

func TestTranscriptOfOneInstance(t *testing.T) {
	ts := newTestServer(t)
	id := addPastRun(t, ts.sess.WS, "delegation.jsonl", nil)
	var tr Transcript
	res := ts.do("GET", "/api/runs/"+id+"/transcript?roleId=planner-1-2", nil, &tr)
	if res.StatusCode != 200 || tr.Role != "planner" || len(tr.Messages) == 0 {
		t.Fatalf("transcript: %d %+v", res.StatusCode, tr)
	}
	sawTool := false
	for _, m := range tr.Messages {
		if m.Kind == "tool_result" {
			sawTool = true
			if m.Tool == "" {
				t.Errorf("tool result without tool: %+v", m)
			}
		}
	}
	if !sawTool {
		t.Errorf("no tool results in %+v", tr.Messages)
	}
	ts.wantError("GET", "/api/runs/"+id+"/transcript?roleId=nobody-9-9", nil, 404, "unknown_role")
	ts.wantError("GET", "/api/runs/"+id+"/transcript", nil, 400, "invalid_query")
}

func TestPlanAndThread(t *testing.T) {
	ts := newTestServer(t)
	prior := addPastRun(t, ts.sess.WS, "delegation.jsonl", nil)
	id := addPastRun(t, ts.sess.WS, "inquiry.jsonl", func(m *store.Meta) { m.ContinuesFrom = prior })
	var plan map[string]any
	ts.do("GET", "/api/runs/"+id+"/plan", nil, &plan)
	if v, ok := plan["content"]; !ok || v != nil {
		t.Errorf("no plan.md: %v", plan)
	}
	dir, _ := ts.sess.WS.RunDir(id)
	_ = store.WriteFileAtomic(dir+"/"+store.PlanFile, []byte("# Plan\n\n1. Write tests"), 0o644)
	ts.do("GET", "/api/runs/"+id+"/plan", nil, &plan)
	if plan["content"] != "# Plan\n\n1. Write tests" {
		t.Errorf("plan %v", plan)
	}
	ts.wantError("GET", "/api/runs/run-20990101-000000/plan", nil, 404, "unknown_run")

	var th ThreadView
	ts.do("GET", "/api/runs/"+id+"/thread", nil, &th)
	if len(th.Lineage) != 2 || th.Lineage[0] != prior || th.Lineage[1] != id || th.RunID != id {
		t.Fatalf("thread %+v", th)
	}
	kinds := map[string]int{}
	for _, e := range th.Entries {
		kinds[e.Kind]++
	}
	if kinds["human"] != 2 || kinds["orchestrator"] < 1 || kinds["marker"] == 0 {
		t.Errorf("thread entries by kind %v", kinds)
	}
	if th.Identity.Runs != 2 || th.Identity.Continuations != 1 || th.Identity.FirstTask == "" || th.Identity.LatestHumanText == "" {
		t.Errorf("identity %+v", th.Identity)
	}
	// The coder's question is an internal role's, not the thread's.
	if kinds["question"] != 0 || kinds["answer"] != 0 {
		t.Errorf("an internal role's question is in the thread: %v", kinds)
	}
	ts.wantError("GET", "/api/runs/run-20990101-000000/thread", nil, 404, "unknown_run")
	ts.wantError("GET", "/api/runs/not-a-run/thread", nil, 404, "unknown_run")
}

func TestQuestionsAndAnswers(t *testing.T) {
	ts := newTestServer(t)
	ts.sess.questions = []runner.Question{{AskHumanPayload: event.AskHumanPayload{ID: "q-1", Question: "Which **one**?",
		Options: []event.Option{{Label: "A"}}}, RunID: "run-20250101-000000", AskedAt: time.Now()}}
	var qs struct {
		Questions []QuestionView `json:"questions"`
	}
	ts.do("GET", "/api/questions", nil, &qs)
	if len(qs.Questions) != 1 || qs.Questions[0].ID != "q-1" || qs.Questions[0].Options[0].Label != "A" {
		t.Fatalf("questions %+v", qs)
	}
	ts.wantError("POST", "/api/answer", map[string]string{"id": "q-2", "answer": "A"}, 404, "unknown_question")
	ts.wantError("POST", "/api/answer", map[string]string{"id": "q-1", "answer": " "}, 400, "invalid_body")
	var ok map[string]bool
	if res := ts.do("POST", "/api/answer", map[string]string{"id": "q-1", "answer": "A"}, &ok); res.StatusCode != 200 || !ok["ok"] {
		t.Fatalf("answer: %d", res.StatusCode)
	}
	if ts.sess.answered["q-1"] != "A" {
		t.Error("the answer did not reach the session")
	}
	ts.wantError("POST", "/api/answer", map[string]string{"id": "q-1", "answer": "B"}, 409, "already_answered")
}

func TestOperatorControls(t *testing.T) {
	ts := newTestServer(t)
	ts.wantError("POST", "/api/runs/run-20250101-000000/interrupt", map[string]string{"kind": "inquiry", "message": "why?"}, 409, "run_not_active")
	ts.wantError("POST", "/api/runs/run-20250101-000000/pause", nil, 409, "run_not_active")
	id := ts.startRun("go")
	var ok map[string]bool
	if res := ts.do("POST", "/api/runs/"+id+"/interrupt", map[string]string{"kind": "plan_modification", "message": "Use Rust"}, &ok); res.StatusCode != 202 || !ok["ok"] {
		t.Fatalf("interrupt: %d", res.StatusCode)
	}
	ts.wantError("POST", "/api/runs/"+id+"/interrupt", map[string]string{"kind": "shout", "message": "x"}, 400, "invalid_body")
	ts.wantError("POST", "/api/runs/"+id+"/interrupt", map[string]string{"kind": "inquiry", "message": ""}, 400, "invalid_body")
	ts.wantError("POST", "/api/runs/"+id+"/interrupt", map[string]any{"kind": "inquiry", "message": "x", "extra": 1}, 400, "invalid_body")
	var v RunView
	ts.do("GET", "/api/runs/"+id, nil, &v)
	if !v.InterruptPending {
		t.Error("interruptPending is false after an interrupt")
	}
	ts.wantError("POST", "/api/runs/"+id+"/resume", nil, 409, "not_paused")
	for _, verb := range []string{"pause", "resume", "terminate"} {
		if res := ts.do("POST", "/api/runs/"+id+"/"+verb, nil, nil); res.StatusCode != 202 {
			t.Errorf("%s: %d", verb, res.StatusCode)
		}
	}
}

func TestHealthIsTheRestrictedView(t *testing.T) {
	ts := newTestServer(t)
	now := time.Now().UTC()
	ts.sess.health = runner.HealthView{State: runner.HealthSuspended, Category: "server", LastFailureAt: &now, ConsecutiveFailures: 3, SuspendedRunID: "run-20250101-000000"}
	var got map[string]any
	ts.do("GET", "/api/health", nil, &got)
	for k := range got {
		switch k {
		case "state", "category", "lastSuccessAt", "lastFailureAt", "consecutiveFailures", "nextProbeAt", "suspendedRunId":
		default:
			t.Errorf("health carries %q", k)
		}
	}
	if got["state"] != "suspended" || got["category"] != "server" {
		t.Errorf("health %v", got)
	}
}

func TestUnknownRoutesAnswerJSON(t *testing.T) {
	ts := newTestServer(t)
	ts.wantError("GET", "/api/nope", nil, 404, "not_found")
}

// TestFlowDeltaAfterOneEvent: a client at the current version that sees one
// new event gets a delta holding just what changed, then the operation's
// details on request.
func TestFlowDeltaAfterOneEvent(t *testing.T) {
	ts := newTestServer(t)
	id := ts.startRun("go")
	s := ts.sess
	s.Emit(t, event.RunStarted, event.RunStartedPayload{RunID: id, Task: "go", Effort: "standard", EntryRole: "orchestrator", Model: "secret-model"})
	s.Emit(t, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "go"})
	s.Emit(t, event.LLMCall, event.LLMCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Usage: event.Usage{TotalTokens: 100}, ElapsedMs: 10, Model: "secret-model"})

	var snap render.Envelope
	waitFor(t, "the live model", func() bool {
		ts.do("GET", "/api/runs/"+id+"/flow?version=0", nil, &snap)
		return snap.Version == 3
	})
	if snap.Kind != "snapshot" || len(snap.Model.Operations) != 1 {
		t.Fatalf("snapshot %+v", snap)
	}
	s.Emit(t, event.ToolCall, event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", CallID: "c1", Arguments: `{"path":"README.md"}`})
	var delta render.Envelope
	waitFor(t, "the tool call", func() bool {
		ts.do("GET", "/api/runs/"+id+"/flow?version=3", nil, &delta)
		return delta.Version == 4
	})
	if delta.Kind != "delta" || delta.From != 3 || len(delta.Operations) != 1 || delta.Operations[0].Tool != "read_file" {
		t.Fatalf("delta %+v", delta)
	}
	merged := render.Merge(*snap.Model, delta)
	var now render.Envelope
	ts.do("GET", "/api/runs/"+id+"/flow?version=0", nil, &now)
	if len(merged.Operations) != len(now.Model.Operations) || merged.ActiveOperation != now.Model.ActiveOperation {
		t.Errorf("merge of snapshot and delta differs from the new snapshot")
	}
	var op render.Operation
	ts.do("GET", "/api/runs/"+id+"/flow?operation="+delta.Operations[0].ID, nil, &op)
	if !strings.Contains(op.Details, "README.md") {
		t.Errorf("details %q", op.Details)
	}
	ts.wantError("GET", "/api/runs/"+id+"/flow?operation=op-99", nil, 404, "unknown_operation")
	ts.wantError("GET", "/api/runs/"+id+"/flow?version=x", nil, 400, "invalid_query")
	ts.wantError("GET", "/api/runs/run-20990101-000000/flow", nil, 404, "unknown_run")
}

func TestEventStream(t *testing.T) {
	ts := newTestServer(t)
	id := ts.startRun("go")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.http.URL+"/api/events", nil)
	ts.authorize(req)
	res, err := ts.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	lines := bufio.NewScanner(res.Body)
	next := func() (string, string) {
		var name, data string
		for lines.Scan() {
			l := lines.Text()
			switch {
			case strings.HasPrefix(l, "event: "):
				name = strings.TrimPrefix(l, "event: ")
			case strings.HasPrefix(l, "data: "):
				data = strings.TrimPrefix(l, "data: ")
			case l == "" && name != "":
				return name, data
			}
		}
		t.Fatalf("stream ended: %v", lines.Err())
		return "", ""
	}
	if name, _ := next(); name != "hello" {
		t.Fatalf("first message %q", name)
	}
	ts.sess.Emit(t, event.RunStarted, event.RunStartedPayload{RunID: id, Task: "go"})
	ts.sess.Bus.Publish(event.Event{Type: event.LLMDelta, Ephemeral: true, Payload: json.RawMessage(`{"roleId":"orchestrator-0-1","content":"Hel"}`)})
	name, data := next()
	var n eventNotice
	if err := json.Unmarshal([]byte(data), &n); err != nil || name != "event" || n.Type != event.RunStarted || n.RunID != id {
		t.Fatalf("notice %s %s", name, data)
	}
	name, data = next()
	if name != "delta" || !strings.Contains(data, `"content":"Hel"`) || !strings.Contains(data, id) {
		t.Fatalf("delta %s %s", name, data)
	}
}

func TestGuardRejectsForeignHostsAndOrigins(t *testing.T) {
	ts := newTestServer(t)
	send := func(method, path, host string, hdr map[string]string, body string) *http.Response {
		req, _ := http.NewRequest(method, ts.http.URL+path, strings.NewReader(body))
		if host != "" {
			req.Host = host
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		ts.authorize(req)
		return sent(t, ts.http.Client(), req)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.http.URL, "http://"))
	for _, host := range []string{"evil.example:" + port, "evil.example", "evil.example:19000", "192.168.1.20:" + port,
		"192.168.1.20:19000", "localhost.evil.example:" + port, "localhost.evil.example:19000"} {
		if res := send("GET", "/api/health", host, nil, ""); res.StatusCode != 403 {
			t.Errorf("Host %s: %d", host, res.StatusCode)
		}
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "localhost:19000", "127.0.0.1:19000", "[::1]:19000"} {
		if res := send("GET", "/api/health", host, nil, ""); res.StatusCode != 200 {
			t.Errorf("Host %s: %d", host, res.StatusCode)
		}
	}
	self := ts.http.URL
	body := `{"effort":"quick","logLevel":""}`
	if res := send("PUT", "/api/settings", "", map[string]string{"Origin": "http://evil.example"}, body); res.StatusCode != 403 {
		t.Errorf("foreign Origin: %d", res.StatusCode)
	}
	if res := send("PUT", "/api/settings", "", map[string]string{"Origin": "null"}, body); res.StatusCode != 403 {
		t.Errorf("null Origin: %d", res.StatusCode)
	}
	if res := send("PUT", "/api/settings", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, body); res.StatusCode != 403 {
		t.Errorf("cross-site fetch: %d", res.StatusCode)
	}
	if res := send("PUT", "/api/settings", "", map[string]string{"Origin": self, "Sec-Fetch-Site": "same-origin"}, body); res.StatusCode != 200 {
		t.Errorf("same origin: %d", res.StatusCode)
	}
	// Through a port forward the page's Origin and Host name the forward's
	// port: a write from it passes; a page on another loopback port is
	// another origin, and its write is refused.
	if res := send("PUT", "/api/settings", "localhost:19000", map[string]string{"Origin": "http://localhost:19000", "Sec-Fetch-Site": "same-origin"}, body); res.StatusCode != 200 {
		t.Errorf("same origin through a forward: %d", res.StatusCode)
	}
	for _, origin := range []string{"http://localhost:9999", "http://127.0.0.1:19000", "http://evil.example:19000"} {
		if res := send("PUT", "/api/settings", "localhost:19000", map[string]string{"Origin": origin}, body); res.StatusCode != 403 {
			t.Errorf("Origin %s to a forward: %d", origin, res.StatusCode)
		}
	}
	if res := send("PUT", "/api/settings", "localhost:19000", map[string]string{"Origin": "http://localhost:19000", "Sec-Fetch-Site": "same-site"}, body); res.StatusCode != 403 {
		t.Errorf("a same-site page on another loopback port: %d", res.StatusCode)
	}
	if res := send("GET", "/api/health", "", map[string]string{"Origin": "http://evil.example"}, ""); res.StatusCode != 200 {
		t.Errorf("a cross-origin GET is not state-changing: %d", res.StatusCode)
	}
	big := `{"effort":"` + strings.Repeat("x", maxBody) + `"}`
	if res := send("PUT", "/api/settings", "", nil, big); res.StatusCode != 413 {
		t.Errorf("oversized body: %d", res.StatusCode)
	}
}

// TestGuardTokenBeyondLoopback: a wildcard bind requires the token as
// loopback does, and accepts IP literals on its port, never other names.
func TestGuardTokenBeyondLoopback(t *testing.T) {
	g := newGuard(&net.TCPAddr{IP: net.IPv4zero, Port: 8765}, "abc123", "/s/0123")
	if g.url() != "http://127.0.0.1:8765/?token=abc123" {
		t.Errorf("url %s", g.url())
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]bool{"ok": true}) })
	serve := func(target string, cookie string) *http.Response {
		req, _ := http.NewRequest("GET", target, nil)
		req.Host = "10.0.0.5:8765"
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: "guildhall_token_8765", Value: cookie})
		}
		rec := httptest.NewRecorder()
		g.serve(rec, req, ok)
		return rec.Result()
	}
	if res := serve("/api/health", ""); res.StatusCode != 401 {
		t.Errorf("no token: %d", res.StatusCode)
	}
	res := serve("/?token=abc123", "")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/s/0123/" {
		t.Errorf("token visit: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if res := serve("/api/health", "abc123"); res.StatusCode != 200 {
		t.Errorf("cookie: %d", res.StatusCode)
	}
	for host, want := range map[string]bool{"10.0.0.5:8765": true, "localhost:8765": true, "localhost:19000": true,
		"10.0.0.5:9999": false, "box.lan:8765": false, "box.lan:19000": false, "10.0.0.5": false} {
		if got := g.hostAllowed(host); got != want {
			t.Errorf("hostAllowed(%s) = %v", host, got)
		}
	}
	lo := newGuard(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8765}, "abc123", "/s/0123")
	// Loopback names on any port (a port forward names its own local
	// port); every other name or address on no port at all.
	for host, want := range map[string]bool{
		"127.0.0.1:8765": true, "localhost:8765": true, "[::1]:8765": true,
		"127.0.0.1:8766": true, "localhost:19000": true, "LOCALHOST:19000": true, "[::1]:19000": true,
		"10.0.0.5:8765": false, "10.0.0.5:19000": false, "evil.example:8765": false, "evil.example:19000": false,
		"localhost.evil.example:19000": false, "localhost.:19000": false, "localhost": false, "localhost:": false,
		"[::1]": false, "127.0.0.1.nip.io:19000": false,
	} {
		if got := lo.hostAllowed(host); got != want {
			t.Errorf("loopback hostAllowed(%s) = %v", host, got)
		}
	}
}

func TestServeBindsLoopbackAndStops(t *testing.T) {
	sess := newFakeSession(t)
	ts := newTestServer(t)
	s, err := New(sess, ts.srv.guild, "v")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	url, err := s.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base, token, _ := strings.Cut(url, "?token=")
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/") || token != s.Token() || len(token) != 64 {
		t.Fatalf("url %s", url)
	}
	req, _ := http.NewRequest("GET", base+"api/health", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET health: %v %v", err, res)
	}
	res.Body.Close()
	cancel()
	waitFor(t, "shutdown", func() bool {
		r, err := http.Get(base + "api/health")
		if err == nil {
			r.Body.Close()
		}
		return err != nil
	})
}

// TestChangesRoute: GET /api/runs/:id/changes serves the session's change
// set of a known run, and 404 for a run the workspace does not hold.
func TestChangesRoute(t *testing.T) {
	ts := newTestServer(t)
	id := addPastRun(t, ts.sess.WS, "delegation.jsonl", nil)
	var v ChangesView
	if res := ts.do("GET", "/api/runs/"+id+"/changes", nil, &v); res.StatusCode != 200 || v.RunID != id || v.Source != "log" || v.Files == nil {
		t.Fatalf("changes: %d %+v", res.StatusCode, v)
	}
	ts.wantError("GET", "/api/runs/run-20990101-000000/changes", nil, 404, "unknown_run")
	ts.wantError("GET", "/api/runs/..%2f..%2fetc/changes", nil, 404, "unknown_run")
}
