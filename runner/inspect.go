package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/tools"
)

// Caps of the inspection tools: a handler never receives a full message,
// so a 256k-token target cannot flood its own small context.
const (
	maxWindowChars   = 8192
	maxSearchMatches = 25
	searchContext    = 128
	maxIndexEntries  = 400
	maxRecentCalls   = 50
)

// internalTools lists the tools the executor implements besides agent and
// finish: they need the role stack, not just the workspace.
func (r *Run) internalTools() map[string]internalHandler {
	if r.internal != nil {
		return r.internal
	}
	r.internal = map[string]internalHandler{
		"context_info":           r.toolContextInfo,
		"edit_context":           r.toolEditContext,
		"list_role_messages":     r.toolListRoleMessages,
		"read_message_window":    r.toolReadMessageWindow,
		"search_role_blocks":     r.toolSearchRoleBlocks,
		"recent_role_tool_calls": r.toolRecentRoleToolCalls,
		"trigger_interrupt":      r.toolTriggerInterrupt,
	}
	return r.internal
}

// target resolves a targetRole argument. Empty means the caller itself
// (when self is allowed). A cross-role target must be a registered live
// instance other than the caller: suspended, so its state is frozen.
func (r *Run) target(caller *Frame, id string, self bool) (*Frame, *tools.Result) {
	if id == "" || id == caller.RoleID {
		if self {
			return caller, nil
		}
		res := tools.Fail(tools.KindInvalidArguments, "targetRole must name another live role instance, not yourself")
		return nil, &res
	}
	for _, f := range r.stack {
		if f.RoleID == id && f != caller {
			return f, nil
		}
	}
	var live []string
	for _, f := range r.stack {
		if f != caller {
			live = append(live, f.RoleID)
		}
	}
	res := tools.Fail(tools.KindNotFound, fmt.Sprintf("no live role instance %q; live instances: %s", id, strings.Join(live, ", ")))
	return nil, &res
}

// observed logs a read-only cross-role read.
func (r *Run) observed(caller, target *Frame, tool string) {
	if target != caller {
		r.emit(event.Observe, event.ObservePayload{Role: target.Role, RoleID: target.RoleID, Details: tool, By: caller.RoleID})
	}
}

// targetArgs is the argument every inspection tool shares; each tool's
// arguments embed it, so decodeTarget can resolve the role for all of them.
type targetArgs struct {
	TargetRole string `json:"targetRole"`
}

func (a *targetArgs) role() string { return a.TargetRole }

type targeted interface{ role() string }

// decodeTarget decodes a tool's arguments into a and resolves the role they
// target. Decoding is lenient, as the tools always were: a field of the
// wrong type is left zero and its check reports it.
func (r *Run) decodeTarget(caller *Frame, args json.RawMessage, a targeted, self bool) (*Frame, *tools.Result) {
	_ = json.Unmarshal(args, a)
	return r.target(caller, a.role(), self)
}

// keepEnds caps an index at maxIndexEntries: it keeps the two protected
// messages and the newest, and says whether it cut anything.
func keepEnds[T any](s []T) ([]T, bool) {
	if len(s) <= maxIndexEntries {
		return s, false
	}
	return append(s[:2:2], s[len(s)-maxIndexEntries+2:]...), true
}

// count is how many entries a tool returns: what was asked, def when
// nothing (or nonsense) was, never more than most.
func count(asked, def, most int) int {
	if asked <= 0 {
		asked = def
	}
	return min(asked, most)
}

// fieldText is a message's content, or its reasoning when field says so.
func fieldText(m provider.Message, field string) string {
	if field == "reasoning" {
		return m.Reasoning
	}
	return m.Content
}

func (r *Run) toolContextInfo(_ context.Context, f *Frame, args json.RawMessage) tools.Result {
	var a targetArgs
	t, res := r.decodeTarget(f, args, &a, true)
	if res != nil {
		return *res
	}
	r.observed(f, t, "context_info")
	return tools.OK(r.contextInfo(t))
}

type messageSize struct {
	Index  int    `json:"index"`
	Role   string `json:"role"`
	Tokens int    `json:"estimatedTokens"`
}

