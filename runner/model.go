package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
)

// errRejected reports a context-length rejection parked on the role for
// its next safe point.
var errRejected = errors.New("prompt rejected as too long")

// errEmptyReply marks a reply with neither content nor tool calls;
// errLengthOnly one that hit the token limit before any content.
var (
	errEmptyReply = errors.New("empty reply")
	errLengthOnly = errors.New("the reply hit the token limit before any content; raise model.generation.maxTokens")
)

// buildRequest assembles the model request of f's next turn.
func (r *Run) buildRequest(f *Frame) provider.Request {
	role := r.opts.Guild.Roles[f.Role]
	m := r.modelOf(f.Role)
	gen := m.cfg.Generation
	req := provider.Request{
		Model: m.cfg.Name, Messages: f.History, Temperature: gen.Temperature,
		MaxTokens: r.opts.Deployment.OutputReserveFor(m.name), IncludeReasoning: role.ReplaysReasoning(), Role: f.Role, RoleID: f.RoleID,
	}
	for _, name := range role.Tools {
		m, ok := r.opts.Guild.Manifests[name]
		if !ok {
			continue // an MCP grant: mcpToolSpecs offers those
		}
		req.Tools = append(req.Tools, provider.ToolSpec{Name: m.Name, Description: m.Description, Parameters: m.Parameters})
	}
	return req
}

// reply is a model call's answer: the provider's response and, when it
// made no tool call through the API, the calls its content wrote as text.
type reply struct {
	*provider.Response
	text textCalls
}

// callModel makes f's next model call with retries. It returns the reply,
// or a card that finishes the role (llm_unavailable, or empty_reply when
// every attempt came back with nothing to say), or errStopped. A
// provider that keeps failing suspends the run until it answers again —
// unless it never answered in this process (errEndpoint: a setup problem),
// or its probe keeps saying it is back while every call fails
// (errHalted: the run stops instead of looping).
func (r *Run) callModel(ctx context.Context, f *Frame) (*reply, event.Card, error) {
	attempts := r.opts.Deployment.Executor.ProviderHealth.Retries
	if attempts <= 0 {
		attempts = 3
	}
	suspendAfter, _, _ := r.healthSettings()
	m := r.modelOf(f.Role)
	var last error
	for attempt := 1; ; attempt++ {
		req := r.buildRequest(f)
		req.Tools = append(req.Tools, r.mcpToolSpecs(ctx, f)...)
		r.emit(event.LLMCallStart, event.LLMCallStartPayload{Role: f.Role, RoleID: f.RoleID})
		start := time.Now()
		resp, text, err := r.complete(ctx, f, m.prov, req)
		if err == nil {
			m.health.success(r.now())
			r.failing = failStreak{}
			r.logCall(f, req, resp, time.Since(start))
			return &reply{Response: resp, text: text}, event.Card{}, nil
		}
		if ctx.Err() != nil {
			return nil, event.Card{}, errStopped
		}
		last = err
		pe := provider.AsError(err)
		if errors.Is(err, errEmptyReply) || errors.Is(err, errLengthOnly) {
			// A well-formed reply, even an unusable one, is an answer.
			m.health.markAnswered()
		}
		if pe != nil && pe.Category == provider.CategoryContextLength {
			if card, done := r.noteRejection(f, pe); done {
				return nil, card, nil
			}
			return nil, event.Card{}, errRejected
		}
		category := provider.CategoryMalformed
		if pe != nil {
			category = pe.Category
		}
		r.failing.note(pe)
		failures := 0
		if suspendable(category) {
			failures = m.health.failure(r.now(), string(category))
		}
		suspend := suspendAfter > 0 && failures >= suspendAfter
		retry := attempt < attempts && (pe == nil || pe.Retryable())
		fp := event.ProviderFailurePayload{RoleID: f.RoleID, Category: string(category), Attempt: attempt, Message: failureMessage(err)}
		if pe != nil {
			fp.StatusCode, fp.Body = pe.StatusCode, pe.Body
		}
		switch {
		case (suspend || !retry) && !m.health.hasAnswered():
			r.emit(event.ProviderFailure, fp)
			r.unanswered = &provider.Unanswered{Endpoint: r.endpoint(m), Probe: m.probe, Call: err}
			return nil, event.Card{}, errEndpoint
		case suspend && r.failing.relapses >= maxRelapses:
			r.emit(event.ProviderFailure, fp)
			r.halt = haltCard(r.failing, r.id)
			return nil, event.Card{}, errHalted
		}
		fp.Retrying = retry || suspend
		r.emit(event.ProviderFailure, fp)
		if suspend {
			if err := r.suspend(ctx, string(category), m); err != nil {
				return nil, event.Card{}, err
			}
			// The probe says the provider is back: if the next call fails
			// again, that is a relapse, and relapses are bounded.
			r.failing.relapses++
			attempt = 0
			continue
		}
		if !retry {
			break
		}
		retryAfter := 0.0
		if pe != nil {
			retryAfter = pe.RetryAfterSeconds
		}
		if backoff(ctx, attempt, retryAfter) != nil {
			return nil, event.Card{}, errStopped
		}
	}
	if errors.Is(last, errEmptyReply) {
		return nil, r.emptyReplyCard(f, attempts, last), nil
	}
	msg := fmt.Sprintf("the model endpoint did not answer usefully after %d attempts: %v", attempts, last)
	r.emit(event.LLMUnavailable, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Message: msg})
	card := errorCard("llm_unavailable", "The model endpoint is unavailable; the role could not continue.")
	// The technical detail names the failure without the provider's body:
	// that stays on the provider_failure events, operator-only.
	if pe := provider.AsError(last); pe != nil {
		card.Error.Details, _ = json.Marshal(map[string]any{"category": pe.Category, "statusCode": pe.StatusCode, "attempts": attempts,
			"see": "provider_failure events in the run log"})
	}
	return nil, card, nil
}

