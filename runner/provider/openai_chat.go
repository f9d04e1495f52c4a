package provider

// OpenAI Chat Completions, streamed, through the official openai-go client.
// This is the provider most local users run: llama.cpp's llama-server,
// Ollama, vLLM, LM Studio and OpenRouter all serve it under
// http://HOST:PORT/v1.
//
// Wire quirks handled:
//   - The client is built without the SDK's environment defaults, so
//     OPENAI_API_KEY/OPENAI_BASE_URL never leak to a local server; with no
//     key no Authorization header is sent (llama.cpp without --api-key and
//     Ollama accept that; with a key it is sent as a Bearer token).
//   - Retries are off in the SDK (the runner owns them) and HTTP errors are
//     classified by classifyMiddleware.
//   - Tool-call arguments are assembled from deltas keyed by index, across
//     any number of chunks; a server that reuses index 0 for a second call
//     with a new id (older Ollama) starts a new call; missing ids are
//     synthesised; every call's arguments must parse as JSON ("" is {}).
//   - stream_options.include_usage is requested so usage arrives in the
//     final chunk (llama.cpp may put it on the finish chunk itself);
//     prompt_tokens_details.cached_tokens is the cached prompt count.
//   - Reasoning is read from the deployment's field ("reasoning_content":
//     llama.cpp, DeepSeek, vLLM; "reasoning": Ollama, OpenRouter), or from
//     either when none is configured, out of each delta's raw JSON. It is
//     sent back on assistant messages, in that same field, only when the
//     request asks for it.
//   - max_tokens is sent (llama.cpp, Ollama and vLLM accept it);
//     max_completion_tokens only to api.openai.com.
//   - A stream that ends without any finish_reason is a cut stream (a
//     connection lost after the finish chunk costs only the usage); one
//     carrying {"error":...} (llama.cpp mid-stream failures) is classified
//     from that object.

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

type openAIChat struct {
	cfg  Config
	base string
	chat openai.ChatCompletionService
}

// NewOpenAIChat returns a Provider for the Chat Completions API of any
// OpenAI-compatible server. It also implements Prober.
func NewOpenAIChat(cfg Config) Provider {
	base := cfg.openAIBase()
	return &openAIChat{cfg: cfg, base: base, chat: openai.NewChatCompletionService(openAIOptions(cfg, base)...)}
}

// openAIOptions are the client options shared by both OpenAI providers.
// Services are built directly (not via openai.NewClient) so that no
// environment variable is consulted.
func openAIOptions(cfg Config, base string) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithBaseURL(base + "/"),
		option.WithHTTPClient(cfg.httpClient()),
		option.WithMaxRetries(0),
		option.WithMiddleware(classifyMiddleware),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return opts
}

func (p *openAIChat) Name() string { return "openai" }

func (p *openAIChat) Probe(ctx context.Context) ([]ModelInfo, error) {
	return probeOpenAICompatible(ctx, p.cfg, p.base)
}

// reasoningFields lists where reasoning is looked for, in order.
func (p *openAIChat) reasoningFields() []string {
	if p.cfg.ReasoningField != "" {
		return []string{p.cfg.ReasoningField}
	}
	return []string{"reasoning_content", "reasoning"}
}

func (p *openAIChat) sendReasoningField() string {
	if p.cfg.ReasoningField != "" {
		return p.cfg.ReasoningField
	}
	return "reasoning_content"
}

func (p *openAIChat) params(req Request) openai.ChatCompletionNewParams {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.cfg.model(req)),
		Messages:      p.messages(req),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schemaMap(t.Parameters))}
		if t.Description != "" {
			fn.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if req.Temperature != nil {
		params.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if isOpenAIHost(p.base) {
			params.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			params.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	return params
}

func (p *openAIChat) messages(req Request) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages))
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			out = append(out, openai.SystemMessage(m.Content))
		case "tool":
			out = append(out, openai.ToolMessage(m.Content, m.ToolCallID))
		case "assistant":
			a := openai.ChatCompletionAssistantMessageParam{}
			a.Content.OfString = param.NewOpt(m.Content)
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      tc.Name,
							Arguments: string(argsValue(tc.Arguments)),
						},
					},
				})
			}
			if req.IncludeReasoning && m.Reasoning != "" {
				a.SetExtraFields(map[string]any{p.sendReasoningField(): m.Reasoning})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default: // user, and anything unknown is safest as user text
			out = append(out, openai.UserMessage(m.Content))
		}
	}
	return out
}

