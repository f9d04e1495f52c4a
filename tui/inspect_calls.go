package tui

// The inspector on a tool node lists that node's calls: the calls its own
// caller made (a tool has a node under each role that called it), newest
// first, each with its outcome by the one rule (render.OutcomeVerdict)
// and the head and tail of what its commands printed. Another role's
// calls of the same tool are on that role's node.

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
)

const (
	// inspectCalls is how many calls the list shows.
	inspectCalls = 6
	// outputLines is how many lines of a stream's head, and of its tail,
	// a call shows.
	outputLines = 4
)

// toolNodeCalls is the list for the tool node key, at inner cells.
func (m *Model) toolNodeCalls(key string, inner int) []string {
	v := m.view
	n := v.flowNode(key)
	if n == nil || len(n.ops) == 0 {
		return nil
	}
	mod := v.model
	who := "this caller"
	if i := strings.IndexByte(key, 0); i >= 0 {
		if p, ok := mod.Participant(key[:i]); ok {
			who = m.res.ParticipantLabel(p)
		}
	}
	head := fmt.Sprintf("Calls by %s: %d", who, len(n.ops))
	if n.failed > 0 {
		head += fmt.Sprintf(" (%d failed)", n.failed)
	}
	lines := []string{"", styleTitle.Render(clip(head, inner))}
	for k := len(n.ops) - 1; k >= 0 && k >= len(n.ops)-inspectCalls; k-- {
		call := mod.Operations[n.ops[k]]
		vd := callVerdict(mod, call)
		state := vd.Text()
		if call.Open {
			state = "… running"
		}
		line := fmt.Sprintf("#%d %s", k+1, state)
		if call.Metrics.ElapsedSeconds > 0 {
			line += fmt.Sprintf(" · %.1fs", call.Metrics.ElapsedSeconds)
		}
		lines = append(lines, "  "+clip(line, inner-2))
		if call.ClosedBy == "" {
			continue
		}
		raw, _, ok := mod.OperationPayload(call.ClosedBy)
		if !ok {
			continue
		}
		for _, l := range commandOutput(raw, callCommand(mod, call)) {
			lines = append(lines, "    "+clip(l, inner-4))
		}
	}
	if hidden := len(n.ops) - inspectCalls; hidden > 0 {
		lines = append(lines, styleFaint.Render(fmt.Sprintf("  … %d earlier call%s", hidden, plural(hidden))))
	}
	return lines
}

// callCommand is the command a run_shell call's arguments name.
func callCommand(mod *render.Model, call render.Operation) string {
	raw, kind, ok := mod.OperationPayload(call.ID)
	if !ok || kind != "arguments" {
		return ""
	}
	var a struct{ Command string }
	_ = json.Unmarshal([]byte(raw), &a)
	return a.Command
}

// commandOutput is a tool result as short plain lines: for each command,
// the command (its own, else command) and the head and tail of its stdout
// and stderr; for an error, its kind and message. Every line is
// sanitized.
func commandOutput(raw, command string) []string {
	entries, ok := event.Commands(json.RawMessage(raw))
	if !ok {
		var r struct{ Kind, Message string }
		if json.Unmarshal([]byte(raw), &r) == nil && r.Kind != "" && r.Kind != "success" {
			return []string{render.SanitizeLine(r.Kind + ": " + r.Message)}
		}
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Command == "" && len(entries) == 1 {
			e.Command = command
		}
		if e.Command != "" {
			out = append(out, "$ "+render.SanitizeLine(e.Command))
		}
		out = append(out, streamLines("stdout", e.Stdout)...)
		out = append(out, streamLines("stderr", e.Stderr)...)
	}
	return out
}

// streamLines is one stream's head and tail.
func streamLines(name, s string) []string {
	s = strings.TrimRight(s, "\n")
	if strings.TrimSpace(s) == "" {
		return nil
	}
	all := strings.Split(s, "\n")
	out := []string{name + ":"}
	if len(all) <= 2*outputLines+1 {
		for _, l := range all {
			out = append(out, "  "+render.SanitizeLine(l))
		}
		return out
	}
	for _, l := range all[:outputLines] {
		out = append(out, "  "+render.SanitizeLine(l))
	}
	out = append(out, fmt.Sprintf("  … %d lines …", len(all)-2*outputLines))
	for _, l := range all[len(all)-outputLines:] {
		out = append(out, "  "+render.SanitizeLine(l))
	}
	return out
}
