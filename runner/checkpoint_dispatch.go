package runner

// A tool call that changes something is never run twice because of a
// crash. Before such a call runs, the checkpoint records that dispatch
// has reached it (PendingTurn.Started). A resume that finds it so reads
// the log for what became of the call: never logged as started, it runs
// now; started and finished, its logged result is delivered; started and
// not finished (the process was killed while it ran), it is not run again
// and the model gets a result of kind cut_by_crash saying so, to check
// what the call did and decide. Tools that only read are left out of
// this: a resume may simply run them again.

import (
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/tools"
)

// KindCutByCrash is the result of a call a crash cut off: it may have
// partly run, and it was not run again.
const KindCutByCrash = "cut_by_crash"

// rerunnable are the built-in tools a resume may run again after a crash
// cut them: they read, search or ask, and change nothing. Every other tool
// (commands, checkers, file and plan writes, git changes, MCP tools, a
// guild's own) is recorded before it runs.
var rerunnable = map[string]bool{
	"read_file": true, "read_file_partial": true, "list_directory": true, "glob_files": true,
	"search_text": true, "repo_map": true, "read_plan": true, "read_run_log": true, "search_run_log": true,
	"git_changes_since_base": true, "git_uncommitted_changes": true, "fetch_url": true, "web_search": true,
	"ask_human": true, "context_info": true, "list_role_messages": true, "read_message_window": true,
	"search_role_blocks": true, "recent_role_tool_calls": true,
}

// markDispatch records in the checkpoint that the call at the pending
// turn's Next is about to run, unless running it twice is harmless.
// continueTurn clears the mark once the call's result is in the history.
func (r *Run) markDispatch(f *Frame, call provider.ToolCall) {
	if rerunnable[call.Name] || r.handlerDepth > 0 || f.Pending == nil {
		return
	}
	f.Pending.Started = true
	r.checkpoint()
}

// dispatchOutcome is what the log says of a started call.
type dispatchOutcome struct {
	// logged: a tool_call event for it is in the log (it began).
	logged bool
	// finished: its tool_result too, with that result.
	finished bool
	result   event.ToolResultPayload
}

// startedOutcome reads the backlog for the leaf's started call: a
// tool_call of it after the role's last model reply, and a tool_result of
// it after that.
func startedOutcome(backlog []event.Event, f *Frame) dispatchOutcome {
	p := f.Pending
	if p == nil || !p.Started || p.Next >= len(p.Calls) {
		return dispatchOutcome{}
	}
	call := p.Calls[p.Next]
	var out dispatchOutcome
	for _, e := range backlog {
		switch e.Type {
		case event.LLMCall:
			var c event.LLMCallPayload
			if e.Decode(&c) == nil && c.RoleID == f.RoleID {
				out = dispatchOutcome{}
			}
		case event.ToolCall:
			// Later calls of the turn (reads, which are not recorded before
			// they run) may follow it: they leave its outcome as it was.
			var c event.ToolCallPayload
			if e.Decode(&c) == nil && c.RoleID == f.RoleID && c.CallID == call.ID && c.Tool == call.Name && c.Arguments == call.Arguments {
				out = dispatchOutcome{logged: true}
			}
		case event.ToolResult:
			var res event.ToolResultPayload
			if out.logged && e.Decode(&res) == nil && res.RoleID == f.RoleID && res.CallID == call.ID && res.Tool == call.Name {
				out.finished, out.result = true, res
			}
		}
	}
	return out
}

// settleStarted delivers the result of a call a crash stopped at, as
// startedOutcome found it, and moves the turn past it; a call that never
// began is left to run.
func (r *Run) settleStarted(f *Frame, o dispatchOutcome) {
	p := f.Pending
	if p == nil || !p.Started || p.Next >= len(p.Calls) {
		return
	}
	p.Started = false
	if !o.logged {
		return
	}
	call := p.Calls[p.Next]
	// The checkpoint was written just before the call's tool_call event,
	// so its budget totals do not count the call: it began all the same.
	r.budget.note(event.ToolCall, event.ToolCallPayload{Role: f.Role, RoleID: f.RoleID, Tool: call.Name, CallID: call.ID})
	var content string
	switch {
	case o.finished && len(o.result.Result) > 0:
		content = r.truncate(string(o.result.Result))
	case o.finished:
		// The log kept only its kind (log level standard).
		content = r.conversationText(tools.Result{Kind: o.result.Kind, Data: map[string]string{
			"note": "this call finished just before Guildhall stopped, and was not run again; its output was not kept (log level standard)"}})
	default:
		res := tools.Fail(KindCutByCrash, "Guildhall was stopped (killed or crashed) while this call ran. It may have partly run — "+
			"a command may have started, files may have changed — and it was not run again. Check what it did before you run it again.")
		r.emitToolResult(f, call, res, 0)
		content = r.conversationText(res)
	}
	f.History = append(f.History, provider.Message{Role: "tool", Content: content, ToolCallID: call.ID, ToolName: call.Name})
	f.ToolCalls++
	p.Next++
}