func (r *Run) contextInfo(t *Frame) map[string]any {
	ratio := t.ratio()
	budget := r.effectiveBudget(t.Role)
	sizes := make([]messageSize, 0, len(t.History))
	for i, m := range t.History {
		sizes = append(sizes, messageSize{Index: i, Role: m.Role, Tokens: int(float64(messageChars(m))*ratio + 0.5)})
	}
	sizes, truncated := keepEnds(sizes)
	return map[string]any{
		"roleId": t.RoleID, "contextWindow": r.modelOf(t.Role).cfg.ContextWindow, "effectiveBudget": budget,
		"promptTokens": t.PromptTokens, "budgetRemaining": budget - t.PromptTokens,
		"estimatedTokens": estimateTokens(t.History, ratio), "messageCount": len(t.History),
		"protected": []int{0, 1}, "messages": sizes, "messagesTruncated": truncated,
	}
}

// editOp is one edit_context operation. Both the seed manifest's names and
// the original's (type, range [start, end) with the end excluded, as its
// drop splices) are accepted, so a guild written for the original runs
// unchanged.
type editOp struct {
	Op      string `json:"op"`
	Type    string `json:"type"`
	Start   *int   `json:"start"`
	End     *int   `json:"end"`
	Range   []int  `json:"range"`
	Index   *int   `json:"index"`
	Content string `json:"content"`
}

func (o editOp) kind() string {
	if o.Op != "" {
		return o.Op
	}
	return o.Type
}

// span is the half-open message range an op covers.
func (o editOp) span() (int, int, bool) {
	switch {
	case o.Start != nil && o.End != nil:
		return *o.Start, *o.End, true
	case len(o.Range) == 2:
		return o.Range[0], o.Range[1], true
	case o.Index != nil:
		return *o.Index, *o.Index + 1, true
	}
	return 0, 0, false
}

func (r *Run) toolEditContext(_ context.Context, f *Frame, args json.RawMessage) tools.Result {
	var a struct {
		TargetRole string   `json:"targetRole"`
		Operations []editOp `json:"operations"`
	}
	// Strict, unlike decodeTarget: a malformed operation list must be
	// refused, not run as an empty edit.
	if err := json.Unmarshal(args, &a); err != nil {
		return tools.Fail(tools.KindInvalidArguments, "operations: "+err.Error())
	}
	t, res := r.target(f, a.TargetRole, true)
	if res != nil {
		return *res
	}
	// The turn in progress (the reply whose tool calls are being run,
	// including this call when editing oneself) cannot be edited.
	limit := len(t.History)
	if t.Pending != nil {
		limit = len(t.History) - t.Pending.Next - 1
	}
	if msg := validateEdits(t.History, limit, a.Operations); msg != "" {
		return tools.Fail(tools.KindInvalidArguments, msg)
	}
	ratio := t.ratio()
	before := estimateTokens(t.History, ratio)
	t.History = applyEdits(t.History, a.Operations)
	t.SentCount = 0
	after := estimateTokens(t.History, ratio)
	if after >= before {
		f.CompactionAttempts++
		if max := r.opts.Deployment.Executor.MaxCompactionAttempts; max > 0 && f.CompactionAttempts >= max {
			f.Marks = append(f.Marks, Mark{Kind: "abort", Message: "edit_context was called repeatedly without reducing the conversation.",
				Error: &event.ErrorInfo{Kind: "compaction_failed", Message: fmt.Sprintf("%d edits in a row did not reduce the conversation", f.CompactionAttempts)}})
		}
	} else {
		f.CompactionAttempts = 0
	}
	info := r.contextInfo(t)
	info["estimatedTokensBefore"] = before
	return tools.OK(info)
}

// validateEdits checks a whole batch before anything is applied: messages
// 0 and 1 are protected, indexes must exist, and a drop may not separate a
// tool call from its results.
func validateEdits(h []provider.Message, limit int, ops []editOp) string {
	for i, o := range ops {
		if start, _, ok := o.span(); ok && start < 2 {
			return fmt.Sprintf("operation %d touches message %d; messages 0 and 1 (system prompt and task) are protected, so nothing was changed", i, start)
		}
	}
	for i, o := range ops {
		start, end, ok := o.span()
		if !ok {
			return fmt.Sprintf("operation %d: give start and end (or index for replace)", i)
		}
		switch o.kind() {
		case "drop", "strip_reasoning", "replace":
		default:
			return fmt.Sprintf("operation %d: op must be drop, strip_reasoning or replace", i)
		}
		if end <= start || end > limit {
			return fmt.Sprintf("operation %d: range [%d, %d) must be non-empty and end at or before %d (the current turn cannot be edited); nothing was changed", i, start, end, limit)
		}
		if o.kind() == "drop" {
			if start < len(h) && h[start].Role == "tool" {
				return fmt.Sprintf("operation %d: message %d is a tool result; drop it together with the assistant message that called it; nothing was changed", i, start)
			}
			if end < len(h) && h[end].Role == "tool" {
				return fmt.Sprintf("operation %d: dropping [%d, %d) would leave the tool results from message %d without their call; extend the range; nothing was changed", i, start, end, end)
			}
		}
	}
	return ""
}

