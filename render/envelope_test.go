package render

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/guildhall/guildhall/runner/event"
)

// TestEnvelopeDeltaMerges: a client holding the snapshot at v1 that merges
// the delta v1→v2 holds exactly the snapshot at v2, for random split points.
func TestEnvelopeDeltaMerges(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, name := range fixtures {
		events, _ := loadLog(t, name+".jsonl")
		for round := 0; round < 40; round++ {
			v1 := 1 + r.IntN(len(events))
			v2 := v1 + r.IntN(len(events)-v1+1)
			m := NewModel()
			for _, e := range events[:v1] {
				m.Apply(e)
			}
			snap := m.Since(0, 0)
			if snap.Kind != EnvelopeSnapshot || snap.Version != int64(v1) {
				t.Fatalf("%s: since 0 gave %s at %d", name, snap.Kind, snap.Version)
			}
			client := roundTrip(t, Merge(ModelState{}, snap))
			for _, e := range events[v1:v2] {
				m.Apply(e)
			}
			d := m.Since(int64(v1), 0)
			if d.Kind != EnvelopeDelta || d.From != int64(v1) || d.Version != int64(v2) {
				t.Fatalf("%s: since %d gave %s from %d to %d", name, v1, d.Kind, d.From, d.Version)
			}
			d = roundTrip(t, d)
			got, want := mustJSON(t, Merge(client, d)), mustJSON(t, m.State())
			if got != want {
				t.Fatalf("%s v%d→v%d: merged delta differs from the snapshot\n got %s\nwant %s", name, v1, v2, got, want)
			}
		}
	}
}

// roundTrip passes a state or an envelope through JSON as the browser
// receives it.
func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	var out T
	if err := json.Unmarshal([]byte(mustJSON(t, v)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEnvelopeFallbacks(t *testing.T) {
	events, _ := loadLog(t, "delegation.jsonl")
	m := replay(events)
	v := m.Version
	tests := []struct {
		name     string
		since    int64
		maxDelta int
		kind     string
		changed  int
	}{
		{"client has nothing", 0, 100, EnvelopeSnapshot, -1},
		{"client ahead of a restarted server", v + 3, 100, EnvelopeSnapshot, -1},
		{"up to date", v, 100, EnvelopeDelta, 0},
		{"one event behind", v - 1, 100, EnvelopeDelta, 1},
		{"too many changes for the bound", 1, 3, EnvelopeSnapshot, -1},
		{"no bound", 1, 0, EnvelopeDelta, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := m.Since(tc.since, tc.maxDelta)
			if env.Kind != tc.kind {
				t.Fatalf("kind %s, want %s", env.Kind, tc.kind)
			}
			n := len(env.Participants) + len(env.Operations) + len(env.Stacks)
			if tc.changed >= 0 && n != tc.changed {
				t.Errorf("%d changed entities, want %d: %s", n, tc.changed, mustJSON(t, env))
			}
			if env.Kind == EnvelopeDelta && (env.Status != "success" || env.Totals == nil || env.ActiveOperation != "op-16") {
				t.Errorf("delta scalars %+v", env)
			}
		})
	}
	// Deltas never carry details bodies.
	for _, op := range m.Since(1, 0).Operations {
		if op.Details != "" {
			t.Fatalf("%s carries details in a delta", op.ID)
		}
	}
}

// TestEnvelopeHorizon: once the journal drops its oldest changes, a client
// older than the horizon gets a snapshot, and newer clients still merge.
func TestEnvelopeHorizon(t *testing.T) {
	events := synthRun(300, 4, true)
	m := NewModel()
	m.journalCap = 1024
	var mid ModelState
	for i, e := range events {
		m.Apply(e)
		if i == len(events)-200 {
			mid = m.State()
		}
	}
	if m.horizon == 0 {
		t.Fatalf("journal never trimmed (%d entries)", len(m.journal))
	}
	if len(m.journal) > m.journalCap {
		t.Errorf("journal holds %d entries, cap %d", len(m.journal), m.journalCap)
	}
	if env := m.Since(m.horizon-1, 0); env.Kind != EnvelopeSnapshot {
		t.Errorf("client behind the horizon got a %s", env.Kind)
	}
	env := m.Since(mid.Version, 0)
	if env.Kind != EnvelopeDelta {
		t.Fatalf("recent client got a %s", env.Kind)
	}
	if !reflect.DeepEqual(mustJSON(t, Merge(mid, env)), mustJSON(t, m.State())) {
		t.Error("merge after trimming differs")
	}
}

func TestEnvelopeIndependentOfModel(t *testing.T) {
	events, _ := loadLog(t, "malformed.jsonl")
	m := replay(events)
	snap := m.Since(0, 0)
	before := mustJSON(t, snap)
	m.Apply(mkEvent(t, 59, event.LLMCall, event.LLMCallPayload{RoleID: "coder-1-2", Usage: event.Usage{TotalTokens: 5}}))
	if mustJSON(t, snap) != before {
		t.Error("applying an event changed an envelope already handed out")
	}
}
