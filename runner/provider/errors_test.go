package provider

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
)

func TestClassifyHTTP(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		cat        Category
		tokens     int
		retryAfter float64
		msg        string
	}{
		{"openai context_length_exceeded", 400, nil,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			CategoryContextLength, 130532, 0, "maximum context length is 128000"},
		{"openai responses context window", 400, nil,
			`{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`,
			CategoryContextLength, 0, 0, "exceeds the context window"},
		{"llama.cpp exceed_context_size_error", 400, nil,
			`{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9012,"n_ctx":8192}}`,
			CategoryContextLength, 9012, 0, "exceeds the available context size"},
		{"llama.cpp newer message", 400, nil,
			`{"error":{"code":400,"message":"request (8889 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":8889,"n_ctx":4096}}`,
			CategoryContextLength, 8889, 0, "request (8889 tokens)"},
		{"llama.cpp old prompt too long", 400, nil,
			`{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"invalid_request_error"}}`,
			CategoryContextLength, 0, 0, "context size"},
		{"llama.cpp older input too large", 500, nil,
			`{"error":{"code":500,"message":"input is larger than the max context size. skipping","type":"server_error"}}`,
			CategoryContextLength, 0, 0, "max context size"},
		{"ollama input length", 400, nil,
			`{"error":{"message":"the input length exceeds the context length","type":"invalid_request_error","param":null,"code":null}}`,
			CategoryContextLength, 0, 0, "exceeds the context length"},
		{"ollama native nested llama.cpp body", 400, nil,
			`{"error":"{\"error\":{\"code\":400,\"message\":\"request (8889 tokens) exceeds the available context size (4096 tokens), try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":8889,\"n_ctx\":4096}}"}`,
			CategoryContextLength, 8889, 0, "request (8889 tokens)"},
		{"vllm requested", 400, nil,
			`{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`,
			CategoryContextLength, 4096, 0, "you requested 5120"},
		{"vllm input tokens", 400, nil,
			`{"object":"error","message":"This model's maximum context length is 2048 tokens. However, your request has 2050 input tokens. Please reduce the length of the input messages.","type":"BadRequestError","param":null,"code":400}`,
			CategoryContextLength, 2050, 0, "2050 input tokens"},
		{"lm studio", 400, nil,
			`{"error":"Trying to keep the first 5210 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}`,
			CategoryContextLength, 0, 0, "context length of only 4096"},
		{"anthropic prompt too long", 400, nil,
			`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"},"request_id":"req_011"}`,
			CategoryContextLength, 208310, 0, "prompt is too long"},
		{"429 seconds", 429, http.Header{"Retry-After": {"7"}},
			`{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 1500.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`,
			CategoryRateLimit, 0, 7, "Rate limit reached"},
		{"429 http date", 429, http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}},
			`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			CategoryRateLimit, 0, 90, "per-minute rate limit"},
		{"429 retry-after-ms", 429, http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, `{}`,
			CategoryRateLimit, 0, 1.5, "Too Many Requests"},
		{"401", 401, nil,
			`{"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			CategoryAuth, 0, 0, "Incorrect API key"},
		{"llama.cpp 401", 401, nil, `{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`,
			CategoryAuth, 0, 0, "Invalid API Key"},
		{"403", 403, nil, `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`,
			CategoryAuth, 0, 0, "permission"},
		{"500", 500, nil, `{"error":{"code":500,"message":"failed to decode","type":"server_error"}}`,
			CategoryServer, 0, 0, "failed to decode"},
		{"502 html from a proxy", 502, nil, "<html><body><h1>502 Bad Gateway</h1></body></html>",
			CategoryServer, 0, 0, "502 Bad Gateway"},
		{"503 llama.cpp loading", 503, http.Header{"Retry-After": {"3"}}, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`,
			CategoryServer, 0, 3, "Loading model"},
		{"529 anthropic overloaded", 529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			CategoryServer, 0, 0, "Overloaded"},
		{"504", 504, nil, ``, CategoryTimeout, 0, 0, "Gateway Timeout"},
		{"404 ollama model", 404, nil, `{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`,
			CategoryBadRequest, 0, 0, "not found"},
		{"400 other", 400, nil, `{"error":{"message":"Invalid 'tools[0].function.name': string does not match pattern.","type":"invalid_request_error","param":"tools[0].function.name","code":"invalid_value"}}`,
			CategoryBadRequest, 0, 0, "does not match pattern"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := classifyHTTPAt(tc.status, tc.header, []byte(tc.body), now)
			if e.Category != tc.cat {
				t.Errorf("category = %s, want %s", e.Category, tc.cat)
			}
			if e.StatusCode != tc.status {
				t.Errorf("status = %d", e.StatusCode)
			}
			if e.PromptTokens != tc.tokens {
				t.Errorf("prompt tokens = %d, want %d", e.PromptTokens, tc.tokens)
			}
			if e.RetryAfterSeconds != tc.retryAfter {
				t.Errorf("retry after = %v, want %v", e.RetryAfterSeconds, tc.retryAfter)
			}
			if !strings.Contains(e.Error(), tc.msg) {
				t.Errorf("error %q lacks %q", e.Error(), tc.msg)
			}
			if e.Body != tc.body {
				t.Errorf("body not kept: %q", e.Body)
			}
		})
	}
}

func TestClassifyHTTPBoundsBody(t *testing.T) {
	body := strings.Repeat("é", MaxBodyBytes) // 2 bytes per rune
	e := ClassifyHTTP(500, nil, []byte(body))
	if len(e.Body) > MaxBodyBytes || !strings.HasPrefix(body, e.Body) || len(e.Body) < MaxBodyBytes-1 {
		t.Errorf("body len %d", len(e.Body))
	}
	if len(e.Error()) > 1000 {
		t.Errorf("error message unbounded: %d bytes", len(e.Error()))
	}
}

// providerKind builds one provider against a fake and knows its failure
// fixtures.
type providerKind struct {
	name         string
	make         func(base, key string, timeout time.Duration) Provider
	base         func(url string) string
	contextBody  string
	contextToks  int
	cutFrames    []frame // ends mid tool call, no terminal event
	badArgFrames []frame // a complete reply whose tool arguments are not JSON
	errorFrames  []frame // a server error reported inside the stream
	errorCat     Category
}

func providerKinds() []providerKind {
	chatCut := chatToolCallStream()[:8]
	respCut := responsesToolCallStream()[:10]
	anthCut := anthropicToolUseStream()[:15]
	return []providerKind{
		{
			name: "openai-chat",
			make: func(base, key string, d time.Duration) Provider {
				return NewOpenAIChat(Config{BaseURL: base, APIKey: key, RequestTimeout: d})
			},
			base:        func(u string) string { return u + "/v1" },
			contextBody: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9012,"n_ctx":8192}}`,
			contextToks: 9012,
			cutFrames:   chatCut,
			badArgFrames: []frame{
				{Data: chatChunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\": main.go}"}}]}`, "")},
				{Data: chatChunk(`{}`, "tool_calls")},
				{Data: `[DONE]`},
			},
			errorFrames: []frame{
				{Data: chatChunk(`{"content":"Hel"}`, "")},
				{Data: `{"error":{"code":500,"message":"slot unavailable","type":"server_error"}}`},
			},
			errorCat: CategoryServer,
		},
		{
			name: "openai-responses",
			make: func(base, key string, d time.Duration) Provider {
				return NewOpenAIResponses(Config{BaseURL: base, APIKey: key, RequestTimeout: d})
			},
			base:        func(u string) string { return u + "/v1" },
			contextBody: `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`,
			contextToks: 130532,
			cutFrames:   respCut,
			badArgFrames: []frame{
				typedEvent("response.output_item.added", `"output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"read_file","arguments":""}`),
				typedEvent("response.function_call_arguments.delta", `"item_id":"fc_1","output_index":0,"delta":"{\"path\": main"`),
				typedEvent("response.function_call_arguments.done", `"item_id":"fc_1","output_index":0,"arguments":"{\"path\": main"`),
				typedEvent("response.completed", `"response":{"id":"r","status":"completed","model":"m","output":[],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`),
			},
			errorFrames: []frame{
				typedEvent("response.output_text.delta", `"item_id":"m","output_index":0,"delta":"Hel"`),
				typedEvent("error", `"code":"rate_limit_exceeded","message":"Rate limit reached","param":null,"sequence_number":3`),
			},
			errorCat: CategoryRateLimit,
		},
		{
			name: "anthropic",
			make: func(base, key string, d time.Duration) Provider {
				return NewAnthropic(Config{BaseURL: base, APIKey: key, Model: "claude-sonnet-4-5", RequestTimeout: d})
			},
			base:        func(u string) string { return u },
			contextBody: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`,
			contextToks: 208310,
			cutFrames:   anthCut,
			badArgFrames: []frame{
				typedEvent("message_start", `"message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":5,"output_tokens":1}}`),
				typedEvent("content_block_start", `"index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}`),
				typedEvent("content_block_delta", `"index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": main.go"}`),
				typedEvent("content_block_stop", `"index":0`),
				typedEvent("message_delta", `"delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}`),
				typedEvent("message_stop", ""),
			},
			errorFrames: []frame{
				typedEvent("message_start", `"message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":5,"output_tokens":1}}`),
				typedEvent("error", `"error":{"type":"overloaded_error","message":"Overloaded"}`),
			},
			errorCat: CategoryServer,
		},
	}
}

