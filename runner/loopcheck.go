package runner

import (
	"context"
	"fmt"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
)

// effortFactor scales the loop-check thresholds: higher effort runs are
// checked less often.
func effortFactor(effort string) int {
	switch effort {
	case "quick":
		return 2
	case "thorough":
		return 6
	}
	return 4
}

// loopCheckPoint runs the loop-check handler when f crossed the tool-call
// or completion-token cadence since its last check, and applies the
// handler's decision. done is set when the decision aborts f.
func (r *Run) loopCheckPoint(ctx context.Context, f *Frame) (event.Card, bool, error) {
	t := r.opts.Deployment.Executor.InterruptTriggers
	if t == nil || t.HandlerRole == "" || r.handlerDepth > 0 || r.opts.Guild.Roles[t.HandlerRole] == nil {
		return event.Card{}, false, nil
	}
	factor := effortFactor(r.opts.Effort)
	byCalls := t.EveryToolCalls > 0 && f.ToolCalls-f.CheckedToolCalls >= t.EveryToolCalls*factor
	byTokens := t.EveryTokens > 0 && f.CompletionTokens-f.CheckedTokens >= t.EveryTokens*factor
	if !byCalls && !byTokens {
		return event.Card{}, false, nil
	}
	f.CheckedToolCalls, f.CheckedTokens = f.ToolCalls, f.CompletionTokens
	r.emit(event.Interrupt, event.InterruptPayload{Trigger: "loop_check", Handler: t.HandlerRole, Target: f.RoleID})
	task := fmt.Sprintf("Loop check for role instance %s (role %s, %d tool calls, %d completion tokens so far). "+
		"Inspect it with list_role_messages, recent_role_tool_calls, search_role_blocks and read_message_window (targetRole %q). "+
		"If it repeats itself without progress, call trigger_interrupt with action redirect (and a concrete instruction as the reason) or abort; "+
		"if it is making progress, call trigger_interrupt with action continue. Then call finish.",
		f.RoleID, f.Role, f.ToolCalls, f.CompletionTokens, f.RoleID)
	delete(r.decisions, f.RoleID)
	card, err := r.runHandler(ctx, t.HandlerRole, task)
	if err != nil {
		return event.Card{}, false, err
	}
	d, decided := r.decisions[f.RoleID]
	delete(r.decisions, f.RoleID)
	if !decided {
		d = decision{Action: "continue"}
	}
	r.emit(event.InterruptResolved, event.InterruptResolvedPayload{Trigger: "loop_check", Handler: t.HandlerRole, Target: f.RoleID,
		Action: d.Action, HandlerStatus: card.Status, Summary: card.Summary})
	switch d.Action {
	case "redirect":
		f.History = append(f.History, provider.Message{Role: "user", Content: "[Loop check — redirect] " + d.Reason})
	case "abort":
		msg := "Stopped by the loop check: " + d.Reason
		return event.Card{Status: "error", Summary: msg, Error: &event.ErrorInfo{Kind: "loop_detected", Message: msg}}, true, nil
	}
	return event.Card{}, false, nil
}