func applyEdits(h []provider.Message, ops []editOp) []provider.Message {
	out := make([]provider.Message, len(h))
	copy(out, h)
	drop := make([]bool, len(h))
	for _, o := range ops {
		start, end, _ := o.span()
		for i := start; i < end; i++ {
			switch o.kind() {
			case "drop":
				drop[i] = true
			case "strip_reasoning":
				out[i].Reasoning = ""
			case "replace":
				out[i].Content = o.Content
			}
		}
	}
	kept := out[:0]
	for i, m := range out {
		if !drop[i] {
			kept = append(kept, m)
		}
	}
	return kept
}

func (r *Run) toolListRoleMessages(_ context.Context, f *Frame, args json.RawMessage) tools.Result {
	var a targetArgs
	t, res := r.decodeTarget(f, args, &a, true)
	if res != nil {
		return *res
	}
	type entry struct {
		Index          int    `json:"index"`
		Role           string `json:"role"`
		ContentChars   int    `json:"contentChars"`
		ReasoningChars int    `json:"reasoningChars"`
		ToolCallCount  int    `json:"toolCallCount"`
		Tool           string `json:"tool,omitempty"`
	}
	list := make([]entry, 0, len(t.History))
	for i, m := range t.History {
		list = append(list, entry{Index: i, Role: m.Role, ContentChars: utf8.RuneCountInString(m.Content),
			ReasoningChars: utf8.RuneCountInString(m.Reasoning), ToolCallCount: len(m.ToolCalls), Tool: m.ToolName})
	}
	list, truncated := keepEnds(list)
	r.observed(f, t, "list_role_messages")
	return tools.OK(map[string]any{"roleId": t.RoleID, "messageCount": len(t.History), "messages": list, "truncated": truncated})
}

func (r *Run) toolReadMessageWindow(_ context.Context, f *Frame, args json.RawMessage) tools.Result {
	var a struct {
		targetArgs
		Index int    `json:"index"`
		Field string `json:"field"`
		Start int    `json:"start"`
		End   *int   `json:"end"`
	}
	t, res := r.decodeTarget(f, args, &a, true)
	if res != nil {
		return *res
	}
	if a.Index < 0 || a.Index >= len(t.History) {
		return tools.Fail(tools.KindInvalidArguments, fmt.Sprintf("index %d is out of range; the conversation has %d messages", a.Index, len(t.History)))
	}
	text := fieldText(t.History[a.Index], a.Field)
	runes := []rune(text)
	start := min(max(a.Start, 0), len(runes))
	end := start + maxWindowChars
	if a.End != nil && *a.End < end {
		end = *a.End
	}
	end = min(max(end, start), len(runes))
	r.observed(f, t, "read_message_window")
	return tools.OK(map[string]any{"roleId": t.RoleID, "index": a.Index, "field": a.Field, "start": start, "end": end,
		"totalChars": len(runes), "text": string(runes[start:end]), "more": end < len(runes)})
}

