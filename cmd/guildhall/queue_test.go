package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// writeScript writes a scripted conversation for --provider script: each
// role's replies are lists of tool calls.
func writeScript(t *testing.T, roles map[string][][]map[string]any) string {
	t.Helper()
	type call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	type turn struct {
		ToolCalls []call `json:"toolCalls"`
	}
	script := map[string]map[string][]turn{"roles": {}}
	for role, turns := range roles {
		for _, calls := range turns {
			var tr turn
			for _, c := range calls {
				args, _ := json.Marshal(c["args"])
				tr.ToolCalls = append(tr.ToolCalls, call{Name: c["name"].(string), Arguments: args})
			}
			script["roles"][role] = append(script["roles"][role], tr)
		}
	}
	b, _ := json.Marshal(script)
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func finishTurn(status, summary string) []map[string]any {
	return []map[string]any{{"name": "finish", "args": map[string]any{"status": status, "summary": summary}}}
}

var itemIDPattern = regexp.MustCompile(`q-[0-9]+-[0-9]+`)

func mustCLI(t *testing.T, want int, args ...string) cliResult {
	t.Helper()
	res := runCLI(t, "", args...)
	if res.code != want {
		t.Fatalf("guildhall %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.code, want, res.stdout, res.stderr)
	}
	return res
}

func TestQueueCLIParkAnswerAndManage(t *testing.T) {
	ws := t.TempDir()
	w := []string{"--workspace", ws}
	run := func(script string) []string {
		return []string{"queue", "run", "--workspace", ws, "--guild", testGuild, "--provider", "script", "--script", script}
	}

	res := mustCLI(t, 0, append([]string{"queue", "add", "--effort", "quick"}, append(w, "Set up the database")...)...)
	first := itemIDPattern.FindString(res.stdout)
	if first == "" || !strings.Contains(res.stdout, "position 1 of 1") || !strings.Contains(res.stdout, "guildhall queue run") {
		t.Fatalf("add said:\n%s", res.stdout)
	}
	res = mustCLI(t, 0, append([]string{"queue", "add"}, append(w, "Write the README")...)...)
	second := itemIDPattern.FindString(res.stdout)
	if !strings.Contains(res.stdout, "position 2 of 2") {
		t.Fatalf("second add said:\n%s", res.stdout)
	}
	res = mustCLI(t, 0, append([]string{"queue", "mv", second, "top"}, w...)...)
	if !strings.Contains(res.stdout, "moved "+second+" to position 1 of 2") {
		t.Fatalf("mv said:\n%s", res.stdout)
	}
	res = mustCLI(t, 0, append([]string{"queue", "ls"}, w...)...)
	if i, j := strings.Index(res.stdout, "Write the README"), strings.Index(res.stdout, "Set up the database"); i < 0 || j < i {
		t.Fatalf("ls after mv should list the README first:\n%s", res.stdout)
	}

	// The README run finishes; the database run asks before any writer
	// started, so it parks.
	script := writeScript(t, map[string][][]map[string]any{"orchestrator": {
		finishTurn("success", "README written"),
		{{"name": "ask_human", "args": map[string]any{"question": "Which database?",
			"options": []map[string]string{{"label": "Postgres"}, {"label": "SQLite"}}}}},
	}})
	res = mustCLI(t, exitNeedsInput, run(script)...)
	if !strings.Contains(res.stdout, "run run-") || !strings.Contains(res.stderr, first+" needs input: Which database?") ||
		!strings.Contains(res.stderr, second+" done") {
		t.Fatalf("queue run printed\nstdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	}
	res = mustCLI(t, 0, append([]string{"queue", "ls"}, w...)...)
	if !strings.Contains(res.stdout, "needs_input") || !strings.Contains(res.stdout, "question: Which database? [1. Postgres | 2. SQLite]") ||
		!strings.Contains(res.stdout, "result: README written") {
		t.Fatalf("ls after the run:\n%s", res.stdout)
	}

	res = mustCLI(t, 0, append([]string{"queue", "answer", first, "1"}, w...)...)
	if !strings.Contains(res.stdout, "answered "+first+": waiting, position 1 of 1") {
		t.Fatalf("answer said:\n%s", res.stdout)
	}
	res = mustCLI(t, 0, run(writeScript(t, map[string][][]map[string]any{"orchestrator": {finishTurn("success", "Postgres is set up")}}))...)
	it, err := store.Workspace{Dir: ws}.Queue().Get(first)
	if err != nil || it.Status != store.QueueDone || it.Effort != "quick" {
		t.Fatalf("answered item %+v %v", it, err)
	}
	meta, err := store.Workspace{Dir: ws}.ReadMeta(it.RunID)
	if err != nil || !strings.Contains(meta.Task, `Operator's answer to "Which database?": Postgres`) || meta.Effort != "quick" {
		t.Fatalf("the answered run's meta %+v %v", meta, err)
	}

	res = mustCLI(t, 0, append([]string{"queue", "requeue", first}, w...)...)
	if !strings.Contains(res.stdout, "requeued "+first+": waiting, position 1 of 1") {
		t.Fatalf("requeue said:\n%s", res.stdout)
	}
	mustCLI(t, 0, append([]string{"queue", "rm", first}, w...)...)
	res = mustCLI(t, exitError, append([]string{"queue", "rm", first}, w...)...)
	if !strings.Contains(res.stderr, "cannot cancel queue item "+first+": it is cancelled") {
		t.Fatalf("second rm said:\n%s", res.stderr)
	}
	// Nothing waits: queue run has nothing to do.
	res = mustCLI(t, 0, run(script)...)
	if !strings.Contains(res.stderr, "nothing waits") {
		t.Fatalf("empty queue run said:\n%s", res.stderr)
	}
}

func TestQueueCLIErrors(t *testing.T) {
	ws := t.TempDir()
	w := []string{"--workspace", ws}
	res := mustCLI(t, 0, append([]string{"queue", "add"}, append(w, "A task")...)...)
	id := itemIDPattern.FindString(res.stdout)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"queue", "mv", "../../x", "up"}, exitUsage, "is not a queue item id"},
		{[]string{"queue", "mv", id, "sideways"}, exitUsage, "not up, down, top, bottom or a position"},
		{[]string{"queue", "mv", id, "0"}, exitUsage, "a position from 1"},
		{[]string{"queue", "rm", "q-1-1"}, exitError, "queue item q-1-1: not found"},
		{[]string{"queue", "add", "--effort", "max", "x"}, exitUsage, `effort "max" is not one of`},
		{[]string{"queue", "add", "  "}, exitUsage, "the task is empty"},
		{[]string{"queue", "add", "--continue", "yesterday", "x"}, exitUsage, "--continue: run id \"yesterday\" is not of the form run-YYYYMMDD-HHMMSS"},
		{[]string{"queue", "answer", id, "yes"}, exitError, "cannot answer queue item " + id + ": it is waiting"},
		{[]string{"queue", "requeue", id}, exitError, "cannot requeue queue item " + id + ": it is waiting"},
		{[]string{"queue", "answer", id}, exitUsage, "guildhall queue answer needs an item id and the answer"},
		{[]string{"queue", "reset"}, exitError, "well formed"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			res := mustCLI(t, c.code, append(c.args, w...)...)
			if !strings.Contains(res.stderr, c.want) {
				t.Fatalf("stderr %q lacks %q", res.stderr, c.want)
			}
		})
	}
}

