package runner

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// faultSession is a session on the fake whose start-up probe answered, as
// the CLI's does before it opens one: failures after that are outages.
func faultSession(t *testing.T, f *fakellm.Server, health ProviderHealth) (*Session, string) {
	t.Helper()
	return faultSessionWith(t, f.BaseURL(), health, true)
}

func faultSessionWith(t *testing.T, base string, health ProviderHealth, answered bool) (*Session, string) {
	t.Helper()
	g, err := LoadGuild(os.DirFS("testdata/original"), "testdata/original")
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultDeployment()
	d.FitToGuild(g)
	d.Executor.ProviderHealth = health
	p := provider.NewOpenAIChat(provider.Config{BaseURL: base, Model: "fake-model", RequestTimeout: 2 * time.Second})
	dir := t.TempDir()
	s := openSession(t, SessionConfig{Workspace: dir, Guild: g, Deployment: d, Provider: p, NoInput: true, EndpointAnswered: answered})
	return s, dir
}

func queueSimpleRun(f *fakellm.Server) {
	f.Queue("orchestrator",
		fakellm.Reply{Calls: []fakellm.Call{{Name: "agent", Args: map[string]string{"role": "coder", "task": "t"}}}},
		fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "ok"}}}})
	f.Queue("coder", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "done"}}}})
}

func TestFaultsAreRetriedAndTheRunSucceeds(t *testing.T) {
	f := fakellm.New()
	defer f.Close()
	queueSimpleRun(f)
	f.Inject(
		fakellm.Fault{Status: 500, Body: `{"error":{"message":"boom SECRET-BODY"}}`},
		fakellm.Fault{Status: 429, RetryAfter: "1", Body: `{"error":{"message":"slow down"}}`},
		fakellm.Fault{Hang: true},
		fakellm.Fault{CutStream: true},
		fakellm.Fault{BadArgs: true},
		fakellm.Fault{Status: 502, Body: "<html>bad gateway</html>"},
	)
	s, dir := faultSession(t, f, ProviderHealth{Retries: 8, SuspendAfter: -1})
	id, err := s.Submit(context.Background(), Submission{Task: "go"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := s.Wait(ctx)
	if err != nil || out.Status != "success" {
		for _, e := range readEvents(t, testWS(dir), id) {
			t.Logf("%s %s", e.Type, e.Payload)
		}
		t.Fatalf("outcome %+v %v", out, err)
	}
	if h := s.Health(); h.State != HealthOK || h.ConsecutiveFailures != 0 || h.LastSuccessAt == nil {
		t.Fatalf("health after recovery = %+v", h)
	}
	evs := readEvents(t, testWS(dir), id)
	var cats []string
	for _, e := range find(evs, event.ProviderFailure) {
		var p event.ProviderFailurePayload
		_ = e.Decode(&p)
		cats = append(cats, p.Category)
		if len(p.Body) > provider.MaxBodyBytes {
			t.Errorf("provider_failure body of %d bytes exceeds the bound", len(p.Body))
		}
	}
	want := "server,rate_limit,timeout,cut_stream,malformed,server"
	if got := strings.Join(cats, ","); got != want {
		t.Fatalf("failure categories = %s, want %s", got, want)
	}
	meta, _ := testWS(dir).ReadMeta(id)
	raw, _ := os.ReadFile(dir + "/.orchestration/runs/" + id + "/meta.json")
	if meta.Status != "success" || strings.Contains(string(raw), "SECRET-BODY") {
		t.Fatalf("meta must not carry provider bodies: %s", raw)
	}
}

func TestLongOutageSuspendsAndResumesByItself(t *testing.T) {
	f := fakellm.New()
	defer f.Close()
	queueSimpleRun(f)
	f.SetDown(true)
	s, dir := faultSession(t, f, ProviderHealth{Retries: 3, SuspendAfter: 2, ProbeSeconds: 1})
	id, err := s.Submit(context.Background(), Submission{Task: "go"})
	if err != nil {
		t.Fatal(err)
	}
	ws := testWS(dir)
	deadline := time.Now().Add(20 * time.Second)
	for s.Health().State != HealthSuspended {
		if time.Now().After(deadline) {
			t.Fatalf("never suspended: %+v", s.Health())
		}
		time.Sleep(20 * time.Millisecond)
	}
	h := s.Health()
	if h.SuspendedRunID != id || h.NextProbeAt == nil || h.ConsecutiveFailures < 2 || h.Category != "server" {
		t.Fatalf("health while suspended = %+v", h)
	}
	meta, _ := ws.ReadMeta(id)
	if meta.Status != store.StatusSuspended || meta.Suspension == nil || meta.Suspension.Category != "server" ||
		strings.Contains(meta.Suspension.Message, "upstream unavailable") {
		t.Fatalf("suspended meta = %+v", meta)
	}
	if _, err := os.Stat(dir + "/.orchestration/runs/" + id + "/state.json"); err != nil {
		t.Fatal("a suspended run keeps its checkpoint")
	}
	f.SetDown(false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := s.Wait(ctx)
	if err != nil || out.Status != "success" {
		t.Fatalf("outcome after the outage = %+v %v", out, err)
	}
	var statuses []string
	for _, e := range find(readEvents(t, ws, id), event.RunStatus) {
		var p event.RunStatusPayload
		_ = e.Decode(&p)
		statuses = append(statuses, p.Status)
	}
	if got := strings.Join(statuses, ","); got != "suspended,running,success" {
		t.Fatalf("run_status sequence = %s", got)
	}
	if s.Health().State != HealthOK {
		t.Fatalf("health after recovery = %+v", s.Health())
	}
}
