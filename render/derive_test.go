package render

import (
	"testing"

	"github.com/guildhall/guildhall/runner/event"
)

// TestNowCaptionThroughARun steps the delegation fixture and reads the
// caption a user would see after chosen events.
func TestNowCaptionThroughARun(t *testing.T) {
	events, _ := loadLog(t, "delegation.jsonl")
	set := testLabels()
	set.Visualization.GenericOperationTemplates = nil
	r := NewLabelResolver(set, TierFriendly)
	// Caption after applying events[:n] (line numbers of the fixture).
	tests := []struct {
		n    int
		want string
	}{
		{0, ""},
		{2, ""}, // run started, nothing called yet
		{3, "Orchestrator takes on your task…"},    // the entry call in transit (built-in human->role template)
		{5, "Orchestrator is working…"},            // its first turn settled the call: working label (built-in)
		{8, "Orchestrator hands work to planner…"}, // delegation in transit; planner has only a detailed label
		{11, "planner reads a file…"},              // a tool without a working label reads as its call label
		{12, "File reader finished for planner…"},  // the result leg travels back
		{14, "planner is working…"},                // the caller's next model call settles it
		{26, "Coder has a question for you…"},      // ask_human in flight until answered
		{27, "You answered Coder…"},
		{30, "Coder is writing code…"},   // the coder's own working label
		{31, "Saving with File writer…"}, // a tool's own working label
		{len(events), ""},                // finished run: no caption
	}
	for _, tc := range tests {
		m := replay(events[:tc.n])
		if got := NowCaption(m, r); got != tc.want {
			op, _ := ActiveOperation(m)
			t.Errorf("after %d events (last %s, active %s %s): %q, want %q", tc.n, lastType(events[:tc.n]), op.ID, opLine(op), got, tc.want)
		}
	}
}

func lastType(evs []event.Event) event.Type {
	if len(evs) == 0 {
		return ""
	}
	return evs[len(evs)-1].Type
}

func TestCostStrip(t *testing.T) {
	events, _ := loadLog(t, "delegation.jsonl")
	c := CostStrip(replay(events))
	if c.Tokens != 16740 || c.CachedTokens != 9600 || c.LatestElapsedSeconds != 1.2 || c.ModelCalls != 9 || c.ToolCalls != 4 {
		t.Errorf("%+v", c)
	}
	tests := []struct {
		c    CostSummary
		want string
	}{
		{CostSummary{}, "0 tokens"},
		{CostSummary{Tokens: 999}, "999 tokens"},
		{CostSummary{Tokens: 16740, CachedTokens: 9600, LatestElapsedSeconds: 1.2}, "16.7k tokens · 9.6k cached · last 1.2s"},
		{CostSummary{Tokens: 12000, LatestElapsedSeconds: 125}, "12k tokens · last 2m05s"},
		{CostSummary{Tokens: 4_560_000, LatestElapsedSeconds: 3725, ProviderFailures: 2}, "4.56M tokens · last 1h02m · 2 provider failures"},
	}
	for _, tc := range tests {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestActiveParticipantOfAFreshInterrupt(t *testing.T) {
	m := NewModel()
	m.Apply(mkEvent(t, 0, event.RunStarted, event.RunStartedPayload{RunID: "r"}))
	m.Apply(mkEvent(t, 1, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1"}))
	m.Apply(mkEvent(t, 2, event.Interrupt, event.InterruptPayload{Trigger: "loop_check", Handler: "loop_detector"}))
	p, ok := ActiveParticipant(m)
	if !ok || p.ID != "interrupt:1" || m.ActiveOperation != "" {
		t.Errorf("active %+v op %q", p, m.ActiveOperation)
	}
	if got := NowCaption(m, NewLabelResolver(LabelSet{}, TierFriendly)); got != "Checking in…" {
		t.Errorf("caption %q", got)
	}
}