func TestQueueCLIMalformedQueueIsPreserved(t *testing.T) {
	ws := t.TempDir()
	w := []string{"--workspace", ws}
	q := store.Workspace{Dir: ws}.Queue()
	_ = os.MkdirAll(filepath.Dir(q.Path()), 0o755)
	body := `{"items": [{"id": "q-1-1", "task": "precious", "status": "wai`
	if err := os.WriteFile(q.Path(), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"queue", "ls"}, {"queue", "add", "more"}, {"queue", "rm", "q-1-1"}} {
		res := mustCLI(t, exitError, append(args, w...)...)
		if !strings.Contains(res.stderr, q.Path()) || !strings.Contains(res.stderr, "guildhall queue reset") {
			t.Fatalf("%v said %q", args, res.stderr)
		}
	}
	if b, _ := os.ReadFile(q.Path()); string(b) != body {
		t.Fatalf("the malformed queue was changed to %q", b)
	}
	res := mustCLI(t, 0, append([]string{"queue", "reset"}, w...)...)
	moved := strings.TrimSpace(strings.TrimPrefix(strings.Split(res.stdout, ";")[0], "moved the malformed queue to "))
	if b, err := os.ReadFile(moved); err != nil || string(b) != body {
		t.Fatalf("reset kept %q at %s: %v", b, moved, err)
	}
	res = mustCLI(t, 0, append([]string{"queue"}, w...)...)
	if !strings.Contains(res.stdout, "the queue is empty") {
		t.Fatalf("queue after reset:\n%s", res.stdout)
	}
}

