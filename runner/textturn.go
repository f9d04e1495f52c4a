package runner

// This file decides what a reply without tool calls through the API
// means. When its content writes tool calls as text (textcalls.go), they
// are run if they can be read without doubt, name tools the role holds
// and pass their schemas; otherwise the model is told, at most
// maxTextCallCorrections times, to call tools through the API, and then
// the role ends invalid_tool_call. Anything else is the original's
// implicit finish: the content is the summary, a success only because
// complete() has already turned a reply with nothing to say into an empty
// reply, retried and then finished as empty_reply.

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
)

// maxTextCallCorrections is how many times a role instance is told to call
// tools through the API before it ends invalid_tool_call.
const maxTextCallCorrections = 2

// textTurn handles a reply whose content wrote tool calls as text. done
// is set when the role finished.
func (r *Run) textTurn(f *Frame, resp *reply) (event.Card, bool) {
	t := resp.text
	calls, problem := r.admitTextCalls(f, t)
	r.noteTextCalls(f, t.Format, problem)
	if problem == "" {
		// The history holds the calls as calls: the model's next request
		// shows them in the template's own format, its own prose beside.
		f.History = append(f.History, provider.Message{Role: "assistant", Content: t.Prose, Reasoning: resp.Reasoning, ToolCalls: calls})
		if card, done := r.repetitionCheck(f, t.Prose, calls); done {
			return card, true
		}
		f.Pending = &PendingTurn{Calls: calls, AssistantText: t.Prose, AsText: t.Format}
		f.TextCallUnheeded = false
		return event.Card{}, false
	}
	f.History = append(f.History, provider.Message{Role: "assistant", Content: resp.Content, Reasoning: resp.Reasoning})
	if f.TextCallCorrections >= maxTextCallCorrections {
		msg := fmt.Sprintf("the reply wrote its tool calls as text (%s) after %d reminders to call tools through the API; they were not run: %s",
			textFormatName(t.Format), maxTextCallCorrections, problem)
		r.emit(event.InvalidToolCall, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Message: msg})
		r.emit(event.ImplicitFinish, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Message: msg, Status: "error", Kind: "invalid_tool_call"})
		return errorCard("invalid_tool_call", "The model kept writing its tool calls as text instead of calling tools through the API, so they were not run ("+problem+")."), true
	}
	f.TextCallCorrections++
	f.TextCallUnheeded = true
	f.History = append(f.History, provider.Message{Role: "user", Content: textCallCorrection(t.Format, problem)})
	return event.Card{}, false
}

// textCallCorrection is the tool-style message that tells the model its
// calls were not run.
func textCallCorrection(format, problem string) string {
	b, _ := json.Marshal(map[string]string{"kind": "invalid_tool_call",
		"message": fmt.Sprintf("Call tools through the API; this reply contained a tool call as text (%s) and it was not run: %s. "+
			"Call the tool again as a tool call, or reply in plain words without tool calls to finish.", textFormatName(format), problem)})
	return textCallNotice + string(b)
}

// textCallNotice heads the reminder.
const textCallNotice = "[Platform notice — tool call as text] "

// admitTextCalls turns calls written as text into tool calls when each
// names a tool the role may call, with arguments its schema accepts. It
// returns why not otherwise. An MCP tool's schema is its server's, checked
// when the call is dispatched.
func (r *Run) admitTextCalls(f *Frame, t textCalls) ([]provider.ToolCall, string) {
	if t.Problem != "" {
		return nil, t.Problem
	}
	if quotedTextCall(f, t) {
		return nil, "a tool call written this way is also in what this role read (a file, a tool result, its task), so it may be quoted, not meant"
	}
	role := r.opts.Guild.Roles[f.Role]
	calls := make([]provider.ToolCall, 0, len(t.Calls))
	for i, c := range t.Calls {
		if _, _, ok := parseMCPName(c.Name); ok {
			if !role.GrantsMCP(c.Name) {
				return nil, fmt.Sprintf("%q is not one of this role's tools", c.Name)
			}
		} else {
			if _, declared := r.opts.Guild.Manifests[c.Name]; !declared || !role.Grants(c.Name) {
				return nil, fmt.Sprintf("%q is not one of this role's tools", c.Name)
			}
			s := r.schema(c.Name)
			if s == nil {
				return nil, fmt.Sprintf("the %s tool's parameter schema is invalid", c.Name)
			}
			if _, msg := validateArgs(s, c.Arguments); msg != "" {
				return nil, fmt.Sprintf("the %s call's %s", c.Name, msg)
			}
		}
		calls = append(calls, provider.ToolCall{ID: fmt.Sprintf("textcall-%d", f.ToolCalls+i+1), Name: c.Name, Arguments: c.Arguments})
	}
	return calls, ""
}

