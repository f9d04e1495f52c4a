package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
)

// errRejected reports a context-length rejection parked on the role for
// its next safe point.
var errRejected = errors.New("prompt rejected as too long")

// errEmptyReply marks a reply with neither content nor tool calls.
var errEmptyReply = errors.New("the model returned an empty reply")

// buildRequest assembles the model request of f's next turn.
func (r *Run) buildRequest(f *Frame) provider.Request {
	role := r.opts.Guild.Roles[f.Role]
	gen := r.opts.Deployment.Model.Generation
	req := provider.Request{
		Model: r.opts.Deployment.Model.Name, Messages: f.History, Temperature: gen.Temperature,
		MaxTokens: gen.MaxTokens, IncludeReasoning: role.ReplaysReasoning(), Role: f.Role, RoleID: f.RoleID,
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

// callModel makes f's next model call with retries. It returns the reply,
// or a card that finishes the role (llm_unavailable), or errStopped. A
// provider that keeps failing suspends the run until it answers again.
func (r *Run) callModel(ctx context.Context, f *Frame) (*provider.Response, event.Card, error) {
	attempts := r.opts.Deployment.Executor.ProviderHealth.Retries
	if attempts <= 0 {
		attempts = 3
	}
	suspendAfter, _, _ := r.healthSettings()
	var last error
	for attempt := 1; ; attempt++ {
		req := r.buildRequest(f)
		req.Tools = append(req.Tools, r.mcpToolSpecs(ctx, f)...)
		r.emit(event.LLMCallStart, event.LLMCallStartPayload{Role: f.Role, RoleID: f.RoleID})
		start := time.Now()
		resp, err := r.complete(ctx, f, req)
		if err == nil {
			r.opts.Health.success(r.now())
			r.logCall(f, req, resp, time.Since(start))
			return resp, event.Card{}, nil
		}
		if ctx.Err() != nil {
			return nil, event.Card{}, errStopped
		}
		last = err
		pe := provider.AsError(err)
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
		failures := 0
		if suspendable(category) {
			failures = r.opts.Health.failure(r.now(), string(category))
		}
		suspend := suspendAfter > 0 && failures >= suspendAfter
		retry := attempt < attempts && (pe == nil || pe.Retryable())
		fp := event.ProviderFailurePayload{RoleID: f.RoleID, Category: string(category), Attempt: attempt, Retrying: retry || suspend}
		if pe != nil {
			fp.StatusCode, fp.Body = pe.StatusCode, pe.Body
		}
		r.emit(event.ProviderFailure, fp)
		if suspend {
			if err := r.suspend(ctx, string(category)); err != nil {
				return nil, event.Card{}, err
			}
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

func (r *Run) complete(ctx context.Context, f *Frame, req provider.Request) (*provider.Response, error) {
	timeout := time.Duration(r.opts.Deployment.Executor.ProviderHealth.RequestTimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	names := newWireNames(req.Tools)
	resp, err := r.opts.Provider.Complete(cctx, names.toWire(req), func(d provider.Delta) { r.publishDelta(f.RoleID, d) })
	names.fromWire(resp, r.opts.Deployment.MCPServers)
	if err != nil {
		if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && provider.AsError(err) == nil {
			err = &provider.Error{Category: provider.CategoryTimeout, Err: err}
		}
		return nil, err
	}
	if resp.Content == "" && len(resp.ToolCalls) == 0 {
		if resp.FinishReason == "length" {
			return nil, &provider.Error{Category: provider.CategoryBadRequest, Err: errors.New("the reply hit the token limit before any content; raise model.generation.maxTokens")}
		}
		return nil, &provider.Error{Category: provider.CategoryMalformed, Err: errEmptyReply}
	}
	return resp, nil
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
		},
		FinishReason: resp.FinishReason, Model: resp.Model, ElapsedMs: elapsed.Milliseconds(),
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