func TestQueueCLIListIsEscapeSafe(t *testing.T) {
	ws := t.TempDir()
	w := []string{"--workspace", ws}
	mustCLI(t, 0, append([]string{"queue", "add"}, append(w, "evil \x1b]0;pwned\x07 title\x1b[2J and \u202e bidi\nsecond line")...)...)
	res := mustCLI(t, 0, append([]string{"queue", "ls"}, w...)...)
	if strings.ContainsAny(res.stdout, "\x1b\x07\u202e") {
		t.Fatalf("ls let terminal control through: %q", res.stdout)
	}
	if !strings.Contains(res.stdout, "evil") || strings.Contains(res.stdout, "second line") {
		t.Fatalf("ls shows the task's first line only: %q", res.stdout)
	}
	res = mustCLI(t, 0, append([]string{"queue", "ls", "--json"}, w...)...)
	var items []store.QueueItem
	if err := json.Unmarshal([]byte(res.stdout), &items); err != nil || len(items) != 1 || items[0].Status != store.QueueWaiting {
		t.Fatalf("ls --json: %v %s", err, res.stdout)
	}
}

func TestQueueCLIAsksOnTheTerminalOnceAWriterStarted(t *testing.T) {
	ws := t.TempDir()
	mustCLI(t, 0, "queue", "add", "--workspace", ws, "Ship the feature")
	script := writeScript(t, map[string][][]map[string]any{
		"orchestrator": {
			{{"name": "agent", "args": map[string]string{"role": "coder", "task": "write it"}}},
			{{"name": "ask_human", "args": map[string]any{"question": "Ship it now?", "options": []map[string]string{{"label": "yes"}, {"label": "no"}}}}},
			finishTurn("success", "Shipped"),
		},
		"coder": {finishTurn("success", "written")},
	})
	res := runCLI(t, "1\n", "queue", "run", "--workspace", ws, "--guild", testGuild, "--provider", "script", "--script", script)
	if res.code != 0 || !strings.Contains(res.stdout, "1. yes") || !strings.Contains(res.stdout, "answer> ") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	items, _ := store.Workspace{Dir: ws}.Queue().List()
	if len(items) != 1 || items[0].Status != store.QueueDone || items[0].Summary != "Shipped" {
		t.Fatalf("items %+v", items)
	}
	_, evs := readRun(t, ws)
	answered := false
	for _, p := range payloadsOf[struct{ Answer, Source string }](t, evs, event.HumanAnswer) {
		// The test's stdin is a pipe, not a terminal.
		answered = p.Answer == "yes" && p.Source == "stdin"
	}
	if !answered {
		t.Fatal("the answer read on stdin (option 1) did not reach the run as an answer from stdin")
	}
}

// `guildhall TASK` on a workspace another guildhall holds queues the task
// at once: it must not first probe the model server, which may take
// seconds to answer or never do.
func TestTaskOnABusyWorkspaceQueuesWithoutProbing(t *testing.T) {
	ws := t.TempDir()
	lock, err := store.Workspace{Dir: ws}.AcquireLock()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	_ = lock.SetRun("run-20261129-230000")
	var probes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		<-r.Context().Done() // a server that never answers
	}))
	defer srv.Close()
	res := mustCLI(t, 0, "--workspace", ws, "--base-url", srv.URL+"/v1", "Fix the bug")
	if !strings.Contains(res.stdout, "workspace busy: run run-20261129-230000") || !itemIDPattern.MatchString(res.stdout) {
		t.Fatalf("stdout %q: want the busy message and the queued item", res.stdout)
	}
	if n := probes.Load(); n != 0 {
		t.Errorf("the model server got %d requests; a busy workspace needs none", n)
	}
	items, err := store.Workspace{Dir: ws}.Queue().List()
	if err != nil || len(items) != 1 || items[0].Task != "Fix the bug" {
		t.Fatalf("queue = %+v (%v), want the one task", items, err)
	}
}

// A headless run whose standard input ends (a script, a CI job, Ctrl-D)
// and that has no browser attached must not wait forever on a question:
// it says so once, and the role gets "no operator available".
func TestRunWithClosedStdinDoesNotWaitOnQuestions(t *testing.T) {
	ws := t.TempDir()
	script := writeScript(t, map[string][][]map[string]any{
		"orchestrator": {
			{{"name": "ask_human", "args": map[string]any{"question": "Which database?"}}},
			finishTurn("success", "Assumed Postgres"),
		},
	})
	done := make(chan cliResult, 1)
	go func() {
		done <- runCLI(t, "", "run", "--workspace", ws, "--guild", testGuild, "--provider", "script", "--script", script, "Pick a database")
	}()
	var res cliResult
	select {
	case res = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run is still waiting for an answer after its stdin closed")
	}
	if res.code != 0 || !strings.Contains(res.stderr, "standard input closed") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	_, evs := readRun(t, ws)
	unavailable := false
	for _, p := range payloadsOf[struct{ Tool, Kind string }](t, evs, event.ToolResult) {
		unavailable = unavailable || (p.Tool == "ask_human" && p.Kind == "unavailable")
	}
	if !unavailable {
		t.Fatal("ask_human did not come back as unavailable")
	}
}
