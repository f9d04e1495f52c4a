package runner

// This file logs a tool's result. A subprocess tool (run_shell,
// typecheck, test) that ran is a tool success even when the command it
// ran failed, so its result also carries the command's outcome
// (event.ToolOutcome), and at log level standard its output is kept: whole
// when the command failed, cut to each stream's head and tail otherwise,
// so that every view can show what the command printed.

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/tools"
)

// excerptHead and excerptTail are the bytes of each output stream an
// excerpt keeps.
const (
	excerptHead = 1500
	excerptTail = 1500
)

// subprocessTool reports whether a tool's result is a command's
// {exitCode, stdout, stderr} (or an array of them).
func subprocessTool(name string) bool {
	switch name {
	case "run_shell", "typecheck", "test":
		return true
	}
	return false
}

// emitToolResult logs a tool's result: untruncated at log level full and
// for a failure, and, for a subprocess tool, with its outcome.
func (r *Run) emitToolResult(f *Frame, call provider.ToolCall, res tools.Result, elapsed time.Duration) {
	p := event.ToolResultPayload{Role: f.Role, RoleID: f.RoleID, Tool: call.Name, CallID: call.ID, Kind: res.Kind, ElapsedMs: elapsed.Milliseconds()}
	full := r.opts.LogLevel == LogFull || res.Failed()
	if !full && !subprocessTool(call.Name) {
		r.emit(event.ToolResult, p)
		return
	}
	b, err := json.Marshal(res)
	if err != nil {
		r.emit(event.ToolResult, p)
		return
	}
	p.Outcome = event.OutcomeOf(b)
	switch {
	case full || p.Outcome != nil && p.Outcome.Failed:
		p.Result = b
	case p.Outcome != nil:
		p.Result, p.Excerpt = excerptResult(b), true
	}
	r.emit(event.ToolResult, p)
}

// excerptResult cuts the stdout and stderr of each command in a
// subprocess tool's result to their head and tail.
func excerptResult(b []byte) json.RawMessage {
	var r struct {
		Kind string          `json:"kind"`
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(b, &r) != nil {
		return nil
	}
	cut := func(e map[string]any) {
		for _, k := range []string{"stdout", "stderr"} {
			if s, ok := e[k].(string); ok {
				e[k] = headTail(s)
			}
		}
	}
	var data any
	var one map[string]any
	var many []map[string]any
	switch {
	case json.Unmarshal(r.Data, &one) == nil:
		cut(one)
		data = one
	case json.Unmarshal(r.Data, &many) == nil:
		for _, e := range many {
			cut(e)
		}
		data = many
	default:
		return nil
	}
	out, err := json.Marshal(map[string]any{"kind": r.Kind, "data": data})
	if err != nil {
		return nil
	}
	return out
}

// headTail keeps the start and the end of s, saying how much was left
// out between them.
func headTail(s string) string {
	if len(s) <= excerptHead+excerptTail+100 {
		return s
	}
	head := s[:excerptHead]
	for len(head) > 0 && !utf8.RuneStart(s[len(head)]) {
		head = head[:len(head)-1]
	}
	from := len(s) - excerptTail
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return head + fmt.Sprintf("\n… [%d bytes not kept at log level standard] …\n", from-len(head)) + s[from:]
}
