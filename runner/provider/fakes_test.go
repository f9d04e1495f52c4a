package provider

// Test-only fake servers. Each speaks a real wire format over loopback HTTP
// with SSE framing, so the tests run the same SDK parsers a user's run does.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorded is one request the fake received.
type recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

func (r recorded) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	return m
}

// fake is an httptest server that records requests and answers with a
// handler.
type fake struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

func newFake(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *fake {
	t.Helper()
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

func (f *fake) last(t *testing.T) recorded {
	t.Helper()
	rs := f.requests()
	if len(rs) == 0 {
		t.Fatal("the fake received no request")
	}
	return rs[len(rs)-1]
}

// frame is one SSE event; Event is optional (Chat Completions sends none).
type frame struct {
	Event string
	Data  string
}

// typedEvent is an event as the Responses API and Anthropic send them:
// named, with the name again as its data's "type" before the body's fields.
func typedEvent(typ, body string) frame {
	if body != "" {
		body = "," + body
	}
	return frame{Event: typ, Data: `{"type":"` + typ + `"` + body + `}`}
}

// writeSSE streams frames, flushing after each so the client sees them
// arrive separately.
func writeSSE(w http.ResponseWriter, frames []frame) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	for _, f := range frames {
		if f.Event != "" {
			fmt.Fprintf(w, "event: %s\n", f.Event)
		}
		fmt.Fprintf(w, "data: %s\n\n", f.Data)
		if fl != nil {
			fl.Flush()
		}
	}
}

func sseHandler(frames []frame) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { writeSSE(w, frames) }
}

// abortAfter streams frames and then kills the TCP connection without
// finishing the chunked body: the client sees an unexpected EOF.
func abortAfter(frames []frame) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeSSE(w, frames)
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa`)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
}

func statusHandler(status int, header http.Header, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, vs := range header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		if strings.HasPrefix(strings.TrimSpace(body), "{") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// hangHandler sends nothing until the client gives up.
func hangHandler(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(30 * time.Second):
	}
}

// ---- Chat Completions (llama.cpp-style chunks) ----

func chatChunk(delta string, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return `{"choices":[{"finish_reason":` + fr + `,"index":0,"delta":` + delta + `}],"created":1735000000,"id":"chatcmpl-7Hq2","model":"qwen3-8b-q4_k_m.gguf","system_fingerprint":"b6123-abc","object":"chat.completion.chunk"}`
}

// chatToolCallStream: reasoning in reasoning_content, some content, one tool
// call whose id/name arrive first and whose arguments are split across four
// chunks, a second call at index 1, then the finish chunk and a final usage
// chunk with cached tokens, then [DONE].
func chatToolCallStream() []frame {
	return []frame{
		{Data: chatChunk(`{"role":"assistant","content":null}`, "")},
		{Data: chatChunk(`{"reasoning_content":"The user wants "}`, "")},
		{Data: chatChunk(`{"reasoning_content":"the file read."}`, "")},
		{Data: chatChunk(`{"content":"Let me "}`, "")},
		{Data: chatChunk(`{"content":"check."}`, "")},
		{Data: chatChunk(`{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"read_file","arguments":""}}]}`, "")},
		{Data: chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}`, "")},
		{Data: chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"ma"}}]}`, "")},
		{Data: chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"in.go\""}}]}`, "")},
		{Data: chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}`, "")},
		{Data: chatChunk(`{"tool_calls":[{"index":1,"id":"call_def","type":"function","function":{"name":"list_dir","arguments":""}}]}`, "")},
		{Data: chatChunk(`{}`, "tool_calls")},
		{Data: `{"choices":[],"created":1735000000,"id":"chatcmpl-7Hq2","model":"qwen3-8b-q4_k_m.gguf","object":"chat.completion.chunk","usage":{"completion_tokens":42,"prompt_tokens":1234,"total_tokens":1276,"prompt_tokens_details":{"cached_tokens":1024}}}`},
		{Data: `[DONE]`},
	}
}

// ---- Responses API ----

func responsesToolCallStream() []frame {
	return []frame{
		typedEvent("response.created", `"sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-oss-20b","output":[]}`),
		typedEvent("response.output_item.added", `"sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`),
		typedEvent("response.reasoning_text.delta", `"sequence_number":2,"item_id":"rs_1","output_index":0,"content_index":0,"delta":"Need to "`),
		typedEvent("response.reasoning_text.delta", `"sequence_number":3,"item_id":"rs_1","output_index":0,"content_index":0,"delta":"read it."`),
		typedEvent("response.output_item.added", `"sequence_number":4,"output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","status":"in_progress","content":[]}`),
		typedEvent("response.output_text.delta", `"sequence_number":5,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Reading "`),
		typedEvent("response.output_text.delta", `"sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"now."`),
		typedEvent("response.output_item.added", `"sequence_number":7,"output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_xyz","name":"read_file","arguments":"","status":"in_progress"}`),
		typedEvent("response.function_call_arguments.delta", `"sequence_number":8,"item_id":"fc_1","output_index":2,"delta":"{\"path\""`),
		typedEvent("response.function_call_arguments.delta", `"sequence_number":9,"item_id":"fc_1","output_index":2,"delta":": \"main"`),
		typedEvent("response.function_call_arguments.delta", `"sequence_number":10,"item_id":"fc_1","output_index":2,"delta":".go\"}"`),
		typedEvent("response.function_call_arguments.done", `"sequence_number":11,"item_id":"fc_1","output_index":2,"arguments":"{\"path\": \"main.go\"}"`),
		typedEvent("response.output_item.done", `"sequence_number":12,"output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_xyz","name":"read_file","arguments":"{\"path\": \"main.go\"}","status":"completed"}`),
		typedEvent("response.completed", `"sequence_number":13,"response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-oss-20b","output":[],"usage":{"input_tokens":900,"input_tokens_details":{"cached_tokens":512},"output_tokens":37,"output_tokens_details":{"reasoning_tokens":9},"total_tokens":937}}`),
	}
}

