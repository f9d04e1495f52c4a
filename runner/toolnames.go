package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/guildhall/guildhall/runner/mcp"
	"github.com/guildhall/guildhall/runner/provider"
)

// Providers accept function names of 1 to 64 letters, digits, '_' and
// '-' (OpenAI's and Anthropic's rule); an MCP tool is server.tool in the
// guild and the logs, so the model is sent server__tool instead, and its
// calls are mapped back before anything records them. Only the request
// and the reply on the wire carry the provider's names.
const maxWireName = 64

// wireSafe reports whether every provider accepts name as it is.
func wireSafe(name string) bool {
	if name == "" || len(name) > maxWireName {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// wireBase is name with the first '.' (between server and tool) written
// "__" and every other character a provider refuses written '_'.
func wireBase(name string) string {
	var b strings.Builder
	first := true
	for _, r := range name {
		switch {
		case r == '.' && first:
			b.WriteString("__")
			first = false
		case r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// wireHashed is a name that cannot collide: a cut of wireBase and a hash
// of the full name, 64 characters at most.
func wireHashed(name string) string {
	sum := sha256.Sum256([]byte(name))
	base := wireBase(name)
	if len(base) > maxWireName-9 {
		base = base[:maxWireName-9]
	}
	return base + "_" + hex.EncodeToString(sum[:4])
}

// wireNames maps the names of one request's tools to and from the names
// its provider is sent.
type wireNames struct {
	to, from map[string]string
}

// newWireNames maps every unsafe name of specs to a safe one no other
// tool of the request has.
func newWireNames(specs []provider.ToolSpec) *wireNames {
	used := map[string]bool{}
	var unsafe []string
	for _, t := range specs {
		if wireSafe(t.Name) {
			used[t.Name] = true
		} else {
			unsafe = append(unsafe, t.Name)
		}
	}
	if len(unsafe) == 0 {
		return nil
	}
	w := &wireNames{to: map[string]string{}, from: map[string]string{}}
	for _, name := range unsafe {
		wire := wireBase(name)
		if used[wire] || !wireSafe(wire) {
			wire = wireHashed(name)
		}
		used[wire] = true
		w.to[name], w.from[wire] = wire, name
	}
	return w
}

// wire is name as the provider is sent it. A name no tool of the request
// has (a call in the history to a tool no longer offered) gets its base
// form, which is only ever read back by the model.
func (w *wireNames) wire(name string) string {
	if v, ok := w.to[name]; ok {
		return v
	}
	if wireSafe(name) {
		return name
	}
	return wireBase(name)
}

// toWire is req with the provider's names, the history copied where it
// changes (the frame's own history is never touched).
func (w *wireNames) toWire(req provider.Request) provider.Request {
	if w == nil {
		return req
	}
	tools := make([]provider.ToolSpec, len(req.Tools))
	for i, t := range req.Tools {
		t.Name = w.wire(t.Name)
		tools[i] = t
	}
	req.Tools = tools
	msgs := req.Messages
	copied := false
	for i, m := range msgs {
		changed := m.ToolName != "" && w.wire(m.ToolName) != m.ToolName
		for _, tc := range m.ToolCalls {
			changed = changed || w.wire(tc.Name) != tc.Name
		}
		if !changed {
			continue
		}
		if !copied {
			msgs = append([]provider.Message(nil), msgs...)
			copied = true
		}
		if m.ToolName != "" {
			m.ToolName = w.wire(m.ToolName)
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]provider.ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				tc.Name = w.wire(tc.Name)
				calls[j] = tc
			}
			m.ToolCalls = calls
		}
		msgs[i] = m
	}
	req.Messages = msgs
	return req
}

// fromWire puts the guild's names back on a reply's tool calls. A call
// of server__tool that no offered tool maps (the server went down since
// it was last offered) is read as server.tool when server is declared, so
// that its answer says what became of the server.
func (w *wireNames) fromWire(resp *provider.Response, declared map[string]mcp.Config) {
	if resp == nil {
		return
	}
	for i, tc := range resp.ToolCalls {
		resp.ToolCalls[i].Name = w.local(tc.Name, declared)
	}
}

// local is the guild's name of a tool the provider was sent as wire (a
// call in a reply, or one its content wrote as text).
func (w *wireNames) local(wire string, declared map[string]mcp.Config) string {
	if w != nil {
		if name, ok := w.from[wire]; ok {
			return name
		}
	}
	if server, tool, ok := strings.Cut(wire, "__"); ok && tool != "" {
		if _, known := declared[server]; known {
			return server + "." + tool
		}
	}
	return wire
}