// failureMessage is a failure's own message for its provider_failure
// event, on one line and capped.
func failureMessage(err error) string {
	msg := err.Error()
	if pe := provider.AsError(err); pe != nil && pe.Err != nil {
		msg = pe.Err.Error()
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if r := []rune(msg); len(r) > event.MaxFailureMessage {
		msg = string(r[:event.MaxFailureMessage-1]) + "…"
	}
	return msg
}

// endpoint describes where the provider sends requests, for messages.
func (r *Run) endpoint(m roleModel) provider.Endpoint {
	if d, ok := m.prov.(provider.Described); ok {
		return d.Endpoint()
	}
	return provider.Endpoint{Provider: m.prov.Name(), BaseURL: provider.RedactURL(m.cfg.APIBase)}
}

// emptyReplyCard finishes a role whose every attempt came back with
// nothing to say: an implicit finish, as the reply had no tool calls, but
// not a success.
func (r *Run) emptyReplyCard(f *Frame, attempts int, last error) event.Card {
	msg := fmt.Sprintf("the model replied %d times in a row with nothing to act on: %s", attempts, failureMessage(last))
	r.emit(event.ImplicitFinish, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Message: msg, Status: "error", Kind: kindEmptyReply})
	return errorCard(kindEmptyReply, fmt.Sprintf("The model answered %d times with an empty reply (no text and no tool call, or only markup); the role could not continue.", attempts))
}

// kindEmptyReply is the error kind of a role whose replies were empty.
const kindEmptyReply = "empty_reply"

