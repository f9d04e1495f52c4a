package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/guildhall/guildhall/runner/event"
)

// HeadlessLine formats one event as a plain line for `guildhall run`. Every
// string that did not come from this program is sanitized. ok is false for
// events that print nothing.
func HeadlessLine(e event.Event) (line string, ok bool) {
	// One case per type, alike in shape: each decodes its own payload type.
	switch e.Type {
	case event.RunStarted:
		var p event.RunStartedPayload
		if e.Decode(&p) != nil {
			return "", false
		}
		s := fmt.Sprintf("run %s started (effort %s): %s", SanitizeLine(p.RunID), SanitizeLine(p.Effort), clip(p.Task, 100))
		if p.ContinuesFrom != "" {
			s += " (continues " + SanitizeLine(p.ContinuesFrom) + ")"
		}
		if p.WindowWarning != "" {
			s += " · ⚠ " + SanitizeLine(p.WindowWarning)
		}
		return s, true
	case event.RoleStart:
		var p event.RoleStartPayload
		if e.Decode(&p) != nil {
			return "", false
		}
		s := fmt.Sprintf("%s▶ %s started: %s", indent(p.Depth), SanitizeLine(p.RoleID), clip(p.Task, 90))
		if p.ModelRef != "" {
			// Only a named model is said: the model block's is the run's.
			s += " · on " + ModelLabel(p.Model, p.ModelRef)
		}
		return s, true
	case event.RoleFinished:
		var p event.RoleFinishedPayload
		if e.Decode(&p) != nil {
			return "", false
		}
		kind := ""
		if p.Error != nil {
			kind = p.Error.Kind
		}
		v := RoleVerdict(p.Status, kind)
		word := SanitizeLine(p.Status)
		if v.Word == OutcomeInterrupted {
			word, kind = OutcomeInterrupted, ""
		}
		s := fmt.Sprintf("%s%s %s %s: %s", indent(p.Depth), v.Glyph, SanitizeLine(p.RoleID), word, clip(p.Summary, 90))
		if kind != "" {
			s += " [" + SanitizeLine(kind) + "]"
		}
		return s, true
	case event.ToolCall:
		var p event.ToolCallPayload
		if e.Decode(&p) != nil || p.Tool == "agent" || p.Tool == "finish" {
			return "", false
		}
		return fmt.Sprintf("  %s → %s %s", SanitizeLine(p.RoleID), SanitizeLine(p.Tool), clip(compactJSON(p.Arguments), 80)), true
	case event.ToolResult:
		var p event.ToolResultPayload
		if e.Decode(&p) != nil || p.Tool == "agent" || p.Tool == "finish" {
			return "", false
		}
		return ToolResultLine(p), true
	case event.AskHuman:
		var p event.AskHumanPayload
		if e.Decode(&p) != nil {
			return "", false
		}
		return fmt.Sprintf("? %s asks: %s", SanitizeLine(p.RoleID), clip(p.Question, 200)), true
	case event.HumanAnswer:
		var p event.HumanAnswerPayload
		if e.Decode(&p) != nil {
			return "", false
		}
		return "  answered: " + clip(p.Answer, 100), true
	case event.ProviderFailure:
		var p event.ProviderFailurePayload
		if e.Decode(&p) != nil {
			return "", false
		}
		s := fmt.Sprintf("! provider %s (attempt %d)", SanitizeLine(p.Category), p.Attempt)
		if p.StatusCode != 0 {
			s += fmt.Sprintf(" HTTP %d", p.StatusCode)
		}
		if p.Message != "" {
			s += ": " + clip(p.Message, 200)
		}
		if p.Retrying {
			s += ", retrying"
		}
		return s, true
	case event.ToolCallsIgnored:
		var p event.ToolCallsIgnoredPayload
		if e.Decode(&p) != nil {
			return "", false
		}
		var tools []string
		for _, t := range p.Tools {
			tools = append(tools, fmt.Sprintf("%s ×%d", SanitizeLine(t.Tool), t.Count))
		}
		return fmt.Sprintf("! %s: %d tool calls after %s were not run (%s): %s", SanitizeLine(p.RoleID), p.Count, SanitizeLine(p.After),
			clip(strings.Join(tools, ", "), 120), clip(p.Reason, 120)), true
	case event.TextToolCalls:
		var p event.TextToolCallsPayload
		if e.Decode(&p) != nil {
			return "", false
		}
		return "! " + SanitizeLine(p.RoleID) + ": " + clip(p.Message, 400), true
	case event.Repetition:
		var p event.RepetitionPayload
		if e.Decode(&p) != nil {
			return "", false
		}
		return RepetitionLine(p), true
	case event.LLMUnavailable, event.ContextBudgetExceeded, event.UnknownTool, event.InvalidToolCall:
		var p event.FailurePayload
		if e.Decode(&p) != nil {
			return "", false
		}
		return fmt.Sprintf("! %s %s: %s", SanitizeLine(string(e.Type)), SanitizeLine(p.RoleID), clip(p.Message, 100)), true
	case event.Egress:
		var p event.EgressPayload
		if e.Decode(&p) != nil {
			return "", false
		}
		return EgressLine(p), true
	case event.MCPServer:
		var p event.MCPServerPayload
		if e.Decode(&p) != nil {
			return "", false
		}
		return MCPServerLine(p), true
	case event.RunStatus:
		var p event.RunStatusPayload
		if e.Decode(&p) != nil {
			return "", false
		}
		s := "run " + SanitizeLine(p.Status)
		if p.Reason != "" {
			s += ": " + clip(p.Reason, 100)
		}
		return s, true
	}
	return "", false
}