func TestProviderFailuresAreClassified(t *testing.T) {
	for _, k := range providerKinds() {
		t.Run(k.name, func(t *testing.T) {
			cases := []struct {
				name    string
				handler func(http.ResponseWriter, *http.Request)
				timeout time.Duration // RequestTimeout
				ctxWait time.Duration // caller deadline
				cat     Category
				check   func(t *testing.T, e *Error)
			}{
				{name: "500", handler: statusHandler(500, nil, `{"error":{"code":500,"message":"CUDA error: out of memory","type":"server_error"}}`), cat: CategoryServer,
					check: func(t *testing.T, e *Error) {
						if e.StatusCode != 500 || !strings.Contains(e.Body, "out of memory") {
							t.Errorf("status %d body %q", e.StatusCode, e.Body)
						}
					}},
				{name: "429 Retry-After", handler: statusHandler(429, http.Header{"Retry-After": {"12"}}, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`), cat: CategoryRateLimit,
					check: func(t *testing.T, e *Error) {
						if e.RetryAfterSeconds != 12 {
							t.Errorf("retry after = %v", e.RetryAfterSeconds)
						}
					}},
				{name: "401", handler: statusHandler(401, nil, `{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`), cat: CategoryAuth},
				{name: "context length", handler: statusHandler(400, nil, k.contextBody), cat: CategoryContextLength,
					check: func(t *testing.T, e *Error) {
						if e.PromptTokens != k.contextToks {
							t.Errorf("prompt tokens = %d, want %d", e.PromptTokens, k.contextToks)
						}
					}},
				{name: "huge error body", handler: statusHandler(500, nil, strings.Repeat("x", 1<<20)), cat: CategoryServer,
					check: func(t *testing.T, e *Error) {
						if len(e.Body) > MaxBodyBytes {
							t.Errorf("body %d bytes", len(e.Body))
						}
					}},
				{name: "stream ends mid tool call", handler: sseHandler(k.cutFrames), cat: CategoryCutStream},
				{name: "connection dropped mid tool call", handler: abortAfter(k.cutFrames), cat: CategoryCutStream},
				{name: "invalid tool arguments", handler: sseHandler(k.badArgFrames), cat: CategoryMalformed,
					check: func(t *testing.T, e *Error) {
						if !strings.Contains(e.Body, "main") || !strings.Contains(e.Error(), "not valid JSON") {
							t.Errorf("error %q, body %q", e.Error(), e.Body)
						}
					}},
				{name: "error inside the stream", handler: sseHandler(k.errorFrames), cat: k.errorCat},
				{name: "hanging server past the deadline", handler: hangHandler, ctxWait: 200 * time.Millisecond, cat: CategoryTimeout},
				{name: "silent server past RequestTimeout", handler: hangHandler, timeout: 200 * time.Millisecond, cat: CategoryTimeout},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					f := newFake(t, tc.handler)
					p := k.make(k.base(f.URL), "k", tc.timeout)
					ctx := context.Background()
					if tc.ctxWait > 0 {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, tc.ctxWait)
						defer cancel()
					}
					start := time.Now()
					resp, err := p.Complete(ctx, sampleRequest(), nil)
					if err == nil {
						t.Fatalf("no error; resp = %+v", resp)
					}
					e := AsError(err)
					if e == nil {
						t.Fatalf("not a *provider.Error: %T %v", err, err)
					}
					if e.Category != tc.cat {
						t.Fatalf("category = %s, want %s (%v)", e.Category, tc.cat, err)
					}
					if tc.check != nil {
						tc.check(t, e)
					}
					if time.Since(start) > 5*time.Second {
						t.Errorf("took %v", time.Since(start))
					}
				})
			}
		})
	}
}

func TestProviderUnreachableIsNetwork(t *testing.T) {
	url := fakellm.RefusedURL(t)
	for _, k := range providerKinds() {
		_, err := k.make(strings.TrimSuffix(url, "/v1"), "", 0).Complete(context.Background(), sampleRequest(), nil)
		if e := AsError(err); e == nil || e.Category != CategoryNetwork {
			t.Errorf("%s: err = %v", k.name, err)
		}
	}
}

func TestProviderCallerCancelIsNotRetryable(t *testing.T) {
	for _, k := range providerKinds() {
		f := newFake(t, hangHandler)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := k.make(k.base(f.URL), "", 0).Complete(ctx, sampleRequest(), nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", k.name, err)
		}
		if e := AsError(err); e != nil && e.Retryable() {
			t.Errorf("%s: a canceled call is retryable: %v", k.name, e)
		}
	}
}

func TestSlowButSteadyStreamOutlivesRequestTimeout(t *testing.T) {
	frames := chatToolCallStream()
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, fr := range frames {
			time.Sleep(40 * time.Millisecond)
			w.Write([]byte("data: " + fr.Data + "\n\n"))
			w.(http.Flusher).Flush()
		}
	})
	// The whole stream takes ~560ms; no single gap reaches 150ms.
	p := NewOpenAIChat(Config{BaseURL: f.URL + "/v1", RequestTimeout: 150 * time.Millisecond})
	if _, err := p.Complete(context.Background(), sampleRequest(), nil); err != nil {
		t.Fatalf("steady stream cut off: %v", err)
	}
}
