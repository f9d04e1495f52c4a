package provider

// The OpenAI Responses API, streamed, through the official openai-go client.
// OpenAI serves it, and so does llama.cpp's llama-server (/v1/responses, a
// translation onto its Chat Completions path).
//
// Wire quirks handled:
//   - store:false; the whole conversation is sent as input items every call
//     (llama.cpp rejects previous_response_id).
//   - Leading system messages become "instructions"; later ones stay
//     system-role input messages.
//   - Assistant text is sent as an output message item
//     {type:"message", role:"assistant", content:[{type:"output_text"}]}:
//     llama.cpp rejects an assistant message with plain string content.
//     Tool calls are function_call items (call_id, name, arguments) and
//     tool results function_call_output items (call_id, output).
//   - Reasoning, when the request asks for it, is sent back as a reasoning
//     item with reasoning_text content (what llama.cpp maps to
//     reasoning_content). OpenAI's own reasoning models want their
//     encrypted reasoning items instead, which this provider does not keep:
//     leave includeReasoning off for them.
//   - Function tools are sent with strict:false (llama.cpp defaults a
//     missing strict to true, which our schemas do not satisfy).
//   - Streamed events: output_text deltas; reasoning_text and
//     reasoning_summary_text deltas; function_call items announced by
//     output_item.added, arguments from function_call_arguments.delta and
//     made final by .done / output_item.done; response.completed (or
//     response.incomplete, mapped to a length finish) with usage
//     (input_tokens, output_tokens, input_tokens_details.cached_tokens).
//     A stream without a terminal event is a cut stream; "error" events and
//     response.failed are classified from their error objects.

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

type openAIResponses struct {
	cfg  Config
	base string
	svc  responses.ResponseService
}

// NewOpenAIResponses returns a Provider for the Responses API. It also
// implements Prober.
func NewOpenAIResponses(cfg Config) Provider {
	base := cfg.openAIBase()
	return &openAIResponses{cfg: cfg, base: base, svc: responses.NewResponseService(openAIOptions(cfg, base)...)}
}

func (p *openAIResponses) Name() string { return "openai-responses" }

func (p *openAIResponses) Probe(ctx context.Context) ([]ModelInfo, error) {
	return probeOpenAICompatible(ctx, p.cfg, p.base)
}

func (p *openAIResponses) params(req Request) responses.ResponseNewParams {
	params := responses.ResponseNewParams{
		Model: shared.ResponsesModel(p.cfg.model(req)),
		Store: param.NewOpt(false),
	}
	msgs := req.Messages
	var instructions []string
	for len(msgs) > 0 && msgs[0].Role == "system" {
		instructions = append(instructions, msgs[0].Content)
		msgs = msgs[1:]
	}
	if len(instructions) > 0 {
		params.Instructions = param.NewOpt(strings.Join(instructions, "\n\n"))
	}
	params.Input.OfInputItemList = responsesInput(msgs, req.IncludeReasoning)
	for _, t := range req.Tools {
		fn := &responses.FunctionToolParam{
			Name:       t.Name,
			Parameters: schemaMap(t.Parameters),
			Strict:     param.NewOpt(false),
		}
		if t.Description != "" {
			fn.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, responses.ToolUnionParam{OfFunction: fn})
	}
	if req.Temperature != nil {
		params.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		params.MaxOutputTokens = param.NewOpt(int64(req.MaxTokens))
	}
	return params
}

func responsesInput(msgs []Message, includeReasoning bool) responses.ResponseInputParam {
	items := make(responses.ResponseInputParam, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case "assistant":
			if includeReasoning && m.Reasoning != "" {
				r := param.Override[responses.ResponseReasoningItemParam](map[string]any{
					"type":    "reasoning",
					"summary": []any{},
					"content": []any{map[string]any{"type": "reasoning_text", "text": m.Reasoning}},
				})
				items = append(items, responses.ResponseInputItemUnionParam{OfReasoning: &r})
			}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				items = append(items, responses.ResponseInputItemUnionParam{OfOutputMessage: &responses.ResponseOutputMessageParam{
					Content: []responses.ResponseOutputMessageContentUnionParam{{
						OfOutputText: &responses.ResponseOutputTextParam{Text: m.Content},
					}},
					Status: responses.ResponseOutputMessageStatusCompleted,
				}})
			}
			for _, tc := range m.ToolCalls {
				items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: &responses.ResponseFunctionToolCallParam{
					CallID:    tc.ID,
					Name:      tc.Name,
					Arguments: string(argsValue(tc.Arguments)),
				}})
			}
		case "tool":
			out := &responses.ResponseInputItemFunctionCallOutputParam{CallID: param.NewOpt(m.ToolCallID)}
			out.Output.OfString = param.NewOpt(m.Content)
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: out})
		default:
			role := responses.EasyInputMessageRoleUser
			if m.Role == "system" {
				role = responses.EasyInputMessageRoleSystem
			}
			msg := &responses.EasyInputMessageParam{Role: role, Type: responses.EasyInputMessageTypeMessage}
			msg.Content.OfString = param.NewOpt(m.Content)
			items = append(items, responses.ResponseInputItemUnionParam{OfMessage: msg})
		}
	}
	return items
}

