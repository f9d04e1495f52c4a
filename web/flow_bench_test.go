package web

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/seed"
)

// synthLive builds a live run of children delegations with toolsPer tool
// calls each (10 operations per child with toolsPer=4), the last child
// still open, and returns its id.
func synthLive(s *Server, children, toolsPer int) string {
	base := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	const id = "run-20250314-090000"
	n := 0
	add := func(typ event.Type, payload any) {
		raw, _ := json.Marshal(payload)
		s.views.applyLive(event.Event{Seq: int64(n), Timestamp: base.Add(time.Duration(n) * 10 * time.Millisecond), Type: typ, Payload: raw})
		n++
	}
	add(event.RunStarted, event.RunStartedPayload{RunID: id, Task: "synthetic", EntryRole: "orchestrator"})
	add(event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "synthetic"})
	for c := 0; c < children; c++ {
		rid := "coder-1-" + strconv.Itoa(c+2)
		add(event.RoleStart, event.RoleStartPayload{Role: "coder", RoleID: rid, Depth: 1, Task: "step " + strconv.Itoa(c), Parent: "orchestrator", ParentID: "orchestrator-0-1"})
		for k := 0; k < toolsPer; k++ {
			add(event.LLMCall, event.LLMCallPayload{Role: "coder", RoleID: rid, Usage: event.Usage{TotalTokens: 1050}, ElapsedMs: 1200})
			cid := "c" + strconv.Itoa(k)
			add(event.ToolCall, event.ToolCallPayload{Role: "coder", RoleID: rid, Tool: "read_file", CallID: cid, Arguments: `{"path":"pkg/file.go"}`})
			add(event.ToolResult, event.ToolResultPayload{Role: "coder", RoleID: rid, Tool: "read_file", CallID: cid, Kind: "success", Result: json.RawMessage(`{"kind":"success","data":{"content":"package pkg\n"}}`), ElapsedMs: 3})
		}
		if c == children-1 {
			break
		}
		add(event.RoleFinished, event.RoleFinishedPayload{Role: "coder", RoleID: rid, Depth: 1, Status: "success", Summary: "Done.", Parent: "orchestrator", ParentID: "orchestrator-0-1"})
	}
	return id
}

// synthServer starts a server over a fake session holding a synthesized
// live run of children coder roles, and a get that asks its handler for a
// URL as an authorized browser and fails on an answer other than 200.
func synthServer(tb testing.TB, children int) (*Server, string, func(url string) []byte) {
	tb.Helper()
	g, err := runner.LoadGuild(seed.Guild(), "seed")
	if err != nil {
		tb.Fatal(err)
	}
	s, err := New(newFakeSession(tb), g, "bench")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	s.Start(ctx)
	id := synthLive(s, children, 4)
	h := s.Handler()
	get := func(url string) []byte {
		tb.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", url, nil)
		req.Host = "127.0.0.1:8765"
		req.Header.Set("Authorization", "Bearer "+s.Token())
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			tb.Fatalf("%s: %d %s", url, rec.Code, rec.Body.String())
		}
		return rec.Body.Bytes()
	}
	return s, id, get
}

// BenchmarkFlowEndpoint: a browser one event behind on a long live run asks
// GET /api/runs/:id/flow?version=V-1. The response (handler, JSON encoding
// included) must follow the change, not the run: compare 10,000 and 50,000
// operations. The snapshot a fresh client gets is reported for scale.
func BenchmarkFlowEndpoint(b *testing.B) {
	for _, children := range []int{1000, 5000} {
		b.Run(strconv.Itoa(children*10)+"ops", func(b *testing.B) {
			s, id, get := synthServer(b, children)
			snapshot := len(get("/api/runs/" + id + "/flow?version=0"))
			payload, _ := json.Marshal(event.LLMCallPayload{Role: "coder", RoleID: "coder-1-" + strconv.Itoa(children+1), Usage: event.Usage{TotalTokens: 1000}, ElapsedMs: 800})
			ts := time.Date(2025, 3, 14, 12, 0, 0, 0, time.UTC)
			v, _ := s.views.get(id)
			var deltaBytes int
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s.views.applyLive(event.Event{Timestamp: ts, Type: event.LLMCall, Payload: payload})
				v.mu.Lock()
				version := v.model.Version
				v.mu.Unlock()
				body := get("/api/runs/" + id + "/flow?version=" + strconv.FormatInt(version-1, 10))
				deltaBytes = len(body)
			}
			b.StopTimer()
			b.ReportMetric(float64(deltaBytes), "delta-bytes")
			b.ReportMetric(float64(snapshot), "snapshot-bytes")
			b.ReportMetric(float64(snapshot)/float64(deltaBytes), "snapshot/delta")
		})
	}
}

// TestFlowDeltaIsSmall is the benchmark's claim as a size check (sizes, not
// times): after one event on a 10,000-operation run the delta is at least
// 100 times smaller than the snapshot.
func TestFlowDeltaIsSmall(t *testing.T) {
	s, id, get := synthServer(t, 1000)
	snap := get("/api/runs/" + id + "/flow?version=0")
	var full struct {
		Version int64 `json:"version"`
		Model   struct {
			Operations []json.RawMessage `json:"operations"`
		} `json:"model"`
	}
	if err := json.Unmarshal(snap, &full); err != nil || len(full.Model.Operations) < 10000 {
		t.Fatalf("snapshot has %d operations: %v", len(full.Model.Operations), err)
	}
	payload, _ := json.Marshal(event.ToolCallPayload{Role: "coder", RoleID: "coder-1-1001", Tool: "write_file", CallID: "w1", Arguments: `{"path":"x"}`})
	s.views.applyLive(event.Event{Timestamp: time.Now(), Type: event.ToolCall, Payload: payload})
	delta := get("/api/runs/" + id + "/flow?version=" + strconv.FormatInt(full.Version, 10))
	if len(snap) < 100*len(delta) {
		t.Errorf("delta %d bytes vs snapshot %d bytes: less than 100x smaller", len(delta), len(snap))
	}
	t.Logf("delta %d bytes, snapshot %d bytes (%.0fx)", len(delta), len(snap), float64(len(snap))/float64(len(delta)))
}