// complete makes one model call. A reply with no tool call through the
// API is read for calls written as text; one with neither those nor
// anything to say (empty, white space, only markup) is an empty reply.
func (r *Run) complete(ctx context.Context, f *Frame, prov provider.Provider, req provider.Request) (*provider.Response, textCalls, error) {
	timeout := time.Duration(r.opts.Deployment.Executor.ProviderHealth.RequestTimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	names := newWireNames(req.Tools)
	var first time.Time // the first streamed text, for the reply's speed
	resp, err := prov.Complete(cctx, names.toWire(req), func(d provider.Delta) {
		if first.IsZero() {
			first = time.Now()
		}
		r.publishDelta(f.RoleID, d)
	})
	if err == nil && resp != nil && resp.Usage.TokensPerSecond == 0 {
		resp.Usage.TokensPerSecond = replySpeed(resp.Usage.CompletionTokens, first)
	}
	names.fromWire(resp, r.opts.Deployment.MCPServers)
	if err != nil {
		if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && provider.AsError(err) == nil {
			err = &provider.Error{Category: provider.CategoryTimeout, Err: err}
		}
		return nil, textCalls{}, err
	}
	if len(resp.ToolCalls) > 0 {
		return resp, textCalls{}, nil
	}
	if resp.Content == "" && resp.FinishReason == "length" {
		return nil, textCalls{}, &provider.Error{Category: provider.CategoryBadRequest, Err: errLengthOnly}
	}
	text := parseTextCalls(resp.Content)
	if !text.found() && !answered(resp.Content) {
		return nil, textCalls{}, &provider.Error{Category: provider.CategoryMalformed, Err: emptyReply(resp)}
	}
	for i, c := range text.Calls {
		text.Calls[i].Name = names.local(c.Name, r.opts.Deployment.MCPServers)
	}
	return resp, text, nil
}

// emptyReply says what an empty reply was: the model ended its turn at
// once, with no text and no tool call, or wrote only white space or the
// markup of a chat template.
func emptyReply(resp *provider.Response) error {
	why := "the model ended its turn at once, with no text and no tool call"
	switch {
	case strings.TrimSpace(resp.Content) == "" && resp.Content != "":
		why = "the model wrote only white space, with no tool call"
	case resp.Content != "":
		why = fmt.Sprintf("the model wrote only markup or template tokens (%s), with no tool call", clipRunes(strings.Join(strings.Fields(resp.Content), " "), 60))
	}
	var facts []string
	if resp.FinishReason != "" {
		facts = append(facts, fmt.Sprintf("finish_reason %q", resp.FinishReason))
	}
	if resp.Usage.CompletionTokens > 0 || resp.Usage.PromptTokens > 0 {
		facts = append(facts, fmt.Sprintf("%d completion tokens", resp.Usage.CompletionTokens))
	}
	if resp.Reasoning != "" {
		why = "the model wrote only reasoning, then ended its turn with no text and no tool call"
	}
	if len(facts) > 0 {
		why += " (" + strings.Join(facts, ", ") + ")"
	}
	return fmt.Errorf("%w: %s", errEmptyReply, why)
}

// logCall records a successful call with the messages sent since the
// role's previous call.
func (r *Run) logCall(f *Frame, req provider.Request, resp *provider.Response, elapsed time.Duration) {
	f.PromptTokens = resp.Usage.PromptTokens
	f.PromptChars = historyChars(req.Messages)
	f.CompletionTokens += resp.Usage.CompletionTokens
	p := event.LLMCallPayload{
		Role: f.Role, RoleID: f.RoleID, MessageCount: len(req.Messages), SentFrom: f.SentCount,
		Usage: event.Usage{
			PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
			TotalTokens: resp.Usage.TotalTokens, CachedPromptTokens: resp.Usage.CachedPromptTokens,
			EvaluatedPromptTokens: resp.Usage.EvaluatedPromptTokens, PromptCacheReported: resp.Usage.PromptCacheReported,
			TokensPerSecond: resp.Usage.TokensPerSecond,
		},
		FinishReason: resp.FinishReason, Model: resp.Model, ModelRef: r.modelOf(f.Role).name, ElapsedMs: elapsed.Milliseconds(),
	}
	if p.Usage.TotalTokens == 0 {
		p.Usage.TotalTokens = p.Usage.PromptTokens + p.Usage.CompletionTokens
	}
	if r.opts.LogLevel == LogFull {
		for _, m := range req.Messages[f.SentCount:] {
			p.Sent = append(p.Sent, wireMessage(m))
		}
		p.Received = &event.Received{Content: resp.Content, Reasoning: resp.Reasoning}
		for _, tc := range resp.ToolCalls {
			p.Received.ToolCalls = append(p.Received.ToolCalls, event.WireToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
	}
	f.SentCount = len(req.Messages) + 1 // the reply joins the history next
	f.Rejections = 0
	r.emit(event.LLMCall, p)
	r.notePressure(f)
}

func wireMessage(m provider.Message) event.WireMessage {
	w := event.WireMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
	for _, tc := range m.ToolCalls {
		w.ToolCalls = append(w.ToolCalls, event.WireToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	return w
}
