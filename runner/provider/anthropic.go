package provider

// Anthropic Messages, streamed, through anthropic-sdk-go.
//
// Wire quirks handled:
//   - The message service is built without the SDK's credential chain
//     (ANTHROPIC_API_KEY, profiles, federation), so only Config.APIKey is
//     ever sent, as x-api-key, and only when set. BaseURL may be given with
//     or without a trailing /v1 (the SDK adds v1/messages itself).
//   - Leading system messages become the system parameter; a later system
//     message becomes user text (the API has no system role in messages).
//   - Tool results become tool_result blocks in a user message; consecutive
//     results (and any user text after them) are merged into one user
//     message, as the API requires results right after the tool_use turn.
//     Assistant tool calls become tool_use blocks; an assistant message with
//     neither text nor calls is dropped, and an empty tool result is sent
//     without content (empty text blocks are rejected).
//   - max_tokens is required: 4096 when the request sets none.
//   - Streamed tool input arrives as input_json_delta fragments per content
//     block and is assembled and validated like every other provider's.
//   - thinking_delta is reasoning. Thinking is never sent back, even with
//     IncludeReasoning: the API only accepts thinking blocks with the
//     signature it issued, and Message has nowhere to keep one.
//   - Usage: message_start carries input, cache_read and cache_creation
//     tokens, message_delta the output tokens (and, on newer servers,
//     updated input counts). Prompt tokens = input + cache_read +
//     cache_creation; cache_read is CachedPromptTokens.
//   - stop_reason: end_turn/stop_sequence→stop, tool_use→tool_calls,
//     max_tokens→length, refusal→content_filter. A stream without
//     message_stop is a cut stream; "error" events (overloaded_error, ...)
//     are classified from their error objects.

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"
)

const anthropicDefaultMaxTokens = 4096

type anthropicProvider struct {
	cfg  Config
	root string
	msgs anthropic.MessageService
}

// NewAnthropic returns a Provider for the Anthropic Messages API. It also
// implements Prober (GET /v1/models).
func NewAnthropic(cfg Config) Provider {
	root := serverRoot(strings.TrimSpace(cfg.BaseURL))
	if root == "" {
		root = defaultAnthropicBase
	}
	// openAIOptions' options, in this SDK's own option type.
	opts := []option.RequestOption{
		option.WithBaseURL(root + "/"),
		option.WithHTTPClient(cfg.httpClient()),
		option.WithMaxRetries(0),
		option.WithMiddleware(classifyMiddleware),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &anthropicProvider{cfg: cfg, root: root, msgs: anthropic.NewMessageService(opts...)}
}

func (p *anthropicProvider) Name() string { return "anthropic" }

func (p *anthropicProvider) Probe(ctx context.Context) ([]ModelInfo, error) {
	return probeAnthropic(ctx, p.cfg, p.root)
}

func (p *anthropicProvider) params(req Request) anthropic.MessageNewParams {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.cfg.model(req)),
		MaxTokens: anthropicDefaultMaxTokens,
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	if req.Temperature != nil {
		params.Temperature = param.NewOpt(*req.Temperature)
	}
	msgs := req.Messages
	for len(msgs) > 0 && msgs[0].Role == "system" {
		if msgs[0].Content != "" {
			params.System = append(params.System, anthropic.TextBlockParam{Text: msgs[0].Content})
		}
		msgs = msgs[1:]
	}
	params.Messages = anthropicMessages(msgs)
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: anthropicTool(t)})
	}
	return params
}

func anthropicTool(t ToolSpec) *anthropic.ToolParam {
	schema := schemaMap(t.Parameters)
	in := anthropic.ToolInputSchemaParam{}
	for k, v := range schema {
		switch k {
		case "type":
		case "properties":
			in.Properties = v
		case "required":
			if list, ok := v.([]any); ok {
				for _, r := range list {
					if s, ok := r.(string); ok {
						in.Required = append(in.Required, s)
					}
				}
			}
		default:
			if in.ExtraFields == nil {
				in.ExtraFields = map[string]any{}
			}
			in.ExtraFields[k] = v
		}
	}
	tp := &anthropic.ToolParam{Name: t.Name, InputSchema: in}
	if t.Description != "" {
		tp.Description = param.NewOpt(t.Description)
	}
	return tp
}