func (p *openAIChat) Complete(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	callCtx, watch := watchIdle(ctx, p.cfg.RequestTimeout)
	defer watch.stop()

	stream := p.chat.NewStreaming(callCtx, p.params(req))
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return nil, classifyFailure(ctx, callCtx, err, false)
	}
	watch.kick()

	var (
		content, reasoning strings.Builder
		calls              callAssembler
		idAt               = map[int64]string{} // last call id seen per index
		resp               = &Response{}
		sawFinish          bool
	)
	fields := p.reasoningFields()
	for stream.Next() {
		watch.kick()
		chunk := stream.Current()
		if chunk.Model != "" {
			resp.Model = chunk.Model
		}
		if chunk.JSON.Usage.Valid() {
			u := chunk.Usage
			resp.Usage = Usage{
				PromptTokens:       int(u.PromptTokens),
				CompletionTokens:   int(u.CompletionTokens),
				TotalTokens:        int(u.TotalTokens),
				CachedPromptTokens: int(u.PromptTokensDetails.CachedTokens),
			}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue // n=1: only the first choice is ours
			}
			d := Delta{Content: ch.Delta.Content, Reasoning: deltaReasoning(ch.Delta, fields)}
			content.WriteString(d.Content)
			reasoning.WriteString(d.Reasoning)
			if onDelta != nil && (d.Content != "" || d.Reasoning != "") {
				onDelta(d)
			}
			for _, tc := range ch.Delta.ToolCalls {
				key := strconv.FormatInt(tc.Index, 10)
				c := calls.lookup(key)
				switch {
				case c == nil:
					c = calls.get(key)
				case tc.ID != "" && idAt[tc.Index] != "" && tc.ID != idAt[tc.Index]:
					c = calls.rekey(key)
				}
				if tc.ID != "" {
					c.id = tc.ID
					idAt[tc.Index] = tc.ID
				}
				if tc.Function.Name != "" && c.name == "" {
					c.name = tc.Function.Name
				}
				c.args.WriteString(tc.Function.Arguments)
			}
			if ch.FinishReason != "" {
				sawFinish = true
				resp.FinishReason = ch.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		var se *ssestream.StreamError
		if errors.As(err, &se) {
			return nil, classifyStreamError(se.Event.Data)
		}
		// A connection lost after the finish chunk loses only the usage
		// chunk and [DONE]: the reply itself is whole, so keep it.
		if !sawFinish || ctx.Err() != nil {
			return nil, classifyFailure(ctx, callCtx, err, true)
		}
	}
	if !sawFinish {
		if err := classifyFailure(ctx, callCtx, context.Cause(callCtx), true); err != nil {
			return nil, err
		}
		return nil, cutStream("a finish_reason")
	}
	toolCalls, err := calls.finish()
	if err != nil {
		return nil, err
	}
	resp.Content = content.String()
	resp.Reasoning = reasoning.String()
	resp.ToolCalls = toolCalls
	if resp.Usage.TotalTokens == 0 {
		resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	}
	return resp, nil
}

// deltaReasoning reads the reasoning text of one delta from the first
// configured field that carries a non-empty string.
func deltaReasoning(d openai.ChatCompletionChunkChoiceDelta, fields []string) string {
	for _, f := range fields {
		fld, ok := d.JSON.ExtraFields[f]
		if !ok || fld.Raw() == "" || fld.Raw() == "null" {
			continue // extra fields are never Valid(); Raw is what arrived
		}
		var s string
		if json.Unmarshal([]byte(fld.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}
