package provider

// The Chat Completions wire format, encoded and decoded here rather than by
// the SDK's param and response types. A run re-sends its whole, growing
// history on every call, and the SDK's reflective encoder and its apijson
// chunk decoder dominated the CPU cost of a call. The body is appended into
// one []byte; chunks are decoded by encoding/json into the few fields the
// provider reads. The SDK still does transport, options, middleware and SSE
// framing (openai_chat.go).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// chatBody encodes req as a streaming Chat Completions request body. It
// carries the same fields the SDK's ChatCompletionNewParams produced for it,
// plus "stream":true.
func (p *openAIChat) chatBody(req Request) ([]byte, error) {
	if t := req.Temperature; t != nil && (math.IsNaN(*t) || math.IsInf(*t, 0)) {
		return nil, &Error{Category: CategoryBadRequest, Err: fmt.Errorf("temperature %v is not a finite number", *t)}
	}
	b := make([]byte, 0, chatBodySizeHint(req))
	b = append(b, `{"model":`...)
	b = appendJSONString(b, p.cfg.model(req))
	b = append(b, `,"messages":[`...)
	var scratch []byte
	for i, m := range req.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b, scratch = p.appendMessage(b, scratch, m, req.IncludeReasoning)
	}
	b = append(b, `],"stream":true,"stream_options":{"include_usage":true}`...)
	if len(req.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i, t := range req.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"function","function":{"name":`...)
			b = appendJSONString(b, t.Name)
			if t.Description != "" {
				b = append(b, `,"description":`...)
				b = appendJSONString(b, t.Description)
			}
			b = append(b, `,"parameters":`...)
			b = append(b, p.schemas.get(t.Parameters)...)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	if req.Temperature != nil {
		b = append(b, `,"temperature":`...)
		b = appendJSONFloat(b, *req.Temperature)
	}
	if req.MaxTokens > 0 {
		if p.openAIHost {
			b = append(b, `,"max_completion_tokens":`...)
		} else {
			b = append(b, `,"max_tokens":`...)
		}
		b = strconv.AppendInt(b, int64(req.MaxTokens), 10)
	}
	return append(b, '}'), nil
}

// appendMessage encodes one history message in the shape the SDK's message
// constructors give it: content is always a plain string. scratch is a
// buffer reused across messages (see appendArguments).
func (p *openAIChat) appendMessage(b, scratch []byte, m Message, includeReasoning bool) ([]byte, []byte) {
	switch m.Role {
	case "system":
		b = append(b, `{"role":"system","content":`...)
		b = appendJSONString(b, m.Content)
	case "tool":
		b = append(b, `{"role":"tool","content":`...)
		b = appendJSONString(b, m.Content)
		b = append(b, `,"tool_call_id":`...)
		b = appendJSONString(b, m.ToolCallID)
	case "assistant":
		b = append(b, `{"role":"assistant","content":`...)
		b = appendJSONString(b, m.Content)
		if len(m.ToolCalls) > 0 {
			b = append(b, `,"tool_calls":[`...)
			for i, tc := range m.ToolCalls {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"id":`...)
				b = appendJSONString(b, tc.ID)
				b = append(b, `,"type":"function","function":{"name":`...)
				b = appendJSONString(b, tc.Name)
				b = append(b, `,"arguments":`...)
				b, scratch = appendArguments(b, scratch, tc.Arguments)
				b = append(b, "}}"...)
			}
			b = append(b, ']')
		}
		if includeReasoning && m.Reasoning != "" {
			b = append(b, ',')
			b = appendJSONString(b, p.sendReasoningField())
			b = append(b, ':')
			b = appendJSONString(b, m.Reasoning)
		}
	default: // user, and anything unknown is safest as user text
		b = append(b, `{"role":"user","content":`...)
		b = appendJSONString(b, m.Content)
	}
	return append(b, '}'), scratch
}

// appendArguments appends a tool call's arguments as the JSON string (of
// JSON) the API wants, by argsValue's rule: unparsable arguments (an edited
// history) are sent as {}. json.Valid needs a []byte; converting each
// call's arguments would allocate once per call in the history, so they are
// copied into scratch, which is returned for reuse.
func appendArguments(b, scratch []byte, args string) ([]byte, []byte) {
	t := strings.TrimSpace(args)
	scratch = append(scratch[:0], t...)
	if t == "" || !json.Valid(scratch) {
		t = "{}"
	}
	return appendJSONString(b, t), scratch
}

// chatBodySizeHint estimates the encoded size of req so the body is
// allocated once in the common case (escapes can still make it grow).
func chatBodySizeHint(req Request) int {
	n := 192 + len(req.Model)
	for _, m := range req.Messages {
		n += 48 + len(m.Content) + len(m.ToolCallID)
		if req.IncludeReasoning {
			n += 24 + len(m.Reasoning)
		}
		for _, tc := range m.ToolCalls {
			n += 72 + len(tc.ID) + len(tc.Name) + 2*len(tc.Arguments) // arguments are quoted JSON
		}
	}
	for _, t := range req.Tools {
		n += 64 + len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	// Headroom for escapes: code and tool output are full of \n, \t and ".
	return n + n/8
}

// appendJSONString appends s as a JSON string with encoding/json's escaping
// (HTML escaping off): invalid UTF-8 becomes U+FFFD, and U+2028/U+2029 are
// escaped so the body stays safe to embed in JavaScript.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONFloat appends a finite f the way encoding/json formats a
// float64: shortest representation, exponent form only for very small or
// very large magnitudes.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// schemaCache holds each tool schema already normalised to the JSON that is
// sent. Tools are the same on every call of a run, so decoding them on each
// call (as the SDK path did) was pure waste. Entries are keyed by the raw
// schema bytes, so a changed schema is simply a new entry.
type schemaCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

// maxCachedSchemas bounds the cache for callers whose schemas vary per call;
// a run's fixed tool set stays far below it.
const maxCachedSchemas = 256

func (c *schemaCache) get(raw json.RawMessage) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[string(raw)]; ok {
		return s
	}
	if c.m == nil || len(c.m) >= maxCachedSchemas {
		c.m = map[string][]byte{}
	}
	s := normalizeSchema(raw)
	c.m[string(raw)] = s
	return s
}

// normalizeSchema is schemaMap's rule as JSON: an object schema without a
// "type" gets "type":"object", and anything that is not an object becomes the
// empty object schema. A valid object is otherwise passed through compacted,
// keeping its numbers exactly as written.
func normalizeSchema(raw json.RawMessage) []byte {
	if len(raw) > 0 && utf8.Valid(raw) {
		var probe map[string]json.RawMessage
		var buf bytes.Buffer
		if json.Unmarshal(raw, &probe) == nil && probe != nil && json.Compact(&buf, raw) == nil {
			out := buf.Bytes()
			if _, ok := probe["type"]; !ok {
				if len(probe) == 0 {
					return []byte(`{"type":"object"}`)
				}
				out = append([]byte(`{"type":"object",`), out[1:]...)
			}
			return out
		}
	}
	// Invalid UTF-8 (which encoding/json repairs) or no object at all: send
	// what schemaMap decoded.
	out, err := json.Marshal(schemaMap(raw))
	if err != nil {
		return []byte(`{"type":"object","properties":{}}`)
	}
	return out
}

// chatStreamChunk is one streamed chunk, reduced to what Complete reads.
type chatStreamChunk struct {
	Model   string             `json:"model"`
	Choices []chatStreamChoice `json:"choices"`
	// Usage is nil unless the chunk carries a usage object: servers omit it
	// or send null on every chunk but the last.
	Usage *chatStreamUsage `json:"usage"`
	// Timings is llama.cpp's own account of the call, on the last chunk:
	// how much of the prompt came from its cache and how fast it wrote.
	Timings *chatTimings `json:"timings"`
	// raw is the chunk as received, for a reasoning field whose name is
	// only known from the provider's configuration (customReasoning).
	raw []byte
}

// size is what the chunk adds to a reply, for its budget: its text,
// reasoning and tool-call fragments, or the whole chunk when the
// reasoning is read from it raw (a configured field).
func (c *chatStreamChunk) size() int {
	if c.raw != nil {
		return len(c.raw)
	}
	n := 0
	for _, ch := range c.Choices {
		d := &ch.Delta
		n += len(d.Content) + len(d.ReasoningContent) + len(d.Reasoning)
		for _, tc := range d.ToolCalls {
			n += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	return n
}

type chatStreamChoice struct {
	Index        int64           `json:"index"`
	Delta        chatStreamDelta `json:"delta"`
	FinishReason string          `json:"finish_reason"`
}

type chatStreamDelta struct {
	Content          string              `json:"content"`
	ReasoningContent string              `json:"reasoning_content"` // llama.cpp, DeepSeek, vLLM
	Reasoning        string              `json:"reasoning"`         // Ollama, OpenRouter
	ToolCalls        []chatToolCallDelta `json:"tool_calls"`
}

type chatToolCallDelta struct {
	Index    int64  `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatStreamUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	// PromptTokensDetails is nil when the server does not report the
	// cached part of the prompt.
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// chatTimings is llama-server's timings object: cache_n prompt tokens
// reused from the slot's cache, prompt_n evaluated, predicted_n generated
// at predicted_per_second.
type chatTimings struct {
	CacheN             int64   `json:"cache_n"`
	PromptN            int64   `json:"prompt_n"`
	PredictedN         int64   `json:"predicted_n"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
}

// chatUsage is the call's Usage from the usage object and, when the
// server sent them, llama.cpp's timings, which win for the cache split:
// they are the server's own count.
func chatUsage(u *chatStreamUsage, t *chatTimings) Usage {
	var out Usage
	if u != nil {
		out = Usage{PromptTokens: int(u.PromptTokens), CompletionTokens: int(u.CompletionTokens), TotalTokens: int(u.TotalTokens)}
		if d := u.PromptTokensDetails; d != nil {
			out.CachedPromptTokens = int(d.CachedTokens)
			out.EvaluatedPromptTokens = max(0, out.PromptTokens-out.CachedPromptTokens)
			out.PromptCacheReported = true
		}
	}
	if t != nil {
		out.CachedPromptTokens, out.EvaluatedPromptTokens, out.PromptCacheReported = int(t.CacheN), int(t.PromptN), true
		if out.PromptTokens == 0 {
			out.PromptTokens = int(t.CacheN + t.PromptN)
		}
		if out.CompletionTokens == 0 {
			out.CompletionTokens = int(t.PredictedN)
		}
		if t.PredictedPerSecond > 0 {
			out.TokensPerSecond = t.PredictedPerSecond
		}
	}
	return out
}

// UnmarshalJSON decodes leniently (see decode).
func (c *chatStreamChunk) UnmarshalJSON(data []byte) error { return c.decode(data, true) }

// reasoning returns the reasoning text of choice i's delta. field is the
// configured field name; "" means the first non-empty of the two common ones.
func (c *chatStreamChunk) reasoning(i int, field string) string {
	d := &c.Choices[i].Delta
	switch field {
	case "":
		if d.ReasoningContent != "" {
			return d.ReasoningContent
		}
		return d.Reasoning
	case "reasoning_content":
		return d.ReasoningContent
	case "reasoning":
		return d.Reasoning
	}
	return customReasoning(c.raw, i, field)
}

// customReasoning reads a reasoning field of any name from choice i's delta
// in the raw chunk. Only deployments configured with an uncommon field name
// pay for this second decode; a value that is not a string is ignored.
func customReasoning(raw []byte, i int, field string) string {
	var chunk struct {
		Choices []struct {
			Delta map[string]json.RawMessage `json:"delta"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &chunk); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); !ok {
			return ""
		}
	}
	if i >= len(chunk.Choices) {
		return ""
	}
	var s string
	if v, ok := chunk.Choices[i].Delta[field]; ok && json.Unmarshal(v, &s) == nil {
		return s
	}
	return ""
}
