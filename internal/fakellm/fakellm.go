// Package fakellm is a test-only model server that speaks the real wire
// formats — OpenAI Chat Completions and Responses, and Anthropic Messages,
// all streaming over SSE — and plays a programmed conversation. Whole-run
// tests point Guildhall at it so they exercise the same SDK parsing a
// user's run does. It is imported only by _test files.
package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Call is a tool call a reply makes.
type Call struct {
	Name string
	Args any
}

// Reply is one programmed model reply.
type Reply struct {
	Content   string
	Reasoning string
	Calls     []Call
	// PromptTokens, CompletionTokens and CachedTokens are the usage the
	// reply reports (PromptTokens defaults to a size estimate).
	PromptTokens, CompletionTokens, CachedTokens int
	// Timings, when set, is sent on the usage chunk as llama-server's
	// timings object (Chat Completions only).
	Timings *Timings
}

// Timings is llama-server's account of a call: prompt tokens taken from
// the slot's cache and evaluated, and the generation speed.
type Timings struct {
	CacheN, PromptN, PredictedN int
	PredictedPerSecond          float64
}

// Request is what the server received, for assertions.
type Request struct {
	Path   string
	Role   string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// Server is a fake model endpoint. Replies are queued per role: the role is
// read from a "[role:NAME]" marker in the request's system prompt.
type Server struct {
	*httptest.Server
	// MaxPromptChars, when set, rejects requests whose body is larger, with
	// the format's context-length error; ReportTokens includes the size.
	MaxPromptChars int
	ReportTokens   bool
	// Flavor makes the Chat Completions stream carry one server's
	// documented quirks (FlavorOllama, FlavorVLLM); the zero value is
	// llama.cpp's shape.
	Flavor Flavor
	// ContextWindow, when set, is the window the server reports: as
	// context_length in the model list, and as the n_ctx of llama.cpp's
	// /props. Otherwise the list reports n_ctx_train 32768 and /props is
	// not served.
	ContextWindow int

	// faults are served, in order, before the next replies; down answers
	// every request (probes included) with 503 while set.
	faults []Fault
	down   bool

	mu       sync.Mutex
	replies  map[string][]Reply
	requests []Request
	calls    int
}

// New starts a fake. Its base URL for clients is URL()+"/v1".
func New() *Server {
	s := &Server{replies: map[string][]Reply{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// BaseURL is the OpenAI-style base URL (".../v1").
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Flavor is the server whose stream quirks the fake reproduces.
type Flavor int

const (
	// FlavorLlamaCpp: OpenAI-style chunks, tool-call arguments in pieces,
	// reasoning in reasoning_content, usage in a final chunk.
	FlavorLlamaCpp Flavor = iota
	// FlavorOllama: Ollama's OpenAI endpoint before 0.5.2 — no usage in
	// the stream whatever stream_options says; each tool call whole in one
	// chunk, every one at index 0 with its own id; finish_reason "stop"
	// even when the reply calls tools; reasoning in "reasoning".
	FlavorOllama
	// FlavorVLLM: vLLM's tool parsers — a call's first chunk carries its
	// id, type and name and no "arguments" key, the arguments follow in
	// later chunks; ids look like "chatcmpl-tool-…"; reasoning (with
	// --reasoning-parser) in reasoning_content; usage only in a final
	// chunk with no choices, when include_usage asks for it.
	FlavorVLLM
)

// Fault is one injected failure.
type Fault struct {
	Status     int    // an HTTP error status with Body
	RetryAfter string // Retry-After header value
	Body       string
	Hang       bool // accept and never answer until the client gives up
	CutStream  bool // start a tool call and end the stream mid-arguments
	BadArgs    bool // a complete reply whose tool arguments are not JSON
}

// Inject queues faults served before the next replies.
func (s *Server) Inject(f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f...)
}

// SetDown makes every request fail with 503 (an outage) or restores it.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Queue adds replies for role.
func (s *Server) Queue(role string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies[role] = append(s.replies[role], replies...)
}

// Requests returns what was received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequestsFor returns the model requests of one role.
func (s *Server) RequestsFor(role string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Role == role {
			out = append(out, r)
		}
	}
	return out
}

var roleMarker = regexp.MustCompile(`\[role:([a-z_]+)\]`)

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"upstream unavailable","type":"server_error"}}`)
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/props" {
		s.mu.Lock()
		n := s.ContextWindow
		s.mu.Unlock()
		if n == 0 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"default_generation_settings":{"n_ctx":%d},"total_slots":1}`, n)
		return
	}
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		if s.ContextWindow > 0 {
			fmt.Fprintf(w, `{"object":"list","data":[{"id":"fake-model","object":"model","owned_by":"test","context_length":%d}]}`, s.ContextWindow)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model","owned_by":"test","meta":{"n_ctx_train":32768}}]}`)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	role := ""
	if m := roleMarker.FindStringSubmatch(string(raw)); m != nil {
		role = m[1]
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Role: role, Header: r.Header.Clone(), Body: body, Raw: raw})
	var fault *Fault
	if len(s.faults) > 0 && r.Method == http.MethodPost { // model calls, not probes
		fault, s.faults = &s.faults[0], s.faults[1:]
	}
	tooBig := s.MaxPromptChars > 0 && len(raw) > s.MaxPromptChars
	var reply Reply
	ok := false
	if q := s.replies[role]; len(q) > 0 && fault == nil && !tooBig {
		reply, s.replies[role], ok = q[0], q[1:], true
	}
	s.calls++
	n := s.calls
	report := s.ReportTokens
	s.mu.Unlock()

	format := "chat"
	switch {
	case strings.HasSuffix(r.URL.Path, "/responses"):
		format = "responses"
	case strings.HasSuffix(r.URL.Path, "/messages"):
		format = "anthropic"
	}
	if fault != nil {
		serveFault(w, r, *fault, n)
		return
	}
	if tooBig {
		rejectTooLong(w, format, len(raw)/4, report)
		return
	}
	if !ok {
		reply = Reply{Calls: []Call{{Name: "finish", Args: map[string]any{"status": "error", "summary": "fake model: no reply queued for role " + role}}}}
	}
	if reply.PromptTokens == 0 {
		reply.PromptTokens = len(raw) / 4
	}
	if reply.CompletionTokens == 0 {
		reply.CompletionTokens = 10 + len(reply.Content)/4
	}
	w.Header().Set("Content-Type", "text/event-stream")
	switch {
	case format == "responses":
		writeResponses(w, reply, n)
	case format == "anthropic":
		writeAnthropic(w, reply, n)
	case s.Flavor == FlavorOllama:
		writeOllamaChat(w, reply, n)
	case s.Flavor == FlavorVLLM:
		writeVLLMChat(w, reply, n, includeUsage(body))
	default:
		writeChat(w, reply, n)
	}
}

