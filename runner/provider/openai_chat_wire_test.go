package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
)

// params is the request the provider built with the SDK's param types
// before it encoded bodies itself (chatBody). It stays as the reference the
// hand-written encoder is checked against, and as the baseline of
// BenchmarkOpenAIChatRequestBodySDK.
func (p *openAIChat) params(req Request) openai.ChatCompletionNewParams {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.cfg.model(req)),
		Messages:      p.sdkMessages(req),
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

func (p *openAIChat) sdkMessages(req Request) []openai.ChatCompletionMessageParamUnion {
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
		default:
			out = append(out, openai.UserMessage(m.Content))
		}
	}
	return out
}

// sdkBody is what NewStreaming sent: the params plus "stream":true.
func sdkBody(t testing.TB, p *openAIChat, req Request) map[string]any {
	t.Helper()
	b, err := json.Marshal(p.params(req))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["stream"] = true
	return m
}

func ownBody(t testing.TB, p *openAIChat, req Request) map[string]any {
	t.Helper()
	b, err := p.chatBody(req)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, b)
	}
	return m
}

func TestOpenAIChatBodyMatchesSDKParams(t *testing.T) {
	odd := sampleRequest()
	odd.Model = ""
	odd.Temperature = nil
	odd.MaxTokens = 0
	odd.Messages = append(odd.Messages,
		Message{Role: "assistant", Content: "", ToolCalls: []ToolCall{{ID: "c3", Name: "x", Arguments: "  "}, {ID: "c4", Name: "y", Arguments: "{broken"}}},
		Message{Role: "developer", Content: "unknown roles are user text"},
		Message{Role: "assistant", Content: "no calls", Reasoning: "r"},
	)
	odd.Tools = append(odd.Tools,
		ToolSpec{Name: "no_schema"},
		ToolSpec{Name: "untyped", Description: "", Parameters: json.RawMessage(` {"properties": {"n": {"type": "integer", "maximum": 10}}} `)},
		ToolSpec{Name: "empty", Parameters: json.RawMessage(`{}`)},
		ToolSpec{Name: "null", Parameters: json.RawMessage(`null`)},
		ToolSpec{Name: "array", Parameters: json.RawMessage(`[1,2]`)},
		ToolSpec{Name: "invalid", Parameters: json.RawMessage(`{"type":`)},
	)
	tiny := 1e-7
	small := sampleRequest()
	small.Temperature = &tiny
	zero := 0.0
	zeroTemp := sampleRequest()
	zeroTemp.Temperature = &zero

	for _, tc := range []struct {
		name, base, field string
		req               Request
		reasoning         bool
	}{
		{"sample", "http://127.0.0.1:8080/v1", "", sampleRequest(), false},
		{"with reasoning", "http://127.0.0.1:8080/v1", "", sampleRequest(), true},
		{"custom reasoning field", "http://127.0.0.1:8080/v1", "thinking", sampleRequest(), true},
		{"openai host", "https://api.openai.com/v1", "", sampleRequest(), false},
		{"odd shapes", "http://127.0.0.1:8080/v1", "reasoning", odd, true},
		{"tiny temperature", "http://127.0.0.1:8080/v1", "", small, false},
		{"zero temperature", "http://127.0.0.1:8080/v1", "", zeroTemp, false},
		{"empty", "http://127.0.0.1:8080/v1", "", Request{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewOpenAIChat(Config{BaseURL: tc.base, Model: "default-model", ReasoningField: tc.field}).(*openAIChat)
			req := tc.req
			req.IncludeReasoning = tc.reasoning
			want := sdkBody(t, p, req)
			for range 2 { // the second encode uses the cached schemas
				if got := ownBody(t, p, req); !reflect.DeepEqual(got, want) {
					gj, _ := json.MarshalIndent(got, "", " ")
					wj, _ := json.MarshalIndent(want, "", " ")
					t.Fatalf("body differs from the SDK's\ngot  %s\nwant %s", gj, wj)
				}
			}
		})
	}
}

