package provider

import (
	"context"
	"math"
	"net/http"
	"os"
	"testing"
)

// TestLlamaCppTimingsGiveTheCacheSplitAndTheSpeed replays a stream that
// the real llama-server (build 10470) sent for a second identical request:
// its timings say 28 of the 29 prompt tokens came from the slot's cache,
// 1 was evaluated, and the 9 reply tokens came at 1304 per second.
func TestLlamaCppTimingsGiveTheCacheSplitAndTheSpeed(t *testing.T) {
	wire, err := os.ReadFile("testdata/llamacpp_timings.sse")
	if err != nil {
		t.Fatal(err)
	}
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(wire)
	})
	resp, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).Complete(context.Background(), sampleRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	u := resp.Usage
	if u.PromptTokens != 29 || u.CachedPromptTokens != 28 || u.EvaluatedPromptTokens != 1 || !u.PromptCacheReported || u.CompletionTokens != 9 {
		t.Fatalf("usage = %+v, want 29 prompt tokens: 28 cached, 1 evaluated; 9 completion", u)
	}
	if math.Abs(u.TokensPerSecond-1303.99) > 0.01 {
		t.Fatalf("tokens per second = %v, want the server's 1303.99", u.TokensPerSecond)
	}
}

// TestCacheSplitFromEachWire: the chat usage object alone (OpenAI, vLLM),
// timings alone (an older llama-server without prompt_tokens_details),
// and neither, which reports nothing rather than "nothing cached".
func TestCacheSplitFromEachWire(t *testing.T) {
	for _, c := range []struct {
		name  string
		usage string
		want  Usage
	}{
		{"openai cached_tokens", `"usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920}}`,
			Usage{PromptTokens: 2006, CompletionTokens: 300, TotalTokens: 2306, CachedPromptTokens: 1920, EvaluatedPromptTokens: 86, PromptCacheReported: true}},
		{"timings only", `"timings":{"cache_n":512,"prompt_n":40,"predicted_n":12,"predicted_ms":300,"predicted_per_second":40}`,
			Usage{PromptTokens: 552, CompletionTokens: 12, TotalTokens: 564, CachedPromptTokens: 512, EvaluatedPromptTokens: 40, PromptCacheReported: true, TokensPerSecond: 40}},
		{"no cache report", `"usage":{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105}`,
			Usage{PromptTokens: 100, CompletionTokens: 5, TotalTokens: 105}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, sseHandler([]frame{{Data: chatChunk(`{"content":"hi"}`, "")}, {Data: chatChunk(`{}`, "stop")},
				{Data: `{"id":"x","object":"chat.completion.chunk","model":"m","choices":[],` + c.usage + `}`}, {Data: `[DONE]`}}))
			resp, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).Complete(context.Background(), sampleRequest(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != c.want {
				t.Fatalf("usage = %+v\n want %+v", resp.Usage, c.want)
			}
		})
	}
}
