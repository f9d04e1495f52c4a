package runner

import (
	"testing"

	"github.com/guildhall/guildhall/runner/event"
)

// TestSubscriptionNextDrainsAfterClose: a reader whose subscription closes
// (the run ended) still gets every event that was delivered before, in
// order, and then ok is false instead of a wait.
func TestSubscriptionNextDrainsAfterClose(t *testing.T) {
	b := NewBus()
	_, sub := b.SubscribeLossless(4)
	for _, typ := range []event.Type{event.RoleStart, event.ToolCall, event.RoleFinished} {
		b.Publish(event.Event{Type: typ})
	}
	sub.Close()
	var got []event.Type
	for e, ok := sub.Next(); ok; e, ok = sub.Next() {
		got = append(got, e.Type)
	}
	if len(got) != 3 || got[0] != event.RoleStart || got[1] != event.ToolCall || got[2] != event.RoleFinished {
		t.Fatalf("after close Next gave %v, want role_start, tool_call, role_finished", got)
	}
}