func TestOpenAIChatSendsTheSDKsHeaders(t *testing.T) {
	for _, key := range []string{"", "sk-local-123"} {
		f := newFake(t, sseHandler(chatToolCallStream()))
		p := NewOpenAIChat(Config{BaseURL: f.URL + "/v1", APIKey: key}).(*openAIChat)
		// The reference: the SDK's own streaming call.
		stream := p.chat.NewStreaming(context.Background(), p.params(sampleRequest()))
		for stream.Next() {
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		_ = stream.Close()
		if _, err := p.Complete(context.Background(), sampleRequest(), nil); err != nil {
			t.Fatal(err)
		}
		rs := f.requests()
		want, got := rs[0].Header.Clone(), rs[1].Header.Clone()
		for _, h := range []http.Header{want, got} {
			h.Del("Content-Length") // the bodies differ in key order
		}
		if !reflect.DeepEqual(got, want) || rs[0].Path != rs[1].Path || rs[0].Method != rs[1].Method {
			t.Errorf("key %q: sent %s %s %v\nSDK sent %s %s %v", key, rs[1].Method, rs[1].Path, got, rs[0].Method, rs[0].Path, want)
		}
	}
}

func TestOpenAIChatBodyRejectsNonFiniteTemperature(t *testing.T) {
	p := NewOpenAIChat(Config{}).(*openAIChat)
	req := sampleRequest()
	nan := math.NaN()
	req.Temperature = &nan
	if _, err := p.chatBody(req); AsError(err) == nil || AsError(err).Category != CategoryBadRequest {
		t.Errorf("err = %v", err)
	}
}

func TestOpenAIChatBodyEscapesHostileText(t *testing.T) {
	var ctl strings.Builder
	for c := range 0x20 {
		ctl.WriteByte(byte(c))
	}
	hostile := []string{
		ctl.String() + "\x7f",
		"quote \" backslash \\ slash / </script><!-- & ' `",
		"line\u2028para\u2029end",
		"bad utf8 \xff\xfe and a cut rune \xe2\x82 then ok é 漢字 🎉",
		"\xed\xa0\x80 surrogate half",
		"\\u0000 literal escape text",
		"",
	}
	p := NewOpenAIChat(Config{ReasoningField: "weird \"field\"\n"}).(*openAIChat)
	for _, s := range hostile {
		req := Request{
			Model: s,
			Messages: []Message{
				{Role: "system", Content: s},
				{Role: "user", Content: s},
				{Role: "assistant", Content: s, Reasoning: s + "r", ToolCalls: []ToolCall{{ID: s, Name: s, Arguments: `{"k":` + string(appendJSONString(nil, s)) + `}`}}},
				{Role: "tool", Content: s, ToolCallID: s},
			},
			Tools:            []ToolSpec{{Name: s, Description: s + "d", Parameters: json.RawMessage(`{"type":"object","description":` + string(appendJSONString(nil, s)) + `}`)}},
			IncludeReasoning: true,
		}
		b, err := p.chatBody(req)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) || !utf8.Valid(b) {
			t.Fatalf("%q: body is not valid UTF-8 JSON: %s", s, b)
		}
		if bytes.ContainsAny(b, "\u2028\u2029") {
			t.Errorf("%q: U+2028/U+2029 sent unescaped", s)
		}
		// One U+FFFD per invalid byte, as encoding/json writes them (the
		// []rune conversion decodes the same way).
		want := string([]rune(s))
		var body struct {
			Model    string `json:"model"`
			Messages []struct {
				Content    string `json:"content"`
				ToolCallID string `json:"tool_call_id"`
				ToolCalls  []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"messages"`
			Tools []struct {
				Function struct {
					Name, Description string
					Parameters        struct{ Description string }
				}
			}
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		var generic map[string]any
		_ = json.Unmarshal(b, &generic)
		asst := generic["messages"].([]any)[2].(map[string]any)
		var args struct{ K string }
		_ = json.Unmarshal([]byte(body.Messages[2].ToolCalls[0].Function.Arguments), &args)
		got := []string{
			body.Model, body.Messages[0].Content, body.Messages[1].Content, body.Messages[2].Content,
			body.Messages[2].ToolCalls[0].ID, body.Messages[2].ToolCalls[0].Function.Name, args.K,
			body.Messages[3].Content, body.Messages[3].ToolCallID,
			body.Tools[0].Function.Name, strings.TrimSuffix(body.Tools[0].Function.Description, "d"),
			body.Tools[0].Function.Parameters.Description,
			strings.TrimSuffix(fmt.Sprint(asst[p.cfg.ReasoningField]), "r"),
		}
		for i, g := range got {
			if g != want {
				t.Errorf("%q: field %d round-tripped as %q, want %q", s, i, g, want)
			}
		}
		// The same text as encoding/json writes it with HTML escaping off
		// (as the SDK's encoder did for bodies).
		var enc bytes.Buffer
		je := json.NewEncoder(&enc)
		je.SetEscapeHTML(false)
		_ = je.Encode(s)
		if own := appendJSONString(nil, s); !bytes.Equal(own, bytes.TrimSuffix(enc.Bytes(), []byte("\n"))) {
			t.Errorf("%q: encoded %s, encoding/json %s", s, own, enc.Bytes())
		}
	}
}

func TestAppendJSONFloatMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, 0.2, 1, -1.5, 0.7, 1e-7, 1.5e-9, 123456789, 1e20, 1e21, 2.5e300, -3e-300, math.SmallestNonzeroFloat64, math.MaxFloat64} {
		want, _ := json.Marshal(f)
		if got := appendJSONFloat(nil, f); !bytes.Equal(got, want) {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
}

func TestOpenAIChatChunksDecodeLeniently(t *testing.T) {
	// A delta whose content is an array of parts (not a string) loses only
	// that field; the rest of the stream is read as before.
	frames := []frame{
		{Data: chatChunk(`{"content":[{"type":"text","text":"x"}],"reasoning_content":"still read"}`, "")},
		{Data: chatChunk(`{"content":"Hello"}`, "")},
		{Data: chatChunk(`{}`, "stop")},
		{Data: `{"choices":[],"usage":null}`},
		{Data: `{"choices":[],"usage":{"prompt_tokens":"many","completion_tokens":3,"total_tokens":10}}`},
		{Data: `[DONE]`},
	}
	f := newFake(t, sseHandler(frames))
	resp, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"}).Complete(context.Background(), sampleRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hello" || resp.Reasoning != "still read" || resp.FinishReason != "stop" ||
		resp.Usage != (Usage{CompletionTokens: 3, TotalTokens: 10}) {
		t.Errorf("resp = %+v", resp)
	}
}

func TestOpenAIChatReadsACustomReasoningField(t *testing.T) {
	frames := []frame{
		{Data: chatChunk(`{"thinking":"Custom ","reasoning_content":"not this one"}`, "")},
		{Data: chatChunk(`{"thinking":null,"content":"Done."}`, "")},
		{Data: chatChunk(`{"thinking":7}`, "")},
		{Data: chatChunk(`{"thinking":"field."}`, "stop")},
		{Data: `[DONE]`},
	}
	f := newFake(t, sseHandler(frames))
	var c collect
	resp, err := NewOpenAIChat(Config{BaseURL: f.URL + "/v1", ReasoningField: "thinking"}).Complete(context.Background(), sampleRequest(), c.on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Reasoning != "Custom field." || resp.Content != "Done." {
		t.Errorf("resp = %+v", resp)
	}
	if got := c.reasoning(); !reflect.DeepEqual(got, []string{"Custom ", "field."}) {
		t.Errorf("reasoning deltas = %q", got)
	}
}

// benchHistory is a 100-message coder history: a system prompt and a task,
// then assistant turns with a tool call each and their results.
func benchHistory() Request {
	req := sampleRequest()
	req.Messages = req.Messages[:2]
	for i := 0; len(req.Messages) < 100; i++ {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			Message{Role: "assistant", Content: "Checking the next file.", Reasoning: "The previous output shows more work.", ToolCalls: []ToolCall{
				{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":"pkg/file_%d.go"}`, i)},
			}},
			Message{Role: "tool", ToolCallID: id, ToolName: "read_file", Content: strings.Repeat("package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n", 8)},
		)
	}
	req.Tools = append(req.Tools,
		ToolSpec{Name: "run_shell", Description: "Run a shell command", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer"}},"required":["command"]}`)},
		ToolSpec{Name: "finish", Description: "Finish the task", Parameters: json.RawMessage(`{"type":"object","properties":{"status":{"type":"string","enum":["success","failure"]},"summary":{"type":"string"}},"required":["status","summary"]}`)},
	)
	return req
}

func BenchmarkOpenAIChatRequestBody(b *testing.B) {
	p := NewOpenAIChat(Config{BaseURL: "http://127.0.0.1:8080/v1"}).(*openAIChat)
	req := benchHistory()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.chatBody(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenAIChatRequestBodySDK is the encoding the provider used to
// pay per call: the SDK's params, marshaled by its reflective encoder.
func BenchmarkOpenAIChatRequestBodySDK(b *testing.B) {
	p := NewOpenAIChat(Config{BaseURL: "http://127.0.0.1:8080/v1"}).(*openAIChat)
	req := benchHistory()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(p.params(req)); err != nil {
			b.Fatal(err)
		}
	}
}

// chunkBench is a typical tool-call argument chunk.
const chunkBench = `{"id":"chatcmpl-7","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\": \"ma"}}]},"finish_reason":null}]}`

func BenchmarkOpenAIChatDecodeChunk(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var c chatStreamChunk
		if err := json.Unmarshal([]byte(chunkBench), &c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenAIChatDecodeChunkSDK(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var c openai.ChatCompletionChunk
		if err := json.Unmarshal([]byte(chunkBench), &c); err != nil {
			b.Fatal(err)
		}
	}
}
