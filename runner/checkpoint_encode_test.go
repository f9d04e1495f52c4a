package runner

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// The cached encoding must stay byte for byte json.Marshal through every
// way a stack changes between checkpoints: growth, in-place edits (what
// edit_context and compaction do), truncation, pushes and pops.
func TestCheckpointEncoderMatchesMarshal(t *testing.T) {
	root := &Frame{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: `task with "history":null and <html> & "quotes"`,
		History: []provider.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "do it"}}}
	cp := Checkpoint{RunID: "run-20261129-230000", StartedAt: time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC), Counter: 1, Stack: []*Frame{root}}
	var enc checkpointEncoder
	check := func(step string) {
		t.Helper()
		want, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		got, err := enc.encode(cp)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: encoded\n%s\nwant\n%s", step, got, want)
		}
	}
	check("start")
	root.History = append(root.History, provider.Message{Role: "assistant", Content: "reading", Reasoning: "think",
		ToolCalls: []provider.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}})
	root.History = append(root.History, provider.Message{Role: "tool", ToolCallID: "c1", ToolName: "read_file", Content: "\x1b[31mred\u2028"})
	check("growth")
	root.History[3].Content = "[elided by edit_context]"
	check("edit in place")
	root.History[2].ToolCalls = []provider.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"b"}`}}
	check("tool call arguments changed")
	child := &Frame{Role: "coder", RoleID: "coder-1-2", Depth: 1, Parent: "orchestrator", ParentID: root.RoleID,
		History: []provider.Message{{Role: "system", Content: "coder"}, {Role: "user", Content: "fix"}},
		Pending: &PendingTurn{Calls: []provider.ToolCall{{ID: "c9", Name: "agent"}}, ChildCard: &event.Card{Status: "success"}}}
	cp.Stack = append(cp.Stack, child)
	root.Pending = &PendingTurn{Calls: []provider.ToolCall{{ID: "c2", Name: "agent", Arguments: "{}"}}}
	check("push")
	root.History = root.History[:2]
	check("compacted to the head")
	root.History = append(root.History, provider.Message{Role: "user", Content: strings.Repeat("x", 5000)})
	cp.Stack = cp.Stack[:1]
	check("pop")
	if len(enc.frames) != 1 {
		t.Errorf("the encoder still caches %d frames after the pop, want 1", len(enc.frames))
	}
	root.History = nil
	check("nil history")
	cp.Stack = nil
	check("empty stack")
}

func BenchmarkCheckpointEncode(b *testing.B) {
	f := &Frame{Role: "coder", RoleID: "coder-1-2"}
	for i := 0; i < 100; i++ {
		f.History = append(f.History, provider.Message{Role: "tool", ToolCallID: "c", Content: strings.Repeat("output line\n", 20)})
	}
	cp := Checkpoint{RunID: "run-20261129-230000", Stack: []*Frame{f}}
	b.Run("cached", func(b *testing.B) {
		var enc checkpointEncoder
		for b.Loop() {
			if _, err := enc.encode(cp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(cp); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCheckpointWrite is a whole checkpoint as the run loop pays it
// at each safe point (encode, redact, seal, write into the spare and
// exchange the names) for a role whose history is 10, 100 and 1000 tool
// results of 240 bytes: the cost grows with the history, which is what an
// append-only journal of frame changes would remove.
func BenchmarkCheckpointWrite(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(strconv.Itoa(n)+"-messages", func(b *testing.B) {
			dir := b.TempDir()
			ws := store.Workspace{Dir: dir, Seal: store.NewSealer([]byte("0123456789abcdef0123456789abcdef"), dir)}
			id, err := ws.CreateRun(time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC))
			if err != nil {
				b.Fatal(err)
			}
			f := &Frame{Role: "coder", RoleID: "coder-1-2"}
			for i := 0; i < n; i++ {
				f.History = append(f.History, provider.Message{Role: "tool", ToolCallID: "c", Content: strings.Repeat("output line\n", 20)})
			}
			cp := Checkpoint{RunID: id, Stack: []*Frame{f}}
			var enc checkpointEncoder
			size := 0
			for b.Loop() {
				data, err := enc.encode(cp)
				if err != nil {
					b.Fatal(err)
				}
				if err := ws.WriteState(id, data); err != nil {
					b.Fatal(err)
				}
				size = len(data)
			}
			b.ReportMetric(float64(size)/1024, "state-KiB")
		})
	}
}
