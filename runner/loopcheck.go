package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

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
	// The handler looked at the role and decided: the repetition check
	// starts counting again, so the two never disagree about one streak.
	f.RepeatKey, f.RepeatCount = "", 0
	switch d.Action {
	case "redirect":
		f.History = append(f.History, provider.Message{Role: "user", Content: "[Loop check — redirect] " + d.Reason})
	case "abort":
		msg := "Stopped by the loop check: " + d.Reason
		return event.Card{Status: "error", Summary: msg, Error: &event.ErrorInfo{Kind: "loop_detected", Message: msg}}, true, nil
	}
	return event.Card{}, false, nil
}

// The repetition check: a role that sends the same reply again and again
// (the same tool calls with the same arguments, or the same text) is
// stuck, and the loop check's cadence (every N tool calls, scaled by
// effort) may be far off. At repeatNote replies in a row it reads a
// corrective note after the turn's results; at repeatStop it finishes
// with loop_detected, the kind a loop check's abort gives. A call is
// identified as recent_role_tool_calls identifies it for the loop
// detector: tool name and argument hash. A loop check's decision on the
// role restarts the count.
const (
	repeatNote = 3
	repeatStop = 4
)

// repetitionCheck counts f's reply (already in its history) against the
// previous ones. done is set when it ends the role.
func (r *Run) repetitionCheck(f *Frame, content string, calls []provider.ToolCall) (event.Card, bool) {
	key, what, tool, hash := replyKey(content, calls)
	if key == f.RepeatKey {
		f.RepeatCount++
	} else {
		f.RepeatKey, f.RepeatCount = key, 1
	}
	p := event.RepetitionPayload{Role: f.Role, RoleID: f.RoleID, Count: f.RepeatCount, Tool: tool, ArgsHash: hash}
	switch {
	case f.RepeatCount >= repeatStop:
		p.Action = "stopped"
		r.emit(event.Repetition, p)
		msg := fmt.Sprintf("Stopped by the repetition check: the role sent %s %d times in a row, after a note asking it to change course.", what, f.RepeatCount)
		return event.Card{Status: "error", Summary: msg, Error: &event.ErrorInfo{Kind: "loop_detected", Message: msg}}, true
	case f.RepeatCount == repeatNote:
		p.Action = "noted"
		r.emit(event.Repetition, p)
		f.Marks = append(f.Marks, Mark{Kind: "message", Message: fmt.Sprintf("[Loop check — repetition] You have sent %s %d times in a row; "+
			"doing it again will give the same result. Change course: try something different, or finish with what you have.", what, f.RepeatCount)})
	}
	return event.Card{}, false
}

// replyKey identifies a reply for the repetition check: its tool calls
// (names and canonical arguments) when it made any, else its text with
// white space collapsed. what describes it for the model; tool and hash
// name a reply's single call.
func replyKey(content string, calls []provider.ToolCall) (key, what, tool, hash string) {
	h := sha256.New()
	if len(calls) == 0 {
		h.Write([]byte("text\x00" + strings.Join(strings.Fields(content), " ")))
		return hex.EncodeToString(h.Sum(nil)[:12]), "the same reply", "", ""
	}
	for _, c := range calls {
		h.Write([]byte(c.Name + "\x00" + canonicalJSON(c.Arguments) + "\x00"))
	}
	key = hex.EncodeToString(h.Sum(nil)[:12])
	if len(calls) > 1 {
		return key, fmt.Sprintf("the same %d tool calls with the same arguments", len(calls)), "", ""
	}
	return key, fmt.Sprintf("the same %s call with the same arguments", calls[0].Name), calls[0].Name, argsHash(calls[0].Arguments)
}
