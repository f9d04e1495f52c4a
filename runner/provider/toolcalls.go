package provider

// Helpers shared by the wire formats: tool-call assembly and validation, and
// tool schemas.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// callAssembler collects streamed tool-call fragments. Fragments are keyed by
// the server's index (Chat Completions), item id (Responses) or content block
// index (Anthropic); calls keep the order in which they first appeared.
type callAssembler struct {
	calls []*pendingCall
	byKey map[string]*pendingCall
}

type pendingCall struct {
	id   string
	name string
	args strings.Builder
	// done holds authoritative final arguments when the server sends them
	// (Responses' function_call_arguments.done, output_item.done).
	done    string
	hasDone bool
}

// get returns the call under key, starting it if there is none.
func (a *callAssembler) get(key string) *pendingCall {
	if c, ok := a.byKey[key]; ok {
		return c
	}
	return a.start(key)
}

// lookup returns the call under key, or nil.
func (a *callAssembler) lookup(key string) *pendingCall {
	return a.byKey[key]
}

// start begins a new call under key and returns it. A call already there
// keeps its place among the calls but gets no more fragments (a server
// reused an index for a new call id).
func (a *callAssembler) start(key string) *pendingCall {
	if a.byKey == nil {
		a.byKey = map[string]*pendingCall{}
	}
	c := &pendingCall{}
	a.byKey[key] = c
	a.calls = append(a.calls, c)
	return c
}

// finish validates and returns the assembled calls. Empty arguments mean
// "{}"; arguments that are a JSON string holding a JSON object (double
// encoding, seen from some local servers) are unwrapped; anything that does
// not parse as JSON is a malformed reply.
func (a *callAssembler) finish() ([]ToolCall, error) {
	if len(a.calls) == 0 {
		return nil, nil
	}
	out := make([]ToolCall, 0, len(a.calls))
	for i, c := range a.calls {
		args := c.args.String()
		if c.hasDone {
			args = c.done
		}
		norm, err := normalizeArguments(args)
		if err != nil {
			return nil, &Error{
				Category: CategoryMalformed,
				Body:     boundBody([]byte(args)),
				Err:      fmt.Errorf("tool call %q: arguments are not valid JSON: %w", c.name, err),
			}
		}
		if c.name == "" {
			return nil, &Error{Category: CategoryMalformed, Body: boundBody([]byte(args)),
				Err: fmt.Errorf("tool call %d has no function name", i)}
		}
		id := c.id
		if id == "" {
			id = "call_" + strconv.Itoa(i)
		}
		out = append(out, ToolCall{ID: id, Name: c.name, Arguments: norm})
	}
	return out, nil
}

func normalizeArguments(args string) (string, error) {
	t := strings.TrimSpace(args)
	if t == "" {
		return "{}", nil
	}
	if !json.Valid([]byte(t)) {
		var v any
		err := json.Unmarshal([]byte(t), &v)
		if err == nil {
			err = fmt.Errorf("invalid JSON")
		}
		return "", err
	}
	if t[0] == '"' {
		var s string
		if json.Unmarshal([]byte(t), &s) == nil {
			s = strings.TrimSpace(s)
			if strings.HasPrefix(s, "{") && json.Valid([]byte(s)) {
				return s, nil
			}
		}
	}
	return t, nil
}

// schemaMap decodes a tool's JSON schema; an absent or non-object schema
// becomes the empty object schema (llama.cpp and OpenAI both need one).
func schemaMap(raw json.RawMessage) map[string]any {
	var m map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m != nil {
		if _, ok := m["type"]; !ok {
			m["type"] = "object"
		}
		return m
	}
	return map[string]any{"type": "object", "properties": map[string]any{}}
}

// argsValue is a tool call's arguments as a JSON value to embed in a
// request; unparsable arguments (an edited history) become {}.
func argsValue(args string) json.RawMessage {
	t := strings.TrimSpace(args)
	if t == "" || !json.Valid([]byte(t)) {
		return json.RawMessage("{}")
	}
	return json.RawMessage(t)
}
