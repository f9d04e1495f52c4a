package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
)

// Platform notices the context machinery sends. Roles are told in plain
// words what happened so they can act on it.
const (
	noticePressure = "[Platform notice — context pressure] Your conversation is close to the model's context limit. " +
		"Do not start new work. Call finish now with status \"error\", error.kind \"context_handoff\", and a summary that is a " +
		"handoff brief for the fresh agent that will continue: what is done, what remains, key file paths, decisions made, and the immediate next step."
	noticeCompacted = "[Platform notice — context compacted]"
	noticeExceeded  = "[Platform notice — context window exceeded]"
)

// effectiveBudget is min(contextWindow − the output reserve, learned
// ceiling).
func (r *Run) effectiveBudget(role string) int {
	rm := r.modelOf(role)
	m := rm.cfg
	b := m.ContextWindow - r.opts.Deployment.OutputReserveFor(rm.name)
	if m.ContextWindow <= 0 {
		b = 0
	}
	if c := r.ceiling(rm.name); c > 0 && (b <= 0 || c < b) {
		b = c
	}
	return b
}

// notePressure checks a successful call's reported prompt size against the
// threshold. The response waits for the next turn boundary.
func (r *Run) notePressure(f *Frame) {
	budget := r.effectiveBudget(f.Role)
	th := r.opts.Deployment.Executor.ContextPressureThreshold
	if budget <= 0 || th <= 0 || f.PressureFired || float64(f.PromptTokens) < th*float64(budget) {
		return
	}
	f.PressureFired, f.PressurePending = true, true
	r.emit(event.ContextPressure, event.ContextPressurePayload{Role: f.Role, RoleID: f.RoleID, PromptTokens: f.PromptTokens, EffectiveBudget: budget})
}

// noteRejection records a context-length rejection: it teaches the learned
// ceiling and parks the rejection on the role for the next safe point.
// done is set when the role must finish with context_budget_exceeded.
func (r *Run) noteRejection(f *Frame, pe *provider.Error) (event.Card, bool) {
	f.Rejections++
	msg := fmt.Sprintf("the endpoint rejected the prompt as too long (rejection %d of 3)", f.Rejections)
	if pe.PromptTokens > 0 {
		msg = fmt.Sprintf("the endpoint rejected a %d-token prompt as too long (rejection %d of 3)", pe.PromptTokens, f.Rejections)
		r.learn(r.modelOf(f.Role).name, pe.PromptTokens)
	}
	r.emit(event.ContextBudgetExceeded, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Message: msg})
	if f.Rejections >= 3 {
		return budgetExceededCard("The conversation no longer fits the model's context window after three compactions."), true
	}
	f.RejectedPending = pe.PromptTokens
	if f.RejectedPending == 0 {
		f.RejectedPending = -1
	}
	return event.Card{}, false
}

func budgetExceededCard(msg string) event.Card {
	return errorCard("context_budget_exceeded", msg)
}

// contextPoint answers a parked rejection or pressure at f's safe point.
func (r *Run) contextPoint(ctx context.Context, f *Frame) (event.Card, bool, error) {
	if f.RejectedPending != 0 || f.PressurePending {
		// What the role sees is about to change: a call it repeats
		// afterwards (re-reading a file compaction dropped) is not the
		// same call again.
		f.RepeatKey, f.RepeatCount = "", 0
	}
	if f.RejectedPending != 0 {
		reported := f.RejectedPending
		f.RejectedPending = 0
		if ok, err := r.compactWithHandler(ctx, f, "context_budget_exceeded"); err != nil || ok {
			return event.Card{}, false, err
		}
		card, done := r.backstop(f, reported)
		return card, done, nil
	}
	if f.PressurePending {
		f.PressurePending = false
		if r.isEntry(f) {
			if ok, err := r.compactWithHandler(ctx, f, "context_pressure"); err != nil || ok {
				return event.Card{}, false, err
			}
		}
		f.History = append(f.History, provider.Message{Role: "user", Content: noticePressure})
	}
	return event.Card{}, false, nil
}

