package tui

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
)

// transcriptEntry is one message of a role instance's transcript. title is
// program text; body is untrusted and rendered as Markdown when prose is
// set, else as sanitized preformatted text.
type transcriptEntry struct {
	title string
	body  string
	prose bool
}

// transcript collects one role instance's messages from its events: the
// messages sent to the model, its replies and reasoning when logged, and
// the results of its tool calls.
type transcript struct{ entries []transcriptEntry }

func (t *transcript) add(e event.Event, roleID string) {
	switch e.Type {
	case event.LLMCall:
		var p event.LLMCallPayload
		if e.Decode(&p) != nil || p.RoleID != roleID {
			return
		}
		for _, m := range p.Sent {
			switch m.Role {
			case "assistant", "tool":
				// Replies come from Received; results from tool_result.
			case "system":
				t.entries = append(t.entries, transcriptEntry{title: "System prompt", body: m.Content, prose: true})
			default:
				t.entries = append(t.entries, transcriptEntry{title: "Sent (" + m.Role + ")", body: m.Content, prose: true})
			}
		}
		if r := p.Received; r != nil {
			if r.Reasoning != "" {
				t.entries = append(t.entries, transcriptEntry{title: "Reasoning", body: r.Reasoning})
			}
			if r.Content != "" {
				t.entries = append(t.entries, transcriptEntry{title: "Reply", body: r.Content, prose: true})
			}
			for _, c := range r.ToolCalls {
				t.entries = append(t.entries, transcriptEntry{title: "Tool call " + c.Name, body: prettyJSON(c.Arguments)})
			}
		}
		if len(p.Sent) == 0 && p.Received == nil {
			t.entries = append(t.entries, transcriptEntry{title: "Model call (bodies not logged at this log level)"})
		}
	case event.ToolResult:
		var p event.ToolResultPayload
		if e.Decode(&p) != nil || p.RoleID != roleID {
			return
		}
		t.entries = append(t.entries, transcriptEntry{title: "Result of " + p.Tool + " · " + p.Kind, body: prettyJSON(string(p.Result))})
	case event.AskHuman:
		var p event.AskHumanPayload
		if e.Decode(&p) != nil || p.RoleID != roleID {
			return
		}
		t.entries = append(t.entries, transcriptEntry{title: "Question for the operator", body: p.Question, prose: true})
	}
}

func prettyJSON(s string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(s), "", "  ") == nil {
		return buf.String()
	}
	return s
}

// transcriptView is the open transcript: windowed over its entries, each
// rendered only when it comes into view and cached for the width.
type transcriptView struct {
	runID, roleID, label string
	entries              []transcriptEntry
	width                int
	rendered             map[int][]string
	top                  int // entry index at the top of the window
	topLine              int // line within that entry
	search               editor
	searching            bool
	query                string
	note                 string
	loaded               bool
}

func (t *transcriptView) lines(i int, md *render.MarkdownRenderer) []string {
	if l, ok := t.rendered[i]; ok {
		return l
	}
	e := t.entries[i]
	out := []string{styleTitle.Render(render.SanitizeLine(e.title))}
	if strings.TrimSpace(e.body) != "" {
		var body string
		if e.prose {
			body = strings.TrimRight(md.Render(e.body, t.width-2), "\n")
		} else {
			body = wrapPlain(render.Sanitize(e.body), t.width-2)
		}
		for _, l := range strings.Split(body, "\n") {
			out = append(out, "  "+l)
		}
	}
	out = append(out, "")
	t.rendered[i] = out
	return out
}

// prepare renders what the window needs, from the top entry on.
func (t *transcriptView) prepare(width, height int, md *render.MarkdownRenderer) {
	if width != t.width || t.rendered == nil {
		t.width, t.rendered = width, map[int][]string{}
		t.topLine = 0
	}
	n := 0
	for i := t.top; i < len(t.entries) && n < height; i++ {
		n += len(t.lines(i, md))
	}
}

// scroll moves the window by delta lines.
func (t *transcriptView) scroll(delta int, md *render.MarkdownRenderer) {
	for delta > 0 && t.top < len(t.entries) {
		l := len(t.lines(t.top, md))
		if t.topLine+1 < l {
			t.topLine++
		} else if t.top+1 < len(t.entries) {
			t.top, t.topLine = t.top+1, 0
		} else {
			break
		}
		delta--
	}
	for delta < 0 {
		if t.topLine > 0 {
			t.topLine--
		} else if t.top > 0 {
			t.top--
			t.topLine = len(t.lines(t.top, md)) - 1
		} else {
			break
		}
		delta++
	}
}

// find moves to the next entry after the top one that contains the query.
func (t *transcriptView) find(from int) bool {
	q := strings.ToLower(t.query)
	if q == "" {
		return false
	}
	for k := 0; k < len(t.entries); k++ {
		i := (from + k) % len(t.entries)
		e := t.entries[i]
		if strings.Contains(strings.ToLower(e.body), q) || strings.Contains(strings.ToLower(e.title), q) {
			t.top, t.topLine = i, 0
			return true
		}
	}
	return false
}

// render draws the visible window.
func (t *transcriptView) render(width, height int) []string {
	var out []string
	for i := t.top; i < len(t.entries) && len(out) < height; i++ {
		l, ok := t.rendered[i]
		if !ok {
			break
		}
		if i == t.top {
			l = l[min(t.topLine, len(l)):]
		}
		out = append(out, l...)
	}
	if len(out) > height {
		out = out[:height]
	}
	return out
}
