package tui

// The inspector: the selected flow node or sequence row, its counts,
// times and outcome by the one rule (render.OutcomeVerdict), a tool
// node's own caller's calls (inspect_calls.go), and the operation's body.

import (
	"fmt"
	"strings"
	"time"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
)

func (m *Model) inspectorBox(w int) []string {
	v := m.view
	mod := v.model
	inner := w - 4
	var lines []string
	var opIdx = -1
	title := "Inspector"
	if st := m.inspector; st.pid != "" {
		p, ok := mod.Participant(st.pid)
		if !ok {
			return boxed(title, []string{"Nothing selected."}, w)
		}
		title = m.res.ParticipantLabel(p)
		lines = append(lines, kv("Kind", string(p.Kind)), kv("Name", render.SanitizeLine(p.Role)))
		if p.RoleID != "" {
			lines = append(lines, kv("Instance", render.SanitizeLine(p.RoleID)))
		}
		if d := m.res.ParticipantDescription(p); d != "" {
			lines = append(lines, kv("About", d))
		}
		lines = append(lines, kv("Invocations", fmt.Sprint(p.Invocations)))
		if p.Model != "" {
			lines = append(lines, kv("Model", p.Model))
		}
		if p.Turns > 0 {
			lines = append(lines, kv("Model turns", fmt.Sprint(p.Turns)))
		}
		lines = append(lines, kv("Tokens", metricsLine(p.Metrics)))
		if i, ok := v.nodeCall(st.key); ok {
			opIdx = i
		}
		if p.Kind == render.KindTool {
			lines = append(lines, m.toolNodeCalls(st.key, inner)...)
		}
	} else {
		opIdx = st.op
	}
	if opIdx >= 0 && opIdx < len(mod.Operations) {
		op, _ := mod.OperationDetails(mod.Operations[opIdx].ID)
		src, _ := mod.Participant(op.Source)
		dst, _ := mod.Participant(op.Destination)
		if m.inspector.pid == "" {
			title = m.res.OperationLabel(op, src, dst)
			lines = append(lines, kv("Kind", string(op.Kind)), kv("From", m.res.ParticipantLabel(src)), kv("To", m.res.ParticipantLabel(dst)))
		} else {
			lines = append(lines, "", styleTitle.Render("Latest call: ")+m.res.OperationLabel(op, src, dst))
		}
		lines = append(lines, kv("Started", fmtTime(op.StartedAt)))
		if op.SettledAt != nil {
			lines = append(lines, kv("Settled", fmtTime(*op.SettledAt)))
		}
		lines = append(lines, kv("State", string(op.Lifecycle)+openWord(op)))
		vd := callVerdict(mod, op)
		if vd.Glyph != "" {
			lines = append(lines, kv("Outcome", vd.Text()))
		}
		if op.ErrorKind != "" && op.ErrorKind != vd.Detail {
			lines = append(lines, kv("Error kind", render.SanitizeLine(op.ErrorKind)))
		}
		if op.Kind == render.OpCall {
			lines = append(lines, kv("This call", metricsLine(op.Metrics)))
		}
		for _, a := range op.Annotations {
			lines = append(lines, kv("Note", annotationText(a)))
		}
		lines = append(lines, m.opBody(op, m.inspector.json, inner)...)
	}
	body := pager(lines, m.inspector.scroll, m.overlayBodyH()-1)
	keys := []string{"esc", "close", "↑↓", "move", "pgup pgdn", "scroll", "t", "transcript", "y", "copy"}
	if opIdx >= 0 && opIdx < len(mod.Operations) {
		if _, _, ok := mod.OperationPayload(mod.Operations[opIdx].ID); ok {
			mode := "JSON"
			if m.inspector.json {
				mode = "text"
			}
			keys = append(keys, "J", mode)
		}
	}
	keys = append(keys, "Y", "copy raw")
	body = append(body, hints(inner, keys...))
	return boxed(title, body, w)
}

// opBody is an operation's details: a tool call's arguments or a tool's
// result as their text (J shows the JSON), anything else as the details
// Markdown.
func (m *Model) opBody(op render.Operation, asJSON bool, inner int) []string {
	if raw, kind, ok := m.view.model.OperationPayload(op.ID); ok && !asJSON {
		title := "Result"
		if kind == "arguments" {
			title = "Arguments"
		}
		text := resultText(raw)
		if strings.TrimSpace(text) == "" {
			return nil
		}
		out := []string{"", styleTitle.Render(title)}
		for _, l := range strings.Split(wrapIndented(render.Sanitize(text), inner-2), "\n") {
			out = append(out, "  "+l)
		}
		return out
	}
	if strings.TrimSpace(op.Details) == "" {
		return nil
	}
	return append([]string{"", styleTitle.Render("Details")}, m.markdown(op.Details, inner)...)
}

// annotationText is one note on an operation, as plain sanitised text.
func annotationText(a render.Annotation) string {
	switch a.Type {
	case event.ToolCallsIgnored:
		return render.SanitizeLine(fmt.Sprintf("%d tool calls after %s in the same reply were not run", a.Count, a.Tool))
	case event.TextToolCalls:
		return render.SanitizeLine("tool calls written as text (" + a.Category + ")")
	case event.Repetition:
		what := "the same reply"
		if a.Tool != "" {
			what = "the same " + a.Tool + " call"
		}
		return render.SanitizeLine(fmt.Sprintf("%s %d times in a row (%s)", what, a.Count, a.Category))
	}
	return render.SanitizeLine(string(a.Type) + " " + a.Category + " " + a.Tool)
}

func metricsLine(mt render.Metrics) string {
	s := compactTokens(mt.Tokens) + " tokens"
	if mt.CachedPromptTokens > 0 || mt.CacheReported {
		s += " · " + compactTokens(mt.CachedPromptTokens) + " cached"
	}
	if mt.CacheReported {
		s += " · " + compactTokens(mt.EvaluatedPromptTokens) + " evaluated"
	}
	if mt.ElapsedSeconds > 0 {
		s += fmt.Sprintf(" · %.1fs", mt.ElapsedSeconds)
	}
	if mt.TokensPerSecond > 0 {
		s += " · " + tokensPerSecond(mt.TokensPerSecond) + " (latest reply)"
	}
	return s
}

func openWord(op render.Operation) string {
	if op.Open {
		return ", open"
	}
	return ""
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000 UTC")
}
