package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// sampleRequest is a coder turn after two tool calls and their results.
func sampleRequest() Request {
	temp := 0.2
	return Request{
		Model: "qwen3-8b",
		Messages: []Message{
			{Role: "system", Content: "You are the coder."},
			{Role: "user", Content: "Fix the bug in main.go"},
			{Role: "assistant", Content: "Reading the files.", Reasoning: "I should look first.", ToolCalls: []ToolCall{
				{ID: "call_1", Name: "read_file", Arguments: `{"path":"main.go"}`},
				{ID: "call_2", Name: "read_file", Arguments: `{"path":"go.mod"}`},
			}},
			{Role: "tool", ToolCallID: "call_1", ToolName: "read_file", Content: "package main"},
			{Role: "tool", ToolCallID: "call_2", ToolName: "read_file", Content: "module x"},
		},
		Tools: []ToolSpec{{
			Name:        "read_file",
			Description: "Read a file",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		}},
		Temperature: &temp,
		MaxTokens:   1024,
	}
}

// collect records onDelta calls.
type collect struct{ deltas []Delta }

func (c *collect) on(d Delta) { c.deltas = append(c.deltas, d) }

// content and reasoning are the non-empty pieces of each, in order.
func (c *collect) content() []string   { return c.pieces(func(d Delta) string { return d.Content }) }
func (c *collect) reasoning() []string { return c.pieces(func(d Delta) string { return d.Reasoning }) }

func (c *collect) pieces(field func(Delta) string) []string {
	var out []string
	for _, d := range c.deltas {
		if s := field(d); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// checkStreamed fails t unless resp is want and its content and reasoning
// reached onDelta (recorded by c) in the pieces given: what every wire
// format's fake stream must come out as.
func checkStreamed(t *testing.T, resp *Response, want Response, c *collect, content, reasoning []string) {
	t.Helper()
	if !reflect.DeepEqual(*resp, want) {
		t.Errorf("reply:\n got %+v\nwant %+v", *resp, want)
	}
	if got := c.content(); !reflect.DeepEqual(got, content) {
		t.Errorf("content deltas = %q, want %q", got, content)
	}
	if got := c.reasoning(); !reflect.DeepEqual(got, reasoning) {
		t.Errorf("reasoning deltas = %q, want %q", got, reasoning)
	}
}

func TestOpenAIChatAssemblesStreamedReply(t *testing.T) {
	f := newFake(t, sseHandler(chatToolCallStream()))
	p := NewOpenAIChat(Config{BaseURL: f.URL + "/v1", Model: "default-model"})
	var c collect
	resp, err := p.Complete(context.Background(), sampleRequest(), c.on)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	checkStreamed(t, resp, Response{
		Content:   "Let me check.",
		Reasoning: "The user wants the file read.",
		ToolCalls: []ToolCall{
			{ID: "call_abc", Name: "read_file", Arguments: `{"path": "main.go"}`},
			{ID: "call_def", Name: "list_dir", Arguments: `{}`},
		},
		FinishReason: "tool_calls",
		Usage:        Usage{PromptTokens: 1234, CompletionTokens: 42, TotalTokens: 1276, CachedPromptTokens: 1024, EvaluatedPromptTokens: 210, PromptCacheReported: true},
		Model:        "qwen3-8b-q4_k_m.gguf",
	}, &c, []string{"Let me ", "check."}, []string{"The user wants ", "the file read."})

	r := f.last(t)
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path = %s", r.Path)
	}
	if h := r.Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization sent without a key: %q", h)
	}
	body := r.json(t)
	if body["model"] != "qwen3-8b" || body["stream"] != true {
		t.Errorf("model/stream = %v/%v", body["model"], body["stream"])
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options = %v", body["stream_options"])
	}
	if body["max_tokens"] != float64(1024) || body["max_completion_tokens"] != nil {
		t.Errorf("max_tokens = %v, max_completion_tokens = %v", body["max_tokens"], body["max_completion_tokens"])
	}
	if body["temperature"] != 0.2 {
		t.Errorf("temperature = %v", body["temperature"])
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 5 {
		t.Fatalf("messages = %d: %s", len(msgs), r.Body)
	}
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,tool" {
		t.Errorf("roles = %v", roles)
	}
	asst := msgs[2].(map[string]any)
	if _, ok := asst["reasoning_content"]; ok {
		t.Errorf("reasoning sent without IncludeReasoning: %v", asst)
	}
	if asst["content"] != "Reading the files." {
		t.Errorf("assistant content = %v", asst["content"])
	}
	tcs := asst["tool_calls"].([]any)
	tc0 := tcs[0].(map[string]any)
	fn := tc0["function"].(map[string]any)
	if len(tcs) != 2 || tc0["id"] != "call_1" || tc0["type"] != "function" || fn["name"] != "read_file" || fn["arguments"] != `{"path":"main.go"}` {
		t.Errorf("assistant tool_calls = %v", tcs)
	}
	if tm := msgs[4].(map[string]any); tm["tool_call_id"] != "call_2" || tm["content"] != "module x" {
		t.Errorf("tool message = %v", tm)
	}
	tools := body["tools"].([]any)
	tool := tools[0].(map[string]any)
	tfn := tool["function"].(map[string]any)
	if tool["type"] != "function" || tfn["name"] != "read_file" || tfn["description"] != "Read a file" {
		t.Errorf("tool = %v", tool)
	}
	if params := tfn["parameters"].(map[string]any); params["type"] != "object" || params["required"].([]any)[0] != "path" {
		t.Errorf("tool parameters = %v", params)
	}
}

func TestOpenAIChatSendsReasoningOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		name, field, wantField string
	}{
		{"default field", "", "reasoning_content"},
		{"ollama field", "reasoning", "reasoning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, sseHandler(chatToolCallStream()))
			p := NewOpenAIChat(Config{BaseURL: f.URL + "/v1", APIKey: "sk-local-123", ReasoningField: tc.field})
			req := sampleRequest()
			req.IncludeReasoning = true
			if _, err := p.Complete(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			r := f.last(t)
			if h := r.Header.Get("Authorization"); h != "Bearer sk-local-123" {
				t.Errorf("Authorization = %q", h)
			}
			asst := r.json(t)["messages"].([]any)[2].(map[string]any)
			if asst[tc.wantField] != "I should look first." {
				t.Errorf("assistant %s = %v (message %v)", tc.wantField, asst[tc.wantField], asst)
			}
			if user := r.json(t)["messages"].([]any)[1].(map[string]any); len(user) != 2 {
				t.Errorf("user message carries extra fields: %v", user)
			}
		})
	}
}

func TestOpenAIChatReadsOllamaReasoningField(t *testing.T) {
	// Ollama's /v1 streams thinking in "reasoning"; no field configured.
	frames := []frame{
		{Data: `{"id":"chatcmpl-12","object":"chat.completion.chunk","created":1735000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Thinking hard"},"finish_reason":null}]}`},
		{Data: `{"id":"chatcmpl-12","object":"chat.completion.chunk","created":1735000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":null}]}`},
		{Data: `{"id":"chatcmpl-12","object":"chat.completion.chunk","created":1735000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}`},
		{Data: `{"id":"chatcmpl-12","object":"chat.completion.chunk","created":1735000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":5,"total_tokens":55}}`},
		{Data: `[DONE]`},
	}
	f := newFake(t, sseHandler(frames))
	resp, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).Complete(context.Background(), Request{Model: "qwen3:8b", Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Reasoning != "Thinking hard" || resp.Content != "Done." || resp.FinishReason != "stop" || resp.Usage.PromptTokens != 50 {
		t.Errorf("resp = %+v", resp)
	}
	body := f.last(t).json(t)
	if _, ok := body["tools"]; ok {
		t.Errorf("tools sent with none offered: %v", body["tools"])
	}
	if _, ok := body["max_tokens"]; ok {
		t.Errorf("max_tokens sent when unset")
	}
	if _, ok := body["temperature"]; ok {
		t.Errorf("temperature sent when unset")
	}
}

func TestOpenAIChatSeparatesCallsThatReuseAnIndex(t *testing.T) {
	// Some servers send each complete call at index 0 with its own id.
	frames := []frame{
		{Data: chatChunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]}`, "")},
		{Data: chatChunk(`{"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"b\"}"}}]}`, "")},
		{Data: chatChunk(`{}`, "tool_calls")},
		{Data: `[DONE]`},
	}
	f := newFake(t, sseHandler(frames))
	resp, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).Complete(context.Background(), sampleRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{{ID: "call_a", Name: "read_file", Arguments: `{"path":"a"}`}, {ID: "call_b", Name: "read_file", Arguments: `{"path":"b"}`}}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("calls = %+v", resp.ToolCalls)
	}
}

func TestOpenAIChatEmptyAndLengthRepliesAreResponses(t *testing.T) {
	for _, finish := range []string{"stop", "length"} {
		f := newFake(t, sseHandler([]frame{
			{Data: chatChunk(`{"role":"assistant","content":""}`, "")},
			{Data: chatChunk(`{}`, finish)},
			{Data: `[DONE]`},
		}))
		resp, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).Complete(context.Background(), sampleRequest(), nil)
		if err != nil {
			t.Fatalf("%s: %v", finish, err)
		}
		if resp.Content != "" || len(resp.ToolCalls) != 0 || resp.FinishReason != finish {
			t.Errorf("%s: resp = %+v", finish, resp)
		}
	}
}

func TestOpenAIChatUsesMaxCompletionTokensOnlyForOpenAI(t *testing.T) {
	p := NewOpenAIChat(Config{BaseURL: "https://api.openai.com/v1"}).(*openAIChat)
	b, err := p.chatBody(sampleRequest())
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	if body["max_completion_tokens"] != float64(1024) || body["max_tokens"] != nil {
		t.Errorf("openai body: max_completion_tokens=%v max_tokens=%v", body["max_completion_tokens"], body["max_tokens"])
	}

	// Temperature 0 (deterministic runs) is sent, not dropped as unset.
	zero := 0.0
	req := sampleRequest()
	req.Temperature = &zero
	b, _ = p.chatBody(req)
	body = nil
	_ = json.Unmarshal(b, &body)
	if v, ok := body["temperature"]; !ok || v != float64(0) {
		t.Errorf("temperature 0 not sent: %v", body["temperature"])
	}
}

func TestOpenAIChatKeepsReplyWhenOnlyTheUsageChunkIsLost(t *testing.T) {
	frames := chatToolCallStream()
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, frames[:len(frames)-2]) // through the finish chunk
		panic(http.ErrAbortHandler)
	})
	resp, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).Complete(context.Background(), sampleRequest(), nil)
	if err != nil {
		t.Fatalf("complete reply discarded: %v", err)
	}
	if len(resp.ToolCalls) != 2 || resp.FinishReason != "tool_calls" || resp.Usage != (Usage{}) {
		t.Errorf("resp = %+v", resp)
	}
}

func TestOpenAIChatIgnoresEnvironmentCredentials(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	f := newFake(t, sseHandler(chatToolCallStream()))
	if _, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).Complete(context.Background(), sampleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if h := f.last(t).Header.Get("Authorization"); h != "" {
		t.Errorf("environment key leaked to the server: %q", h)
	}
}

// llama.cpp with --reasoning-format none streams a Qwen3 or DeepSeek-R1
// reply's thinking inline. It must arrive as reasoning, deltas included,
// and never as the reply's content.
func TestOpenAIChatSplitsAnInlineThinkBlock(t *testing.T) {
	chunk := func(content string) frame {
		b, _ := json.Marshal(map[string]any{"model": "qwen3", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}}}})
		return frame{Data: string(b)}
	}
	frames := []frame{
		chunk("<thi"), chunk("nk>\nThe test"), chunk(" fails on trailing hyphens.\n</thi"), chunk("nk>\n\n"), chunk("Fixed the trim."),
		{Data: `{"model":"qwen3","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":20,"total_tokens":29}}`},
		{Data: `[DONE]`},
	}
	f := newFake(t, sseHandler(frames))
	var c collect
	resp, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).Complete(context.Background(), Request{Model: "qwen3", Messages: []Message{{Role: "user", Content: "fix it"}}}, c.on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Fixed the trim." || resp.Reasoning != "\nThe test fails on trailing hyphens.\n" {
		t.Fatalf("content %q reasoning %q", resp.Content, resp.Reasoning)
	}
	if got := strings.Join(c.content(), ""); got != resp.Content {
		t.Errorf("streamed content %q, want %q", got, resp.Content)
	}
	if got := strings.Join(c.reasoning(), ""); got != resp.Reasoning || strings.Contains(got, "think>") {
		t.Errorf("streamed reasoning %q, want %q", got, resp.Reasoning)
	}
}
