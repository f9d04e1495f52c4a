package provider

import (
	"context"
	"reflect"
	"testing"
)

func TestOpenAIResponsesAssemblesStreamedReply(t *testing.T) {
	f := newFake(t, sseHandler(responsesToolCallStream()))
	p := NewOpenAIResponses(Config{BaseURL: f.URL + "/v1"})
	var c collect
	resp, err := p.Complete(context.Background(), sampleRequest(), c.on)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	checkStreamed(t, resp, Response{
		Content:      "Reading now.",
		Reasoning:    "Need to read it.",
		ToolCalls:    []ToolCall{{ID: "call_xyz", Name: "read_file", Arguments: `{"path": "main.go"}`}},
		FinishReason: "tool_calls",
		Usage:        Usage{PromptTokens: 900, CompletionTokens: 37, TotalTokens: 937, CachedPromptTokens: 512, EvaluatedPromptTokens: 388, PromptCacheReported: true},
		Model:        "gpt-oss-20b",
	}, &c, []string{"Reading ", "now."}, []string{"Need to ", "read it."})

	r := f.last(t)
	if r.Path != "/v1/responses" {
		t.Errorf("path = %s", r.Path)
	}
	if r.Header.Get("Authorization") != "" {
		t.Errorf("Authorization sent without a key")
	}
	body := r.json(t)
	if body["store"] != false || body["stream"] != true || body["model"] != "qwen3-8b" {
		t.Errorf("store/stream/model = %v/%v/%v", body["store"], body["stream"], body["model"])
	}
	if body["instructions"] != "You are the coder." {
		t.Errorf("instructions = %v", body["instructions"])
	}
	if body["max_output_tokens"] != float64(1024) || body["temperature"] != 0.2 {
		t.Errorf("max_output_tokens %v temperature %v", body["max_output_tokens"], body["temperature"])
	}
	input := body["input"].([]any)
	var kinds []string
	for _, it := range input {
		m := it.(map[string]any)
		kinds = append(kinds, m["type"].(string))
	}
	wantKinds := []string{"message", "message", "function_call", "function_call", "function_call_output", "function_call_output"}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Fatalf("input item types = %v\n%s", kinds, r.Body)
	}
	user := input[0].(map[string]any)
	if user["role"] != "user" || user["content"] != "Fix the bug in main.go" {
		t.Errorf("user item = %v", user)
	}
	asst := input[1].(map[string]any)
	parts := asst["content"].([]any)
	if asst["role"] != "assistant" || parts[0].(map[string]any)["type"] != "output_text" || parts[0].(map[string]any)["text"] != "Reading the files." {
		t.Errorf("assistant item = %v", asst)
	}
	fc := input[2].(map[string]any)
	if fc["call_id"] != "call_1" || fc["name"] != "read_file" || fc["arguments"] != `{"path":"main.go"}` {
		t.Errorf("function_call item = %v", fc)
	}
	out := input[5].(map[string]any)
	if out["call_id"] != "call_2" || out["output"] != "module x" {
		t.Errorf("function_call_output item = %v", out)
	}
	tool := body["tools"].([]any)[0].(map[string]any)
	if tool["type"] != "function" || tool["name"] != "read_file" || tool["strict"] != false || tool["parameters"] == nil {
		t.Errorf("tool = %v", tool)
	}
}

func TestOpenAIResponsesSendsReasoningOnlyWhenAsked(t *testing.T) {
	f := newFake(t, sseHandler(responsesToolCallStream()))
	p := NewOpenAIResponses(Config{BaseURL: f.URL + "/v1", APIKey: "sk-test"})
	req := sampleRequest()
	req.IncludeReasoning = true
	if _, err := p.Complete(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	r := f.last(t)
	if r.Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
	}
	item := r.json(t)["input"].([]any)[1].(map[string]any)
	content, _ := item["content"].([]any)
	if item["type"] != "reasoning" || len(content) != 1 || content[0].(map[string]any)["text"] != "I should look first." {
		t.Errorf("reasoning item = %v", item)
	}
}

func TestOpenAIResponsesIncompleteIsALengthFinish(t *testing.T) {
	f := newFake(t, sseHandler([]frame{
		typedEvent("response.created", `"sequence_number":0,"response":{"id":"resp_2","status":"in_progress","output":[]}`),
		typedEvent("response.incomplete", `"sequence_number":1,"response":{"id":"resp_2","status":"incomplete","model":"m","incomplete_details":{"reason":"max_output_tokens"},"output":[],"usage":{"input_tokens":10,"output_tokens":64,"total_tokens":74}}`),
	}))
	resp, err := NewOpenAIResponses(Config{BaseURL: f.URL + "/v1"}).Complete(context.Background(), sampleRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != "length" || resp.Content != "" || resp.Usage.CompletionTokens != 64 {
		t.Errorf("resp = %+v", resp)
	}
}
