package provider

// Integration tests against a real llama.cpp llama-server (internal/
// llamatest): the wire the fakes imitate, from the server itself.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/llamatest"
)

func llamaCall(t *testing.T, p Provider, req Request) (*Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return p.Complete(ctx, req, nil)
}

// TestLlamaServerProbeAndStream: the probe reads the model's name and the
// window the server was started with (-c, from /props, not the model's
// 32768 training context); a streamed reply arrives whole with its usage.
func TestLlamaServerProbeAndStream(t *testing.T) {
	srv := llamatest.Start(t, llamatest.Steered, 4096)
	p := NewOpenAIChat(Config{BaseURL: srv.BaseURL(), RequestTimeout: 30 * time.Second})
	models, err := p.(Prober).Probe(context.Background())
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if len(models) != 1 || !strings.HasSuffix(models[0].ID, llamatest.Steered) || models[0].ContextWindow != 4096 {
		t.Fatalf("models = %+v, want %s with the server's window 4096", models, llamatest.Steered)
	}
	var deltas strings.Builder
	resp, err := p.Complete(context.Background(), Request{Model: models[0].ID, MaxTokens: 64,
		Messages: []Message{{Role: "system", Content: "You are terse."}, {Role: "user", Content: "Say hello"}}},
		func(d Delta) { deltas.WriteString(d.Content) })
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	if resp.Content == "" || resp.Content != deltas.String() || resp.FinishReason == "" {
		t.Errorf("reply %q (streamed %q), finish %q", resp.Content, deltas.String(), resp.FinishReason)
	}
	if resp.Usage.PromptTokens <= 0 || resp.Usage.CompletionTokens <= 0 {
		t.Errorf("usage %+v: the server reports it with stream_options.include_usage", resp.Usage)
	}
}

// TestLlamaServerOverflowIsAContextRejection: a prompt longer than -c 512
// gets llama.cpp's real HTTP 400 exceed_context_size_error, classified as
// a context-length rejection with the prompt size it reports.
func TestLlamaServerOverflowIsAContextRejection(t *testing.T) {
	srv := llamatest.Start(t, llamatest.Steered, 512)
	p := NewOpenAIChat(Config{BaseURL: srv.BaseURL(), RequestTimeout: 30 * time.Second})
	_, err := llamaCall(t, p, Request{MaxTokens: 8, Messages: []Message{{Role: "user", Content: strings.Repeat("hello world ", 1024)}}})
	pe := AsError(err)
	if pe == nil || pe.Category != CategoryContextLength || pe.StatusCode != 400 || pe.PromptTokens <= 512 {
		t.Fatalf("overflow = %#v (%v), want context_length with the reported prompt size", pe, err)
	}
	if !strings.Contains(pe.Body, "exceed_context_size_error") {
		t.Errorf("body %q", pe.Body)
	}
}

// TestLlamaServerStreamsToolCalls: with --jinja the tool-call model's calls
// arrive as streamed tool_calls deltas that assemble into calls of the
// offered tool with JSON-object arguments. A proxy adds tool_choice
// "required" and parallel_tool_calls false (which a run never sends) so
// that the random model calls one tool every time instead of one reply in
// six; a reply the token limit cuts inside its call (arguments cut short,
// or the call not yet parsed and returned as text) is asked again.
func TestLlamaServerStreamsToolCalls(t *testing.T) {
	srv := llamatest.Start(t, llamatest.ToolCall, 4096)
	base := llamatest.Proxy(t, srv.URL, func(b map[string]any) {
		b["tool_choice"], b["parallel_tool_calls"], b["temperature"] = "required", false, 0.2
	}) + "/v1"
	p := NewOpenAIChat(Config{BaseURL: base, RequestTimeout: 60 * time.Second})
	tools := []ToolSpec{{Name: "get_weather", Description: "Get the weather for a city",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}
	var streamed strings.Builder
	for try := range 6 {
		resp, err := p.Complete(context.Background(), Request{MaxTokens: 100, Tools: tools, Messages: []Message{{Role: "user", Content: "Weather in Paris?"}}},
			func(d Delta) { streamed.WriteString(d.Content) })
		if pe := AsError(err); pe != nil && pe.Category == CategoryMalformed {
			continue // the token limit cut a call's arguments short
		}
		if err != nil {
			t.Fatalf("try %d: %v\n%s", try, err, srv.Log())
		}
		if len(resp.ToolCalls) == 0 && resp.FinishReason == "length" {
			// Cut before the server could parse a call out of what the
			// model wrote, which it then returns as text.
			continue
		}
		if len(resp.ToolCalls) == 0 {
			t.Fatalf("try %d: tool_choice required, yet no call: %+v", try, resp)
		}
		for _, c := range resp.ToolCalls {
			var args map[string]any
			if c.Name != "get_weather" || c.ID == "" || json.Unmarshal([]byte(c.Arguments), &args) != nil {
				t.Errorf("call %+v", c)
			}
		}
		if resp.Usage.CompletionTokens == 0 {
			t.Errorf("usage %+v", resp.Usage)
		}
		return
	}
	t.Fatal("six replies were cut inside their tool calls")
}