func (p *openAIResponses) Complete(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	callCtx, watch := watchIdle(ctx, p.cfg.RequestTimeout)
	defer watch.stop()

	stream := p.svc.NewStreaming(callCtx, p.params(req))
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return nil, classifyFailure(ctx, callCtx, err, false)
	}
	watch.kick()

	var (
		rep      = newReply(req, onDelta)
		resp     = &Response{}
		finished bool
	)
	// Calls are keyed by item id; events that lack one fall back to the
	// output index.
	callKey := func(itemID string, outputIndex int64) string {
		if itemID != "" {
			return "id:" + itemID
		}
		return "ix:" + strconv.FormatInt(outputIndex, 10)
	}
	indexKey := map[int64]string{}
	findCall := func(itemID string, outputIndex int64) *pendingCall {
		if itemID != "" {
			if c := rep.calls.lookup("id:" + itemID); c != nil {
				return c
			}
		}
		if k, ok := indexKey[outputIndex]; ok {
			return rep.calls.lookup(k)
		}
		k := callKey(itemID, outputIndex)
		indexKey[outputIndex] = k
		return rep.calls.get(k)
	}

	for !finished && stream.Next() {
		watch.kick()
		ev := stream.Current()
		// kept is what the event adds to the reply (its budget): text,
		// reasoning and call fragments; final arguments only past what
		// their deltas already brought.
		kept := 0
		switch ev.Type {
		case "response.output_text.delta":
			kept = len(ev.Delta)
			rep.emit(Delta{Content: ev.Delta})
		case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
			kept = len(ev.Delta)
			rep.emit(Delta{Reasoning: ev.Delta})
		case "response.output_item.added", "response.output_item.done":
			if ev.Item.Type != "function_call" {
				break
			}
			c := findCall(ev.Item.ID, ev.OutputIndex)
			kept = callCost + len(ev.Item.ID) + len(ev.Item.CallID) + len(ev.Item.Name)
			if ev.Item.CallID != "" {
				c.id = ev.Item.CallID
			}
			if ev.Item.Name != "" {
				c.name = ev.Item.Name
			}
			if ev.Type == "response.output_item.done" && ev.Item.Arguments.JSON.OfString.Valid() {
				kept += max(0, len(ev.Item.Arguments.OfString)-c.args.Len())
				c.done, c.hasDone = ev.Item.Arguments.OfString, true
			}
		case "response.function_call_arguments.delta":
			kept = len(ev.Delta)
			findCall(ev.ItemID, ev.OutputIndex).args.WriteString(ev.Delta)
		case "response.function_call_arguments.done":
			c := findCall(ev.ItemID, ev.OutputIndex)
			kept = max(0, len(ev.Arguments)-c.args.Len())
			c.done, c.hasDone = ev.Arguments, true
		case "response.completed", "response.incomplete":
			finished = true
			r := ev.Response
			resp.Model = string(r.Model)
			u := r.Usage
			resp.Usage = Usage{
				PromptTokens:       int(u.InputTokens),
				CompletionTokens:   int(u.OutputTokens),
				TotalTokens:        int(u.TotalTokens),
				CachedPromptTokens: int(u.InputTokensDetails.CachedTokens),
				// The Responses API always reports input_tokens_details.
				EvaluatedPromptTokens: int(max(0, u.InputTokens-u.InputTokensDetails.CachedTokens)),
				PromptCacheReported:   true,
			}
			resp.FinishReason = "stop"
			if ev.Type == "response.incomplete" {
				resp.FinishReason = "length"
				if r.IncompleteDetails.Reason == "content_filter" {
					resp.FinishReason = "content_filter"
				}
			}
		case "response.failed":
			raw := []byte(ev.Response.Error.RawJSON())
			if len(raw) == 0 {
				raw = []byte(ev.RawJSON())
			}
			return nil, classifyStreamError(raw)
		case "error":
			return nil, classifyStreamError([]byte(ev.RawJSON()))
		}
		if err := rep.budget.spend(kept); err != nil {
			return nil, err
		}
	}
	if err := stream.Err(); err != nil {
		var se *ssestream.StreamError
		if errors.As(err, &se) {
			return nil, classifyStreamError(se.Event.Data)
		}
		return nil, classifyFailure(ctx, callCtx, err, true)
	}
	if !finished {
		return nil, unfinished(ctx, callCtx, "response.completed")
	}
	resp, err := rep.finish(resp)
	if err != nil {
		return nil, err
	}
	// The API names no finish reason: a completed reply with calls made them.
	if len(resp.ToolCalls) > 0 && resp.FinishReason == "stop" {
		resp.FinishReason = "tool_calls"
	}
	return resp, nil
}