func indent(depth int) string {
	if depth > 6 {
		depth = 6
	}
	return strings.Repeat("  ", depth)
}

// clip sanitizes s onto one line and cuts it to n runes.
func clip(s string, n int) string {
	s = SanitizeLine(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func compactJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return s
	}
	return string(b)
}

// EgressLine is one egress attempt as a plain line: allowed or denied,
// the host and port, who asked (the role, through the sandbox's proxy or a
// web tool) and, when denied, why.
func EgressLine(p event.EgressPayload) string {
	mark, verdict := "  ⇄", "allowed"
	if !p.Allowed {
		mark, verdict = "  ⛔", "denied"
	}
	s := fmt.Sprintf("%s egress %s: %s:%d", mark, verdict, SanitizeLine(p.Host), p.Port)
	switch {
	case p.RoleID != "" && p.Via != "":
		s += " (" + SanitizeLine(p.RoleID) + " via " + SanitizeLine(p.Via) + ")"
	case p.Via != "":
		s += " (via " + SanitizeLine(p.Via) + ")"
	}
	if !p.Allowed && p.Reason != "" {
		s += ": " + clip(p.Reason, 120)
	}
	return s
}

// MCPServerLine is an MCP server's change of state as a plain line: a
// ready server with its tool count, what it left out and the granted
// tools it does not offer; a failed, exited or unresponsive one marked
// "!" with the reason. The banner of the TUI and the browser says the
// same. Every string is the deployment's or the server's: sanitized.
func MCPServerLine(p event.MCPServerPayload) string {
	name := SanitizeLine(p.Server)
	if p.State == "ready" {
		s := fmt.Sprintf("  mcp server %s ready: %d tools", name, p.Tools)
		if n := len(p.Skipped); n > 0 {
			s += fmt.Sprintf(" (%d left out: %s)", n, clip(strings.Join(p.Skipped, "; "), 160))
		}
		if len(p.Missing) > 0 {
			s += "; granted but not offered: " + clip(strings.Join(p.Missing, ", "), 160)
		}
		return s
	}
	return fmt.Sprintf("! mcp server %s %s: %s", name, SanitizeLine(p.State), clip(p.Message, 300))
}

// ToolResultLine is a tool result as a plain line, shown by the one
// outcome rule: "← test success", "← test ✗ failed: 4 passed, 2 failed ·
// exit 1", "← read_file ✗ not_found: message".
func ToolResultLine(p event.ToolResultPayload) string {
	s := fmt.Sprintf("  %s ← %s ", SanitizeLine(p.RoleID), SanitizeLine(p.Tool))
	v := ToolVerdict(p)
	switch {
	case p.Kind != "success" && v.Word == OutcomeInterrupted:
		s += v.Glyph + " interrupted"
	case p.Kind != "success":
		s += "✗ " + SanitizeLine(p.Kind)
	case v.Failed():
		return s + "✗ failed: " + SanitizeLine(v.Detail)
	default:
		s += "success"
		if v.Detail != "" {
			s += " · " + SanitizeLine(v.Detail)
		}
		return s
	}
	var r struct{ Message string }
	_ = json.Unmarshal(p.Result, &r)
	if r.Message != "" {
		s += ": " + clip(r.Message, 80)
	}
	return s
}

// RepetitionLine says that a role repeated itself, and what was done.
func RepetitionLine(p event.RepetitionPayload) string {
	what := "the same reply"
	if p.Tool != "" {
		what = "the same " + SanitizeLine(p.Tool) + " call"
	}
	did := "told to change course"
	if p.Action == "stopped" {
		did = "stopped (loop_detected)"
	}
	return fmt.Sprintf("! %s sent %s %d times in a row: %s", SanitizeLine(p.RoleID), what, p.Count, did)
}

// ModelLabel names the model a role instance ran on: the model's name,
// with the deployment's name for it when it is one of the named models
// ("qwen-7b (fast)"), sanitised. "" when neither is known.
func ModelLabel(model, ref string) string {
	model, ref = SanitizeLine(model), SanitizeLine(ref)
	switch {
	case ref == "":
		return model
	case model == "" || model == ref:
		return ref
	}
	return model + " (" + ref + ")"
}