// noteTextCalls tells the operator, once per run, that the endpoint
// returns tool calls as text, and the usual cause.
func (r *Run) noteTextCalls(f *Frame, format, problem string) {
	if r.textNoted {
		return
	}
	r.textNoted = true
	p := event.TextToolCallsPayload{Role: f.Role, RoleID: f.RoleID, Format: format, Executed: problem == "", Problem: problem}
	what := "Guildhall read them and ran them"
	if problem != "" {
		what = "Guildhall did not run them (" + problem + ") and told the model to call tools through the API"
	}
	p.Message = fmt.Sprintf("The model endpoint returns tool calls as text (%s) instead of through the API; %s. "+
		"The usual cause: llama-server started without --jinja, or a chat template without tools.", textFormatName(format), what)
	r.emit(event.TextToolCalls, p)
}

// implicitFinish ends a role with the content of a reply that made no
// tool call: complete() let it through only because it says something. A
// role that was told its calls written as text were not run, and then
// answered in words without calling any tool, did not do what it
// described: not a success.
func (r *Run) implicitFinish(f *Frame, content string) event.Card {
	if len(r.stack) > 0 && f == r.stack[0] {
		r.entryImplicit = true
	}
	if f.TextCallUnheeded {
		msg := "after a reminder to call tools through the API, the reply answered in words without calling any tool; the calls it wrote as text were never run"
		r.emit(event.ImplicitFinish, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Message: msg, Status: "error", Kind: "invalid_tool_call"})
		return errorCard("invalid_tool_call", "The model wrote its tool calls as text, was told to call tools through the API, and then answered without calling any: what it described was not done.")
	}
	r.emit(event.ImplicitFinish, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Message: "reply had no tool calls; its content is the summary", Status: "success"})
	return event.Card{Status: "success", Summary: content}
}

// quotedTextCall reports whether what the role read holds a tool call
// like t's: the marker of its format, or a call's name as a JSON string
// beside an arguments key (as written, or as a tool result's JSON encodes
// it). The workspace is untrusted: a file that holds a call written as
// text must not become a call because the model repeated it in its reply.
// The role's own replies and the platform's reminders are not what it
// read.
func quotedTextCall(f *Frame, t textCalls) bool {
	var needles []string
	switch t.Format {
	case textHermes:
		needles = []string{"<tool_call>", `\u003ctool_call\u003e`}
	case textMistral:
		needles = []string{"[TOOL_CALLS]"}
	case textLlama:
		needles = []string{"<|python_tag|>", `\u003c|python_tag|\u003e`}
	}
	for _, m := range f.History {
		if m.Role == "assistant" || m.Role == "system" || strings.HasPrefix(m.Content, textCallNotice) {
			continue
		}
		for _, n := range needles {
			if strings.Contains(m.Content, n) {
				return true
			}
		}
		if namesACall(m.Content, t.Calls) {
			return true
		}
	}
	return false
}

// namesACall reports whether s holds one of calls' names as a JSON string
// and an arguments or parameters key.
func namesACall(s string, calls []textCall) bool {
	if !strings.Contains(s, `arguments"`) && !strings.Contains(s, `parameters"`) &&
		!strings.Contains(s, `arguments\"`) && !strings.Contains(s, `parameters\"`) {
		return false
	}
	for _, c := range calls {
		if strings.Contains(s, `"`+c.Name+`"`) || strings.Contains(s, `\"`+c.Name+`\"`) {
			return true
		}
	}
	return false
}