func includeUsage(body map[string]any) bool {
	so, _ := body["stream_options"].(map[string]any)
	v, _ := so["include_usage"].(bool)
	return v
}

func chatChunk(n int, delta any, finish any) string {
	return js(map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
}

// writeOllamaChat streams r as Ollama's OpenAI endpoint did before 0.5.2.
func writeOllamaChat(w io.Writer, r Reply, n int) {
	for _, p := range pieces(r.Reasoning) {
		sse(w, "", chatChunk(n, map[string]any{"role": "assistant", "content": "", "reasoning": p}, nil))
	}
	for _, p := range pieces(r.Content) {
		sse(w, "", chatChunk(n, map[string]any{"role": "assistant", "content": p}, nil))
	}
	for i, c := range r.Calls {
		sse(w, "", chatChunk(n, map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
			"id": fmt.Sprintf("call_%08x", n*100+i), "index": 0, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": args(c)}}}}, nil))
	}
	sse(w, "", chatChunk(n, map[string]any{"role": "assistant", "content": ""}, "stop"))
	sse(w, "", "[DONE]")
}

// writeVLLMChat streams r as vLLM's OpenAI server with a tool parser does.
func writeVLLMChat(w io.Writer, r Reply, n int, usage bool) {
	sse(w, "", chatChunk(n, map[string]any{"role": "assistant", "content": ""}, nil))
	for _, p := range pieces(r.Reasoning) {
		sse(w, "", chatChunk(n, map[string]any{"reasoning_content": p}, nil))
	}
	for _, p := range pieces(r.Content) {
		sse(w, "", chatChunk(n, map[string]any{"content": p}, nil))
	}
	for i, c := range r.Calls {
		sse(w, "", chatChunk(n, map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("chatcmpl-tool-%d%02d", n, i),
			"type": "function", "function": map[string]any{"name": c.Name}}}}, nil))
		for _, p := range pieces(args(c)) {
			sse(w, "", chatChunk(n, map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil))
		}
	}
	finish := "stop"
	if len(r.Calls) > 0 {
		finish = "tool_calls"
	}
	sse(w, "", chatChunk(n, map[string]any{"content": ""}, finish))
	if usage {
		sse(w, "", js(map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "fake-model", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": r.PromptTokens, "completion_tokens": r.CompletionTokens, "total_tokens": r.PromptTokens + r.CompletionTokens}}))
	}
	sse(w, "", "[DONE]")
}

func rejectTooLong(w http.ResponseWriter, format string, tokens int, report bool) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	switch {
	case format == "anthropic" && report:
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > 1000 maximum"}}`, tokens)
	case format == "anthropic":
		io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`)
	case report:
		fmt.Fprintf(w, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":%d,"n_ctx":1000}}`, tokens)
	default:
		io.WriteString(w, `{"error":{"message":"This model's maximum context length exceeded.","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	}
}

func args(c Call) string {
	b, _ := json.Marshal(c.Args)
	return string(b)
}

// pieces splits s into short chunks, as a streaming server sends it.
func pieces(s string) []string {
	var out []string
	for len(s) > 7 {
		out = append(out, s[:7])
		s = s[7:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func sse(w io.Writer, event, data string) {
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func writeChat(w io.Writer, r Reply, n int) {
	chunk := func(delta any, finish any) string {
		return js(map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	sse(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, p := range pieces(r.Reasoning) {
		sse(w, "", chunk(map[string]any{"reasoning_content": p}, nil))
	}
	for _, p := range pieces(r.Content) {
		sse(w, "", chunk(map[string]any{"content": p}, nil))
	}
	for i, c := range r.Calls {
		sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d_%d", n, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil))
		for _, p := range pieces(args(c)) {
			sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil))
		}
	}
	finish := "stop"
	if len(r.Calls) > 0 {
		finish = "tool_calls"
	}
	sse(w, "", chunk(map[string]any{}, finish))
	last := map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "fake-model", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": r.PromptTokens, "completion_tokens": r.CompletionTokens, "total_tokens": r.PromptTokens + r.CompletionTokens,
			"prompt_tokens_details": map[string]any{"cached_tokens": r.CachedTokens}}}
	if t := r.Timings; t != nil {
		last["timings"] = map[string]any{"cache_n": t.CacheN, "prompt_n": t.PromptN, "predicted_n": t.PredictedN, "predicted_per_second": t.PredictedPerSecond}
	}
	sse(w, "", js(last))
	sse(w, "", "[DONE]")
}

func writeResponses(w io.Writer, r Reply, n int) {
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		sse(w, typ, js(fields))
	}
	id := fmt.Sprintf("resp_%d", n)
	ev("response.created", map[string]any{"response": map[string]any{"id": id, "object": "response", "status": "in_progress", "model": "fake-model", "output": []any{}}})
	out := 0
	if r.Reasoning != "" {
		ev("response.output_item.added", map[string]any{"output_index": out, "item": map[string]any{"id": "rs_1", "type": "reasoning", "summary": []any{}}})
		for _, p := range pieces(r.Reasoning) {
			ev("response.reasoning_text.delta", map[string]any{"item_id": "rs_1", "output_index": out, "content_index": 0, "delta": p})
		}
		out++
	}
	if r.Content != "" {
		ev("response.output_item.added", map[string]any{"output_index": out, "item": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []any{}}})
		for _, p := range pieces(r.Content) {
			ev("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": out, "content_index": 0, "delta": p})
		}
		out++
	}
	for i, c := range r.Calls {
		fid := fmt.Sprintf("fc_%d", i)
		cid := fmt.Sprintf("call_%d_%d", n, i)
		ev("response.output_item.added", map[string]any{"output_index": out, "item": map[string]any{"id": fid, "type": "function_call", "call_id": cid, "name": c.Name, "arguments": "", "status": "in_progress"}})
		for _, p := range pieces(args(c)) {
			ev("response.function_call_arguments.delta", map[string]any{"item_id": fid, "output_index": out, "delta": p})
		}
		ev("response.function_call_arguments.done", map[string]any{"item_id": fid, "output_index": out, "arguments": args(c)})
		ev("response.output_item.done", map[string]any{"output_index": out, "item": map[string]any{"id": fid, "type": "function_call", "call_id": cid, "name": c.Name, "arguments": args(c), "status": "completed"}})
		out++
	}
	ev("response.completed", map[string]any{"response": map[string]any{"id": id, "object": "response", "status": "completed", "model": "fake-model", "output": []any{},
		"usage": map[string]any{"input_tokens": r.PromptTokens, "input_tokens_details": map[string]any{"cached_tokens": r.CachedTokens},
			"output_tokens": r.CompletionTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": r.PromptTokens + r.CompletionTokens}}})
}

func writeAnthropic(w io.Writer, r Reply, n int) {
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		sse(w, typ, js(fields))
	}
	ev("message_start", map[string]any{"message": map[string]any{"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "content": []any{},
		"model": "fake-model", "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": r.PromptTokens - r.CachedTokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": r.CachedTokens, "output_tokens": 1}}})
	idx := 0
	if r.Reasoning != "" {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		for _, p := range pieces(r.Reasoning) {
			ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "thinking_delta", "thinking": p}})
		}
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	if r.Content != "" {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, p := range pieces(r.Content) {
			ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": p}})
		}
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	for i, c := range r.Calls {
		ev("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", n, i), "name": c.Name, "input": map[string]any{}}})
		for _, p := range pieces(args(c)) {
			ev("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		ev("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	stop := "end_turn"
	if len(r.Calls) > 0 {
		stop = "tool_use"
	}
	ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": r.CompletionTokens}})
	ev("message_stop", map[string]any{})
}

func serveFault(w http.ResponseWriter, r *http.Request, f Fault, n int) {
	switch {
	case f.Hang:
		<-r.Context().Done()
	case f.Status != 0:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		io.WriteString(w, f.Body)
	case f.CutStream:
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "", js(map[string]any{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "c", "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": `{"pa`}}}}, "finish_reason": nil}}}))
	case f.BadArgs:
		w.Header().Set("Content-Type", "text/event-stream")
		writeChatRaw(w, n, "read_file", `{"path": "x"`)
	}
}

// writeChatRaw streams one tool call with literal (possibly invalid)
// arguments.
func writeChatRaw(w io.Writer, n int, name, rawArgs string) {
	chunk := func(delta any, finish any) string {
		return js(map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_bad", "type": "function",
		"function": map[string]any{"name": name, "arguments": rawArgs}}}}, nil))
	sse(w, "", chunk(map[string]any{}, "tool_calls"))
	sse(w, "", "[DONE]")
}

// RefusedURL is an API base URL on a loopback port nothing listens on, for
// a test of what a refused connection does.
func RefusedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}