// ---- Anthropic Messages ----

func anthropicToolUseStream() []frame {
	return []frame{
		typedEvent("message_start", `"message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":120,"cache_creation_input_tokens":30,"cache_read_input_tokens":2000,"output_tokens":1}}`),
		typedEvent("content_block_start", `"index":0,"content_block":{"type":"thinking","thinking":"","signature":""}`),
		typedEvent("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"I should "}`),
		typedEvent("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"read main.go."}`),
		typedEvent("content_block_delta", `"index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}`),
		typedEvent("content_block_stop", `"index":0`),
		{Event: "ping", Data: `{"type": "ping"}`},
		typedEvent("content_block_start", `"index":1,"content_block":{"type":"text","text":""}`),
		typedEvent("content_block_delta", `"index":1,"delta":{"type":"text_delta","text":"Let me "}`),
		typedEvent("content_block_delta", `"index":1,"delta":{"type":"text_delta","text":"look."}`),
		typedEvent("content_block_stop", `"index":1`),
		typedEvent("content_block_start", `"index":2,"content_block":{"type":"tool_use","id":"toolu_01A","name":"read_file","input":{}}`),
		typedEvent("content_block_delta", `"index":2,"delta":{"type":"input_json_delta","partial_json":""}`),
		typedEvent("content_block_delta", `"index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": "}`),
		typedEvent("content_block_delta", `"index":2,"delta":{"type":"input_json_delta","partial_json":"\"main"}`),
		typedEvent("content_block_delta", `"index":2,"delta":{"type":"input_json_delta","partial_json":".go\"}"}`),
		typedEvent("content_block_stop", `"index":2`),
		typedEvent("message_delta", `"delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":58}`),
		typedEvent("message_stop", ""),
	}
}
