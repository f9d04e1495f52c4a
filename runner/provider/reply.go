package provider

import "strings"

// reply is one streamed reply as every wire format assembles it: its text
// and reasoning as they arrive, its tool-call fragments, and the budget all
// of them count against. Only decoding the events differs between the
// formats; what is kept of them, and how it becomes a Response, does not.
type reply struct {
	content, reasoning strings.Builder
	calls              callAssembler
	budget             *replyBudget
	onDelta            func(Delta)
}

// newReply starts the reply to req; onDelta, when not nil, is passed each
// fragment that carries text or reasoning.
func newReply(req Request, onDelta func(Delta)) *reply {
	return &reply{budget: newReplyBudget(req.MaxTokens), onDelta: onDelta}
}

// emit keeps a streamed fragment and passes it on unless it is empty.
func (r *reply) emit(d Delta) {
	r.content.WriteString(d.Content)
	r.reasoning.WriteString(d.Reasoning)
	if r.onDelta != nil && (d.Content != "" || d.Reasoning != "") {
		r.onDelta(d)
	}
}

// finish validates the tool calls and completes resp, which holds what the
// format's own events said (model, finish reason, usage), with the text,
// reasoning and calls. A server that gave no total has it summed.
func (r *reply) finish(resp *Response) (*Response, error) {
	toolCalls, err := r.calls.finish()
	if err != nil {
		return nil, err
	}
	resp.Content = r.content.String()
	resp.Reasoning = r.reasoning.String()
	resp.ToolCalls = toolCalls
	if resp.Usage.TotalTokens == 0 {
		resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	}
	return resp, nil
}
