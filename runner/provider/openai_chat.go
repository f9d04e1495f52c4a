package provider

// OpenAI Chat Completions, streamed, through the official openai-go client.
// This is the provider most local users run: llama.cpp's llama-server,
// Ollama, vLLM, LM Studio and OpenRouter all serve it under
// http://HOST:PORT/v1.
//
// The SDK client does the transport, options, middleware and SSE framing;
// the request body and the chunks are encoded and decoded in
// openai_chat_wire.go, because the SDK's reflective param encoder and chunk
// decoder cost more CPU than everything else in a call.
//
// Wire quirks handled:
//   - The client is built without the SDK's environment defaults, so
//     OPENAI_API_KEY/OPENAI_BASE_URL never leak to a local server; with no
//     key no Authorization header is sent (llama.cpp without --api-key and
//     Ollama accept that; with a key it is sent as a Bearer token).
//   - Retries are off in the SDK (the runner owns them) and HTTP errors are
//     classified by classifyMiddleware.
//   - Messages are sent with plain string content; a tool's schema without
//     a "type" gets "type":"object", and a missing or non-object schema
//     becomes the empty object schema (llama.cpp and OpenAI both need one).
//   - Tool-call arguments are assembled from deltas keyed by index, across
//     any number of chunks; a server that reuses index 0 for a second call
//     with a new id (older Ollama) starts a new call; missing ids are
//     synthesised; every call's arguments must parse as JSON ("" is {}).
//   - Chunks are decoded leniently: a field of an unexpected type is left
//     empty instead of failing the stream; malformed JSON still fails it.
//   - stream_options.include_usage is requested so usage arrives in the
//     final chunk (llama.cpp may put it on the finish chunk itself);
//     prompt_tokens_details.cached_tokens is the cached prompt count, and
//     llama.cpp's timings object (cache_n, prompt_n, predicted_per_second)
//     the server's own cache split and generation speed.
//   - Reasoning is read from the deployment's field ("reasoning_content":
//     llama.cpp, DeepSeek, vLLM; "reasoning": Ollama, OpenRouter; any other
//     name is read from the raw delta), or from either common one when none
//     is configured. It is sent back on assistant messages, in that same
//     field, only when the request asks for it. A reply that opens with an
//     inline <think>…</think> block (a server without a reasoning parser)
//     has that block moved to the reasoning (thinkSplitter).
//   - max_tokens is sent (llama.cpp, Ollama and vLLM accept it);
//     max_completion_tokens only to api.openai.com.
//   - A stream that ends without any finish_reason is a cut stream (a
//     connection lost after the finish chunk costs only the usage); one
//     carrying {"error":...} (llama.cpp mid-stream failures) is classified
//     from that object.

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

type openAIChat struct {
	cfg  Config
	base string
	chat openai.ChatCompletionService
	// openAIHost is isOpenAIHost(base), decided once rather than parsing
	// the URL on every call.
	openAIHost bool
	schemas    schemaCache
}

// NewOpenAIChat returns a Provider for the Chat Completions API of any
// OpenAI-compatible server. It also implements Prober.
func NewOpenAIChat(cfg Config) Provider {
	base := cfg.openAIBase()
	return &openAIChat{
		cfg:        cfg,
		base:       base,
		chat:       openai.NewChatCompletionService(openAIOptions(cfg, base)...),
		openAIHost: isOpenAIHost(base),
	}
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

func (p *openAIChat) sendReasoningField() string {
	if p.cfg.ReasoningField != "" {
		return p.cfg.ReasoningField
	}
	return "reasoning_content"
}

func (p *openAIChat) Complete(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	body, err := p.chatBody(req)
	if err != nil {
		return nil, err
	}
	callCtx, watch := watchIdle(ctx, p.cfg.RequestTimeout)
	defer watch.stop()

	// NewStreaming without its two costly parts: the encoded body replaces
	// the (empty) params, and an *http.Response destination leaves the
	// response body open for a stream of our own chunk type. New applies
	// the same bearer auth and client options as NewStreaming. (Client.Post
	// would also take raw bytes, but naming openai.Client links every SDK
	// service into the binary: about 14 MB more text.)
	var raw *http.Response
	_, err = p.chat.New(callCtx, openai.ChatCompletionNewParams{},
		option.WithRequestBody("application/json", body), option.WithResponseBodyInto(&raw))
	if err == nil && (raw == nil || raw.Body == nil) {
		err = errors.New("a response without a body")
	}
	if err != nil {
		if raw != nil && raw.Body != nil {
			_ = raw.Body.Close() // the SDK may hand a response over with its error
		}
		return nil, classifyFailure(ctx, callCtx, err, false)
	}
	stream := newChatStream(raw.Body, customReasoningField(p.cfg.ReasoningField))
	defer stream.Close()
	watch.kick()

	var (
		rep       = newReply(req, onDelta)
		idAt      = map[int64]string{} // last call id seen per index
		resp      = &Response{}
		think     thinkSplitter // an inline <think> block
		sawFinish bool
	)
	var chunk chatStreamChunk
	for stream.next(&chunk) {
		watch.kick()
		if err := rep.budget.spend(chunk.size()); err != nil {
			return nil, err
		}
		if chunk.Model != "" {
			resp.Model = chunk.Model
		}
		if chunk.Usage != nil || chunk.Timings != nil {
			resp.Usage = chatUsage(chunk.Usage, chunk.Timings)
		}
		for i, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue // n=1: only the first choice is ours
			}
			d := Delta{Content: ch.Delta.Content, Reasoning: chunk.reasoning(i, p.cfg.ReasoningField)}
			if d.Reasoning != "" {
				think.disable()
			}
			var inline string
			d.Content, inline = think.feed(d.Content)
			d.Reasoning += inline
			rep.emit(d)
			for _, tc := range ch.Delta.ToolCalls {
				key := strconv.FormatInt(tc.Index, 10)
				c := rep.calls.lookup(key)
				fresh := c == nil || tc.ID != "" && idAt[tc.Index] != "" && tc.ID != idAt[tc.Index]
				switch {
				case c == nil:
					c = rep.calls.get(key)
				case fresh:
					c = rep.calls.start(key)
				}
				if fresh {
					if err := rep.budget.spend(callCost); err != nil {
						return nil, err
					}
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
	// What the splitter held back while it could still be a <think> tag.
	content, reasoning := think.flush()
	rep.emit(Delta{Content: content, Reasoning: reasoning})
	if err := stream.Err(); err != nil {
		var se *streamError
		if errors.As(err, &se) {
			return nil, classifyStreamError(se.data)
		}
		// A connection lost after the finish chunk loses only the usage
		// chunk and [DONE]: the reply itself is whole, so keep it.
		if !sawFinish || ctx.Err() != nil {
			return nil, classifyFailure(ctx, callCtx, err, true)
		}
	}
	if !sawFinish {
		return nil, unfinished(ctx, callCtx, "a finish_reason")
	}
	return rep.finish(resp)
}