func (r *Run) toolSearchRoleBlocks(_ context.Context, f *Frame, args json.RawMessage) tools.Result {
	// query and regex are the seed manifest's names; pattern and kind
	// ("substring", the default, or "regex") the original's.
	var a struct {
		targetArgs
		Query      string `json:"query"`
		Pattern    string `json:"pattern"`
		Field      string `json:"field"`
		Regex      bool   `json:"regex"`
		Kind       string `json:"kind"`
		MaxMatches int    `json:"maxMatches"`
	}
	t, res := r.decodeTarget(f, args, &a, true)
	if res != nil {
		return *res
	}
	q := a.Query
	if q == "" {
		q = a.Pattern
	}
	if q == "" {
		return tools.Fail(tools.KindInvalidArguments, "query is empty")
	}
	switch a.Kind {
	case "", "substring":
	case "regex":
		a.Regex = true
	default:
		return tools.Fail(tools.KindInvalidArguments, fmt.Sprintf("kind %q is not one of substring, regex", a.Kind))
	}
	expr := regexp.QuoteMeta(q)
	if a.Regex {
		expr = q
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return tools.Fail(tools.KindInvalidArguments, "query is not a valid regular expression: "+err.Error())
	}
	limit := count(a.MaxMatches, 10, maxSearchMatches)
	type match struct {
		Index   int    `json:"index"`
		Field   string `json:"field"`
		Offset  int    `json:"offset"`
		Snippet string `json:"snippet"`
	}
	matches := []match{} // [] rather than null when nothing matches
	more := false
scan:
	for i, m := range t.History {
		for _, field := range []string{"content", "reasoning"} {
			if a.Field != "" && a.Field != "both" && a.Field != field {
				continue
			}
			text := fieldText(m, field)
			// Ask for one more than still fits, to know whether there is more
			// without scanning a huge history to its end.
			for _, loc := range re.FindAllStringIndex(text, limit-len(matches)+1) {
				if len(matches) == limit {
					more = true
					break scan
				}
				off := utf8.RuneCountInString(text[:loc[0]])
				matches = append(matches, match{Index: i, Field: field, Offset: off, Snippet: window(text, loc[0], loc[1])})
			}
		}
	}
	r.observed(f, t, "search_role_blocks")
	return tools.OK(map[string]any{"roleId": t.RoleID, "matches": matches, "more": more})
}

// window is text around [a, b) with searchContext characters either side.
func window(text string, a, b int) string {
	before := []rune(text[:a])
	after := []rune(text[b:])
	if len(before) > searchContext {
		before = before[len(before)-searchContext:]
	}
	if len(after) > searchContext {
		after = after[:searchContext]
	}
	return string(before) + text[a:b] + string(after)
}

func (r *Run) toolRecentRoleToolCalls(_ context.Context, f *Frame, args json.RawMessage) tools.Result {
	var a struct {
		targetArgs
		Count int `json:"count"`
		Limit int `json:"limit"`
	}
	t, res := r.decodeTarget(f, args, &a, true)
	if res != nil {
		return *res
	}
	n := a.Count
	if n == 0 {
		n = a.Limit
	}
	n = count(n, 20, maxRecentCalls)
	type traced struct {
		Tool       string `json:"tool"`
		ArgsHash   string `json:"argsHash"`
		ResultKind string `json:"resultKind"`
	}
	kinds := map[string]string{}
	for _, m := range t.History {
		if m.Role == "tool" {
			var k struct{ Kind string }
			_ = json.Unmarshal([]byte(m.Content), &k)
			if k.Kind == "" {
				k.Kind = "unknown"
			}
			kinds[m.ToolCallID] = k.Kind
		}
	}
	var calls []traced
	for _, m := range t.History {
		for _, tc := range m.ToolCalls {
			kind, ok := kinds[tc.ID]
			if !ok {
				kind = "pending"
			}
			calls = append(calls, traced{Tool: tc.Name, ArgsHash: argsHash(tc.Arguments), ResultKind: kind})
		}
	}
	if len(calls) > n {
		calls = calls[len(calls)-n:]
	}
	r.observed(f, t, "recent_role_tool_calls")
	return tools.OK(map[string]any{"roleId": t.RoleID, "calls": calls})
}

// argsHash identifies a call's arguments for the loop detector and the
// repetition check: equal arguments hash equally whatever their spacing
// or key order.
func argsHash(args string) string {
	sum := sha256.Sum256([]byte(canonicalJSON(args)))
	return hex.EncodeToString(sum[:6])
}

// canonicalJSON re-encodes arguments so equal calls hash equally whatever
// their spacing or key order.
func canonicalJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (r *Run) toolTriggerInterrupt(_ context.Context, f *Frame, args json.RawMessage) tools.Result {
	var a struct {
		targetArgs
		Action string `json:"action"`
		Reason string `json:"reason"`
	}
	t, res := r.decodeTarget(f, args, &a, false)
	if res != nil {
		return *res
	}
	if r.decisions == nil {
		r.decisions = map[string]decision{}
	}
	r.decisions[t.RoleID] = decision{Action: a.Action, Reason: a.Reason}
	return tools.OK(map[string]string{"recorded": a.Action, "targetRole": t.RoleID})
}

// decision is a handler's trigger_interrupt verdict on a suspended role.
type decision struct {
	Action string
	Reason string
}
