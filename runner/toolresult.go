package runner

// This file logs a tool's result. A subprocess tool (run_shell,
// typecheck, test) that ran is a tool success even when the command it
// ran failed, so its result also carries the command's outcome
// (event.ToolOutcome), and at log level standard its output is kept: whole
// when the command failed, cut to each stream's head and tail otherwise,
// so that every view can show what the command printed.

import (
	"encoding/json"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/tools"
)

// excerptKeep is the bytes of each output stream's head, and of its tail,
// an excerpt at log level standard keeps.
const excerptKeep = 1500

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
		p.Result, p.Excerpt = event.Excerpt(b, excerptKeep), true
	}
	r.emit(event.ToolResult, p)
}
