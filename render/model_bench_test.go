package render

import (
	"encoding/json"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
)

// BenchmarkApply100k applies a 100,000-event run (5,000 delegations, 50,000
// operations) per iteration and reports the retained size of the resulting
// model and of a 10,000-operation one.
func BenchmarkApply100k(b *testing.B) {
	events := synthRun(5000, 4, false)
	if len(events) < 100_000 {
		b.Fatalf("synthetic run has %d events", len(events))
	}
	events = events[:100_000]
	// Views count a log's lines (store.CountLogLines) and reserve for them
	// before replaying it.
	b.ReportAllocs()
	b.ResetTimer()
	var m *Model
	for b.Loop() {
		m = NewModel()
		m.Reserve(len(events))
		for _, e := range events {
			m.Apply(e)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/run")
	b.ReportMetric(float64(len(m.Operations)), "ops")
	b.ReportMetric(retainedMB(func() any { return replay(events) }), "MB-100k-events")
	small := synthRun(1000, 4, false) // 10,000 operations
	b.ReportMetric(retainedMB(func() any { return replay(small) }), "MB-10k-ops")
}

// retainedMB measures the heap a value built by build keeps alive.
func retainedMB(build func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
}

// BenchmarkDeltaAfterOneEvent: a client one event behind on a long live run
// asks for a delta. Its size and cost must follow the change, not the run.
func BenchmarkDeltaAfterOneEvent(b *testing.B) {
	for _, children := range []int{1000, 5000} {
		b.Run(strconv.Itoa(children*10)+"ops", func(b *testing.B) {
			m := replay(synthRun(children, 4, true))
			id := "coder-1-" + strconv.Itoa(children+1)
			payload, _ := json.Marshal(event.LLMCallPayload{Role: "coder", RoleID: id, Usage: event.Usage{TotalTokens: 1000}, ElapsedMs: 800})
			snap, _ := json.Marshal(m.Since(0, 0))
			ts := time.Date(2025, 3, 14, 12, 0, 0, 0, time.UTC)
			var deltaBytes int
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				m.Apply(event.Event{Timestamp: ts, Type: event.LLMCall, Payload: payload})
				env := m.Since(m.Version-1, 1000)
				if env.Kind != EnvelopeDelta {
					b.Fatalf("got a %s", env.Kind)
				}
				out, _ := json.Marshal(env)
				deltaBytes = len(out)
			}
			b.ReportMetric(float64(deltaBytes), "delta-bytes")
			b.ReportMetric(float64(len(snap)), "snapshot-bytes")
			b.ReportMetric(float64(len(snap))/float64(deltaBytes), "snapshot/delta")
		})
	}
}
