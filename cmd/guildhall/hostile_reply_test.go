package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// TestEndlessReplyEndsTheRoleNotTheProcess runs the real binary against
// an endpoint that answers every chat completion with one reply that never
// ends (it would stream 512 MiB, then end properly). Each call must fail
// as a malformed reply after a bounded part of it, be retried and recorded
// as provider_failure events, and the role finish with llm_unavailable;
// the process's peak memory stays bounded (it went past 1.4 GB).
func TestEndlessReplyEndsTheRoleNotTheProcess(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("endless-reply")
	var sent atomic.Int64
	chunk, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]string{"content": strings.Repeat("all work and no play ", 40)}}}})
	line := "data: " + string(chunk) + "\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"endless","object":"model"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		body := strings.Repeat(line, 64)
		for n := 0; n < 512<<20; n += len(body) {
			k, err := io.WriteString(w, body)
			sent.Add(int64(k))
			if err != nil || r.Context().Err() != nil {
				return
			}
		}
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, "run", "--base-url", srv.URL+"/v1", "--model", "endless", "--no-input", "Say hello")
	cmd.Dir = ws
	cmd.Env = h.env("OPENAI_API_KEY=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the run did not end within 120 s (the endpoint sent %d MiB)\n%s", sent.Load()>>20, stderr.String())
	}
	code := cmd.ProcessState.ExitCode()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	t.Logf("exit %d; the endpoint sent %d MiB; peak RSS %d MiB", code, sent.Load()>>20, rss>>20)
	if code != exitError {
		t.Errorf("exit %d, want 1\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if rss > 400<<20 {
		t.Errorf("the process peaked at %d MiB", rss>>20)
	}
	ids, _ := (store.Workspace{Dir: ws}).ListRunIDs()
	if len(ids) != 1 {
		t.Fatalf("runs: %v", ids)
	}
	log := readFile(t, ws+"/.orchestration/runs/"+ids[0]+"/log.jsonl")
	failures := 0
	for _, l := range strings.Split(log, "\n") {
		var e struct {
			Type    event.Type                   `json:"type"`
			Payload event.ProviderFailurePayload `json:"payload"`
		}
		if json.Unmarshal([]byte(l), &e) != nil || e.Type != event.ProviderFailure {
			continue
		}
		failures++
		if e.Payload.Category != "malformed" || !strings.Contains(e.Payload.Message, "does not end its reply") {
			t.Errorf("provider_failure %+v", e.Payload)
		}
	}
	if failures < 2 || !strings.Contains(log, `"llm_unavailable"`) {
		t.Errorf("%d provider_failure events; want retries, then llm_unavailable:\n%s", failures, log)
	}
	h.assertSafe()
}
