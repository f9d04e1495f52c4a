package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/web"
)

// stepper is a model whose orchestrator looks around once and then
// finishes, by the length of its conversation (so a resumed run picks up
// where it stopped). A task holding "stop" has its run stopped at the
// second call; a task holding "hold" waits there until gate closes.
type stepper struct {
	stop func()
	gate chan struct{}

	mu      sync.Mutex
	stopped bool
}

func (p *stepper) Name() string { return "stepper" }

func (p *stepper) Complete(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	if req.Role == "" {
		return &provider.Response{Content: "A summary", FinishReason: "stop"}, nil
	}
	task, turns := "", 0
	for _, m := range req.Messages {
		switch {
		case m.Role == "user" && task == "":
			task = m.Content
		case m.Role == "assistant":
			turns++
		}
	}
	if turns == 1 && strings.Contains(task, "stop") {
		p.mu.Lock()
		first := !p.stopped
		p.stopped = true
		p.mu.Unlock()
		if first {
			p.stop()
		}
	}
	if turns == 1 && strings.Contains(task, "hold") {
		select {
		case <-p.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	call := provider.ToolCall{ID: "c" + string(rune('0'+turns)), Name: "list_directory", Arguments: `{"path":"."}`}
	if turns >= 2 {
		call = provider.ToolCall{ID: "c9", Name: "finish", Arguments: `{"status":"success","summary":"Looked around."}`}
	}
	return &provider.Response{ToolCalls: []provider.ToolCall{call}, FinishReason: "tool_calls",
		Usage: provider.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}}, nil
}

// TestResumeAStoppedRunFromHistory: POST /api/runs/:id/resume resumes a
// stopped run from its checkpoint when no run is live, and says why not
// otherwise.
func TestResumeAStoppedRunFromHistory(t *testing.T) {
	dir := t.TempDir()
	g, err := runner.LoadGuild(seed.Guild(), "seed")
	if err != nil {
		t.Fatal(err)
	}
	d := runner.DefaultDeployment()
	d.FitToGuild(g)
	d.Executor.InterruptTriggers = nil
	model := &stepper{gate: make(chan struct{})}
	sess, err := runner.OpenSession(runner.SessionConfig{Workspace: dir, Sealer: store.NewSealer(testRecordsKey, dir), Guild: g, Deployment: d, Provider: model, NoInput: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	model.stop = sess.Stop
	srv, err := web.New(sess, g, "t")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety net
	defer cancel()
	srv.Start(ctx)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	post := func(path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", hs.URL+path, nil)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+srv.Token())
		res, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body.Error
	}
	wait := func(want string) string {
		t.Helper()
		out, err := sess.Wait(ctx)
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
		if want == "stopped" {
			if !out.Stopped {
				t.Fatalf("want a stopped run, got %+v", out)
			}
		} else if out.Status != want {
			t.Fatalf("want %s, got %+v", want, out)
		}
		return out.RunID
	}

	a, err := sess.Submit(ctx, runner.Submission{Task: "Look around, then stop"})
	if err != nil {
		t.Fatal(err)
	}
	if got := wait("stopped"); got != a {
		t.Fatalf("stopped %s, want %s", got, a)
	}
	m, err := sess.Workspace().ReadMeta(a)
	if err != nil || store.Terminal(m.Status) {
		t.Fatalf("a stopped run is not terminal: %+v %v", m, err)
	}

	// Another run is live: the stopped one cannot resume now.
	b, err := sess.Submit(ctx, runner.Submission{Task: "Look around and hold"})
	if err != nil {
		t.Fatal(err)
	}
	if code, e := post("/api/runs/" + a + "/resume"); code != 409 || e != "run_in_progress" {
		t.Errorf("resume while another run is live: %d %s", code, e)
	}
	if code, e := post("/api/runs/" + b + "/resume"); code != 409 || e != "not_paused" {
		t.Errorf("resume of a running live run: %d %s", code, e)
	}
	close(model.gate)
	wait("success")
	if code, e := post("/api/runs/" + b + "/resume"); code != 409 || e != "run_not_active" {
		t.Errorf("resume of a finished run: %d %s", code, e)
	}
	if code, e := post("/api/runs/run-20000101-000000/resume"); code != 409 || e != "run_not_active" {
		t.Errorf("resume of an unknown run: %d %s", code, e)
	}

	// Idle: the stopped run resumes from its checkpoint and finishes.
	if code, e := post("/api/runs/" + a + "/resume"); code != http.StatusAccepted {
		t.Fatalf("resume: %d %s", code, e)
	}
	if got := wait("success"); got != a {
		t.Fatalf("finished %s, want %s", got, a)
	}
	if m, err := sess.Workspace().ReadMeta(a); err != nil || m.Status != store.StatusSuccess {
		t.Fatalf("meta after resume: %+v %v", m, err)
	}
}