func (r *Run) isEntry(f *Frame) bool {
	return len(r.stack) > 0 && r.stack[0] == f && r.handlerDepth == 0
}

// compactWithHandler runs the context handler against the suspended f.
// ok is false when there is no handler or it failed (the caller falls back).
func (r *Run) compactWithHandler(ctx context.Context, f *Frame, trigger string) (bool, error) {
	handler := r.opts.Deployment.Executor.ContextHandlerRole
	if handler == "" || r.opts.Guild.Roles[handler] == nil || r.handlerDepth > 0 {
		return false, nil
	}
	r.emit(event.Interrupt, event.InterruptPayload{Trigger: trigger, Handler: handler, Target: f.RoleID})
	before := estimateTokens(f.History, f.ratio())
	card, err := r.runHandler(ctx, handler, r.compactionTask(f, trigger))
	if err != nil {
		return false, err
	}
	after := estimateTokens(f.History, f.ratio())
	res := event.InterruptResolvedPayload{Trigger: trigger, Handler: handler, Target: f.RoleID, Action: "compacted", Summary: card.Summary}
	if card.Status != "success" || after >= before {
		res.Action, res.HandlerStatus = "failed", card.Status
		r.emit(event.InterruptResolved, res)
		return false, nil
	}
	r.emit(event.InterruptResolved, res)
	f.History = append(f.History, provider.Message{Role: "user", Content: noticeCompacted + " Parts of your conversation were removed to make room. " + card.Summary})
	f.PressureFired = false
	return true, nil
}

func (r *Run) compactionTask(f *Frame, trigger string) string {
	budget := r.effectiveBudget(f.Role)
	var b strings.Builder
	fmt.Fprintf(&b, "Compact the conversation of role instance %s (role %s). ", f.RoleID, f.Role)
	if trigger == "context_pressure" {
		fmt.Fprintf(&b, "Its last prompt used %d tokens of a %d-token budget.", f.PromptTokens, budget)
	} else {
		b.WriteString("The model endpoint rejected its last request as too long.")
	}
	fmt.Fprintf(&b, "\n\nTarget: bring it well under %d tokens. Use context_info and list_role_messages with targetRole %q to see the messages, "+
		"read_message_window to check what a message holds, and edit_context with targetRole %q to drop or shorten old turns. "+
		"Messages 0 and 1 (system prompt and task) are protected; never separate a tool call from its results. "+
		"Then call finish with status success and a short summary of what you removed, which the role will read.", budget*6/10, f.RoleID, f.RoleID)
	return b.String()
}

// backstop compacts f in place when no handler could. done is set (with a
// context_budget_exceeded card) when even the protected remainder does not
// fit.
func (r *Run) backstop(f *Frame, reported int) (event.Card, bool) {
	window := r.modelOf(f.Role).cfg.ContextWindow
	if c := r.ceiling(r.modelOf(f.Role).name); c > 0 && (window <= 0 || c < window) {
		window = c
	}
	if window <= 0 {
		window = 8192
	}
	target := int(float64(window) * compactTargetFraction)
	ratio := tokenRatio(reported, f.History)
	out, st, fits := compactHistory(f.History, f.TaskIndex, target, ratio)
	if !fits {
		return budgetExceededCard("Even the system prompt, the task and the latest turn do not fit the model's context window."), true
	}
	f.History = out
	f.SentCount = 0
	r.emit(event.ContextCompacted, event.ContextCompactedPayload{
		Role: f.Role, RoleID: f.RoleID, DroppedMessages: st.Dropped, TruncatedToolMessages: st.TruncatedTool,
		StrippedReasoningMessages: st.StrippedReasoning, EstimatedPromptTokens: st.Estimated, ContextWindow: window,
	})
	f.History = append(f.History, provider.Message{Role: "user", Content: fmt.Sprintf(
		"%s The last request was too long for the model, so the platform removed %d older messages, shortened %d tool results and dropped earlier reasoning. "+
			"Re-read any file you still need, or finish honestly if you cannot continue.", noticeExceeded, st.Dropped, st.TruncatedTool)})
	return event.Card{}, false
}
