package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/web/client"
)

// hostileConsole answers like a console whose every machine field carries
// terminal control or a path: the setup lines, the queue's item and run
// ids, the questions' run ids, the health's suspended run.
func hostileConsole(t *testing.T) *httptest.Server {
	t.Helper()
	const esc = `\u001b]52;c;UFdORUQ=\u0007\u001b]0;PWNED-TITLE\u0007\u001b[2J`
	answers := map[string]string{
		"/api/config": `{"queue": true, "setup": ["sandbox on` + esc + `"]}`,
		"/api/queue": `{"items": [
		  {"id": "q-1767225600000-1` + esc + `", "task": "one", "status": "waiting"},
		  {"id": "../../etc", "task": "two", "status": "waiting"},
		  {"id": "q-1767225600000-2", "task": "three", "status": "done", "runId": "run-20260101-000000` + esc + `"}]}`,
		"/api/questions": `{"questions": [
		  {"id": "q1", "runId": "run-20260101-000000` + esc + `", "question": "?"},
		  {"id": "q2", "runId": "run-20260101-000000", "question": "fine?"}]}`,
		"/api/health":  `{"state": "suspended", "suspendedRunId": "run-x` + esc + `"}`,
		"/api/queue/x": `{"item": {"id": "q-1767225600000-3` + esc + `", "status": "cancelled"}}`,
		"/api/runs":    `{"queued": {"id": "../q", "status": "waiting"}}`,
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: hello\ndata: {\"runId\":\"run-20260101-000000\",\"active\":true}\n\nevent: ready\ndata: {}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		body, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestHostileConsoleFieldsAreChecked: a console's machine fields are
// checked before the terminal console sees them. Setup lines are stripped
// of terminal control; queue items whose id is not a queue id are not
// shown (their run ids, when not run ids, are dropped); questions of no
// run are not offered; a suspended run that is not a run id is not named;
// an answer naming no queue item is an error.
func TestHostileConsoleFieldsAreChecked(t *testing.T) {
	ts := hostileConsole(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := client.Dial(ctx, client.Config{URL: ts.URL + "/", Token: "t", Workspace: store.Workspace{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	clean := func(what, s string) {
		t.Helper()
		if strings.ContainsAny(s, "\x1b\a") {
			t.Errorf("%s carries terminal control: %q", what, s)
		}
	}
	for _, l := range s.Setup() {
		clean("a setup line", l)
		if !strings.HasPrefix(l, "sandbox on") {
			t.Errorf("setup line %q", l)
		}
	}
	items, err := s.Queue().List()
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].ID != "q-1767225600000-2" || items[0].RunID != "" {
		t.Errorf("queue items %+v: want only the one with a queue id, without its hostile run id", items)
	}
	qs := s.Questions()
	if len(qs) != 1 || qs[0].ID != "q2" {
		t.Errorf("questions %+v: want only the one of a run", qs)
	}
	if h := s.Health(); h.SuspendedRunID != "" || h.State != "suspended" {
		t.Errorf("health %+v", h)
	}
	if _, err := s.Queue().Cancel(ctx, "x"); err == nil || !strings.Contains(err.Error(), "names no queue item") {
		t.Errorf("a cancel answered with a hostile item: %v", err)
	}
	if _, _, err := s.Queue().SubmitOrQueue(ctx, runner.Submission{Task: "t"}); err == nil || !strings.Contains(err.Error(), "names no queue item") {
		t.Errorf("a submission queued as a hostile item: %v", err)
	}
}
