package provider

// Bounds on one reply. An endpoint that streams a reply forever, or one
// event that never ends, would otherwise be assembled in memory until the
// process runs out of it. Past either bound the call fails as a malformed
// reply: the runner retries it, records provider_failure events, and
// finishes the role with llm_unavailable if it keeps happening, as for any
// other reply that makes no sense.

import (
	"bytes"
	"fmt"
	"io"
)

const (
	// maxReplyBytes caps a reply's content, reasoning and tool calls
	// whatever the output budget.
	maxReplyBytes = 16 << 20
	// replyBytesPerToken is the multiple of the output budget (tokens) a
	// reply may take in bytes: far above what any tokenizer's tokens
	// average, so a real reply never meets it.
	replyBytesPerToken = 64
	// minReplyBytes is the cap for small budgets (a server may count
	// reasoning apart from max_tokens, or ignore it).
	minReplyBytes = 1 << 20
	// eventCost is what each streamed event counts against the cap, so
	// that a stream of events adding nothing ends too.
	eventCost = 8
	// callCost is what each new tool call counts (its bookkeeping).
	callCost = 64
	// maxStreamEvent bounds one server-sent event: its lines up to the
	// blank line that ends it, joined by the stream's reader.
	maxStreamEvent = 32 << 20
)

// replyBudget counts what a reply has streamed so far.
type replyBudget struct {
	limit, used, maxTokens int
}

// newReplyBudget is the budget of a reply with an output budget of
// maxTokens (0: none given).
func newReplyBudget(maxTokens int) *replyBudget {
	limit := maxReplyBytes
	if maxTokens > 0 && maxTokens < maxReplyBytes/replyBytesPerToken {
		limit = max(minReplyBytes, maxTokens*replyBytesPerToken)
	}
	return &replyBudget{limit: limit, maxTokens: maxTokens}
}

// spend counts n more bytes of the reply (plus one event). It returns the
// malformed-reply failure once the reply is past its budget.
func (b *replyBudget) spend(n int) error {
	b.used += n + eventCost
	if b.used <= b.limit {
		return nil
	}
	budget := "no output budget"
	if b.maxTokens > 0 {
		budget = fmt.Sprintf("an output budget of %d tokens", b.maxTokens)
	}
	return &Error{Category: CategoryMalformed, Err: fmt.Errorf(
		"the reply passed %d MiB of content, reasoning and tool calls, the most a reply with %s may stream: the endpoint does not end its reply", b.limit>>20, budget)}
}

// eventBound is a stream body that fails once one event (the bytes since
// the last blank line) passes maxStreamEvent: the readers join an event's
// data lines in memory until its blank line, so an event that never ends
// must be cut here. Lines end with "\n" (the readers split on it); a line
// holding only "\r" is blank.
type eventBound struct {
	io.ReadCloser
	event int  // bytes of the current event
	line  int  // bytes of the current line
	cr    bool // the current line so far is exactly "\r"
}

func (b *eventBound) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && b.note(p[:n]) {
		return n, &Error{Category: CategoryMalformed, Err: fmt.Errorf("a stream event passed %d MiB without ending: the endpoint does not end its reply", maxStreamEvent>>20)}
	}
	return n, err
}

// note follows p's lines and reports whether the current event is too big.
func (b *eventBound) note(p []byte) bool {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.carry(p)
			b.event += len(p)
			break
		}
		seg := p[:i]
		blank := (b.line == 0 && (len(seg) == 0 || len(seg) == 1 && seg[0] == '\r')) || (b.line == 1 && b.cr && len(seg) == 0)
		b.event += i + 1
		if blank {
			b.event = 0
		}
		b.line, b.cr = 0, false
		p = p[i+1:]
	}
	return b.event > maxStreamEvent
}

// carry adds a part of a line that goes on past the read.
func (b *eventBound) carry(part []byte) {
	if b.line == 0 {
		b.cr = len(part) == 1 && part[0] == '\r'
	} else {
		b.cr = false
	}
	b.line += len(part)
}