func anthropicMessages(msgs []Message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	// addUser appends blocks to the trailing user message, or starts one.
	addUser := func(blocks ...anthropic.ContentBlockParamUnion) {
		if n := len(out); n > 0 && out[n-1].Role == anthropic.MessageParamRoleUser {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, anthropic.NewUserMessage(blocks...))
	}
	for _, m := range msgs {
		switch m.Role {
		case "assistant":
			var blocks []anthropic.ContentBlockParamUnion
			if strings.TrimSpace(m.Content) != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, argsValue(tc.Arguments), tc.Name))
			}
			if len(blocks) == 0 {
				continue
			}
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		case "tool":
			res := &anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.Content != "" { // an empty text block is rejected; no content is not
				res.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
			}
			addUser(anthropic.ContentBlockParamUnion{OfToolResult: res})
		default:
			if m.Content == "" {
				continue
			}
			addUser(anthropic.NewTextBlock(m.Content))
		}
	}
	return out
}

func anthropicFinish(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence", "pause_turn":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "refusal":
		return "content_filter"
	}
	return stop
}

// anthropicKept is what an event adds to the reply, for its budget: text,
// thinking, tool-input fragments, a tool call's id, name and first input.
func anthropicKept(ev *anthropic.MessageStreamEventUnion) int {
	switch ev.Type {
	case "content_block_start":
		if ev.ContentBlock.Type == "tool_use" {
			return callCost + len(ev.ContentBlock.ID) + len(ev.ContentBlock.Name) + len(ev.ContentBlock.JSON.Input.Raw())
		}
	case "content_block_delta":
		return len(ev.Delta.Text) + len(ev.Delta.Thinking) + len(ev.Delta.PartialJSON)
	}
	return 0
}

func (p *anthropicProvider) Complete(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	// Opened and ended as openAIResponses.Complete is, but this SDK's
	// stream and error types are its own.
	callCtx, watch := watchIdle(ctx, p.cfg.RequestTimeout)
	defer watch.stop()

	stream := p.msgs.NewStreaming(callCtx, p.params(req))
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return nil, classifyFailure(ctx, callCtx, err, false)
	}
	watch.kick()

	var (
		rep                           = newReply(req, onDelta)
		resp                          = &Response{}
		stopped                       bool
		input, cacheRead, cacheCreate int64
		output                        int64
		initialInput                  = map[string]string{}
	)
	for !stopped && stream.Next() {
		watch.kick()
		ev := stream.Current()
		key := strconv.FormatInt(ev.Index, 10)
		if err := rep.budget.spend(anthropicKept(&ev)); err != nil {
			return nil, err
		}
		switch ev.Type {
		case "message_start":
			resp.Model = string(ev.Message.Model)
			u := ev.Message.Usage
			input, cacheRead, cacheCreate, output = u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" {
				c := rep.calls.get(key)
				c.id, c.name = ev.ContentBlock.ID, ev.ContentBlock.Name
				if raw := ev.ContentBlock.JSON.Input.Raw(); raw != "" && raw != "null" && raw != "{}" {
					initialInput[key] = raw
				}
			}
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				rep.emit(Delta{Content: ev.Delta.Text})
			case "thinking_delta":
				rep.emit(Delta{Reasoning: ev.Delta.Thinking})
			case "input_json_delta":
				if c := rep.calls.lookup(key); c != nil {
					c.args.WriteString(ev.Delta.PartialJSON)
				}
			}
		case "content_block_stop":
			if c := rep.calls.lookup(key); c != nil && c.args.Len() == 0 {
				if raw, ok := initialInput[key]; ok {
					c.args.WriteString(raw)
				}
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				resp.FinishReason = anthropicFinish(string(ev.Delta.StopReason))
			}
			u := ev.Usage
			if u.OutputTokens > 0 {
				output = u.OutputTokens
			}
			if u.InputTokens > 0 {
				input = u.InputTokens
			}
			if u.CacheReadInputTokens > 0 {
				cacheRead = u.CacheReadInputTokens
			}
			if u.CacheCreationInputTokens > 0 {
				cacheCreate = u.CacheCreationInputTokens
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		var ae *anthropic.Error
		if errors.As(err, &ae) && ae.RawJSON() != "" {
			return nil, classifyStreamError([]byte(ae.RawJSON()))
		}
		return nil, classifyFailure(ctx, callCtx, err, true)
	}
	if !stopped {
		return nil, unfinished(ctx, callCtx, "message_stop")
	}
	prompt := input + cacheRead + cacheCreate
	resp.Usage = Usage{
		PromptTokens:       int(prompt),
		CompletionTokens:   int(output),
		TotalTokens:        int(prompt + output),
		CachedPromptTokens: int(cacheRead),
		// The Messages API always reports cache reads and writes: what
		// was written to the cache, like the rest, was evaluated.
		EvaluatedPromptTokens: int(input + cacheCreate),
		PromptCacheReported:   true,
	}
	return rep.finish(resp)
}
