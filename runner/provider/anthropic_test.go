package provider

import (
	"context"
	"testing"
)

func TestAnthropicAssemblesStreamedReply(t *testing.T) {
	f := newFake(t, sseHandler(anthropicToolUseStream()))
	p := NewAnthropic(Config{BaseURL: f.URL, APIKey: "sk-ant-test"})
	var c collect
	req := sampleRequest()
	req.Model = "claude-sonnet-4-5"
	resp, err := p.Complete(context.Background(), req, c.on)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	checkStreamed(t, resp, Response{
		Content:      "Let me look.",
		Reasoning:    "I should read main.go.",
		ToolCalls:    []ToolCall{{ID: "toolu_01A", Name: "read_file", Arguments: `{"path": "main.go"}`}},
		FinishReason: "tool_calls",
		// prompt = input 120 + cache read 2000 + cache creation 30
		Usage: Usage{PromptTokens: 2150, CompletionTokens: 58, TotalTokens: 2208, CachedPromptTokens: 2000, EvaluatedPromptTokens: 150, PromptCacheReported: true},
		Model: "claude-sonnet-4-5",
	}, &c, []string{"Let me ", "look."}, []string{"I should ", "read main.go."})

	r := f.last(t)
	if r.Path != "/v1/messages" {
		t.Errorf("path = %s", r.Path)
	}
	if r.Header.Get("X-Api-Key") != "sk-ant-test" || r.Header.Get("Anthropic-Version") == "" {
		t.Errorf("headers: x-api-key %q anthropic-version %q", r.Header.Get("X-Api-Key"), r.Header.Get("Anthropic-Version"))
	}
	if r.Header.Get("Authorization") != "" {
		t.Errorf("Authorization sent: %q", r.Header.Get("Authorization"))
	}
	body := r.json(t)
	if body["model"] != "claude-sonnet-4-5" || body["stream"] != true || body["max_tokens"] != float64(1024) || body["temperature"] != 0.2 {
		t.Errorf("model %v stream %v max_tokens %v temperature %v", body["model"], body["stream"], body["max_tokens"], body["temperature"])
	}
	sys := body["system"].([]any)
	if len(sys) != 1 || sys[0].(map[string]any)["text"] != "You are the coder." {
		t.Errorf("system = %v", sys)
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages = %d\n%s", len(msgs), r.Body)
	}
	asst := msgs[1].(map[string]any)
	blocks := asst["content"].([]any)
	if asst["role"] != "assistant" || len(blocks) != 3 {
		t.Fatalf("assistant = %v", asst)
	}
	for _, b := range blocks {
		if b.(map[string]any)["type"] == "thinking" {
			t.Errorf("thinking sent back: %v", b)
		}
	}
	use := blocks[1].(map[string]any)
	if use["type"] != "tool_use" || use["id"] != "call_1" || use["name"] != "read_file" || use["input"].(map[string]any)["path"] != "main.go" {
		t.Errorf("tool_use = %v", use)
	}
	results := msgs[2].(map[string]any)
	rb := results["content"].([]any)
	if results["role"] != "user" || len(rb) != 2 {
		t.Fatalf("tool results not merged into one user message: %v", results)
	}
	r0, r1 := rb[0].(map[string]any), rb[1].(map[string]any)
	if r0["type"] != "tool_result" || r0["tool_use_id"] != "call_1" || r1["tool_use_id"] != "call_2" {
		t.Errorf("tool results = %v", rb)
	}
	tool := body["tools"].([]any)[0].(map[string]any)
	schema := tool["input_schema"].(map[string]any)
	if tool["name"] != "read_file" || schema["type"] != "object" || schema["properties"] == nil || schema["required"].([]any)[0] != "path" {
		t.Errorf("tool = %v", tool)
	}
}

func TestAnthropicDefaultsAndNoKey(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	f := newFake(t, sseHandler(anthropicToolUseStream()))
	req := sampleRequest()
	req.MaxTokens = 0
	req.Temperature = nil
	req.Messages[4].Content = "" // a tool that printed nothing
	req.Messages = append(req.Messages, Message{Role: "user", Content: "Continue."})
	// A /v1 suffix, as users copy it from OpenAI-style configs, is accepted.
	if _, err := NewAnthropic(Config{BaseURL: f.URL + "/v1", Model: "claude-haiku-4-5"}).Complete(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	r := f.last(t)
	if r.Path != "/v1/messages" {
		t.Errorf("path = %s", r.Path)
	}
	if k := r.Header.Get("X-Api-Key"); k != "" {
		t.Errorf("x-api-key sent without a configured key: %q", k)
	}
	body := r.json(t)
	if body["max_tokens"] != float64(4096) {
		t.Errorf("max_tokens = %v", body["max_tokens"])
	}
	if _, ok := body["temperature"]; ok {
		t.Errorf("temperature sent when unset")
	}
	if body["model"] != "qwen3-8b" {
		t.Errorf("model = %v", body["model"])
	}
	msgs := body["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
	if len(last) != 3 || last[2].(map[string]any)["type"] != "text" {
		t.Fatalf("user text after tool results should join their message: %v", last)
	}
	if empty := last[1].(map[string]any); empty["type"] != "tool_result" || empty["content"] != nil {
		t.Errorf("empty tool result must carry no content block: %v", empty)
	}
}

func TestAnthropicStopReasons(t *testing.T) {
	for stop, want := range map[string]string{"end_turn": "stop", "max_tokens": "length", "tool_use": "tool_calls", "stop_sequence": "stop", "refusal": "content_filter"} {
		if got := anthropicFinish(stop); got != want {
			t.Errorf("%s -> %s, want %s", stop, got, want)
		}
	}
}
