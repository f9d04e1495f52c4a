package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
)

// transcriptEntry is one message of a role instance's transcript. title is
// program text; body is untrusted and rendered as Markdown when prose is
// set, else as sanitized preformatted text. raw, when set, is the JSON a
// tool call or result carried: body is its text (resultText) and J shows
// the JSON instead.
type transcriptEntry struct {
	title string
	body  string
	raw   string
	prose bool
	// A message longer than entryMax is split into parts, each an entry
	// of its own, so that only the parts in view are rendered; part is
	// this one's number (0 for the head, which carries the title).
	part int
	// call marks a model call's figures (callLine), not a message.
	call bool
}

// entryMax bounds the text of one transcript entry.
const entryMax = 16 << 10

// shown is the entry's body as the transcript shows it.
func (e transcriptEntry) shown(json bool) string {
	if json && e.raw != "" {
		return prettyJSON(e.raw)
	}
	return e.body
}

// transcript collects one role instance's messages from its events: the
// messages sent to the model, its replies and reasoning when logged, and
// the results of its tool calls.
type transcript struct{ entries []transcriptEntry }

// push appends an entry, split into parts when it is long.
func (t *transcript) push(e transcriptEntry) {
	body := e.body
	if e.raw != "" && len(e.raw) > entryMax {
		// The JSON of a long result stays one key away only while it is
		// short; a long one shows as its text.
		e.raw = ""
	}
	if len(body) <= entryMax {
		t.entries = append(t.entries, e)
		return
	}
	parts := splitPlain(body, entryMax)
	if e.prose {
		parts = splitMarkdown(body, entryMax)
	}
	for i, p := range parts {
		part := e
		part.body, part.part = p, i
		t.entries = append(t.entries, part)
	}
}

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
				t.push(transcriptEntry{title: "System prompt", body: m.Content, prose: true})
			default:
				t.push(transcriptEntry{title: "Sent (" + m.Role + ")", body: m.Content, prose: true})
			}
		}
		if r := p.Received; r != nil {
			if r.Reasoning != "" {
				t.push(transcriptEntry{title: "Reasoning", body: r.Reasoning})
			}
			if r.Content != "" {
				t.push(transcriptEntry{title: "Reply", body: r.Content, prose: true})
			}
			for _, c := range r.ToolCalls {
				t.push(transcriptEntry{title: "Tool call " + c.Name, body: resultText(c.Arguments), raw: c.Arguments})
			}
		}
		if len(p.Sent) == 0 && p.Received == nil {
			t.push(transcriptEntry{title: "Model call (bodies not logged at this log level)"})
		}
		t.push(transcriptEntry{title: callLine(p), call: true})
	case event.ToolResult:
		var p event.ToolResultPayload
		if e.Decode(&p) != nil || p.RoleID != roleID {
			return
		}
		raw := string(p.Result)
		t.push(transcriptEntry{title: "Result of " + p.Tool + " · " + p.Kind, body: resultText(raw), raw: raw})
	case event.AskHuman:
		var p event.AskHumanPayload
		if e.Decode(&p) != nil || p.RoleID != roleID {
			return
		}
		t.push(transcriptEntry{title: "Question for the operator", body: p.Question, prose: true})
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
	find                 finder
	json                 bool // tool calls and results as JSON (J)
	note                 string
	loaded               bool
}

func (t *transcriptView) lines(i int, md *render.MarkdownRenderer) []string {
	if l, ok := t.rendered[i]; ok {
		return l
	}
	e := t.entries[i]
	var out []string
	if e.part == 0 {
		out = append(out, styleTitle.Render(render.SanitizeLine(e.title)))
	}
	if body := e.shown(t.json); strings.TrimSpace(body) != "" {
		var text string
		if e.prose {
			text = strings.TrimRight(md.Render(body, t.width-2), "\n")
		} else {
			text = wrapIndented(render.Sanitize(body), t.width-2)
		}
		for _, l := range strings.Split(text, "\n") {
			out = append(out, "  "+l)
		}
	}
	if i+1 >= len(t.entries) || t.entries[i+1].part == 0 {
		out = append(out, "")
	}
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
	for i := t.top; i < len(t.entries) && n < height+t.topLine; i++ {
		n += len(t.lines(i, md))
	}
}

// setJSON switches tool calls and results between text and JSON.
func (t *transcriptView) setJSON(on bool) {
	if t.json != on {
		t.json, t.rendered, t.topLine = on, nil, 0
		t.find.reindex(t.texts())
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

// texts are the searchable texts of the entries: the title and the body
// as shown.
func (t *transcriptView) texts() []string {
	out := make([]string, len(t.entries))
	for i, e := range t.entries {
		if e.part == 0 {
			out[i] = e.title + "\n"
		}
		out[i] += e.shown(t.json)
	}
	return out
}

// goToMatch puts the current match at the top of the window: its entry,
// and the rendered line that holds it when the rendering kept the text.
func (t *transcriptView) goToMatch(md *render.MarkdownRenderer) {
	mt, ok := t.find.current()
	if !ok {
		return
	}
	t.top, t.topLine = mt.item, 0
	lines := t.lines(mt.item, md)
	if l := nthLineWith(lines, t.find.query, mt.nth); l >= 0 {
		t.topLine = max(0, l-1)
	}
}

// copyText is the transcript as plain text: the message entry i is part
// of, or, for i < 0, all of them.
func (t *transcriptView) copyText(i int) string {
	first, last := 0, len(t.entries)
	if i >= 0 && i < len(t.entries) {
		for first = i; first > 0 && t.entries[first].part > 0; first-- {
		}
		for last = first + 1; last < len(t.entries) && t.entries[last].part > 0; last++ {
		}
	}
	var b strings.Builder
	for _, e := range t.entries[first:last] {
		if e.part == 0 {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString("## " + e.title + "\n\n")
		}
		b.WriteString(e.shown(t.json))
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// render draws the visible window, the matches of the search marked.
func (t *transcriptView) render(th theme, width, height int) []string {
	var out []string
	cur, hasCur := t.find.current()
	for i := t.top; i < len(t.entries) && len(out) < height; i++ {
		l, ok := t.rendered[i]
		if !ok {
			break
		}
		start := 0
		if i == t.top {
			start = min(t.topLine, len(l))
		}
		nth := -1
		if hasCur && cur.item == i {
			nth = cur.nth
		}
		out = append(out, highlightLines(th, l, t.find.query, nth, start)...)
	}
	if len(out) > height {
		out = out[:height]
	}
	return out
}

// callLine is one model call's figures, after its reply: the model that
// answered, the prompt (with the server's cache split where it reports
// one), the reply's tokens, its speed and the call's time.
func callLine(p event.LLMCallPayload) string {
	u := p.Usage
	s := "Model call"
	if p.Model != "" {
		s += " · " + render.SanitizeLine(p.Model)
	}
	s += " · prompt " + compactTokens(u.PromptTokens)
	if u.PromptCacheReported {
		s += " (" + compactTokens(u.CachedPromptTokens) + " cached, " + compactTokens(u.EvaluatedPromptTokens) + " evaluated)"
	} else if u.CachedPromptTokens > 0 {
		s += " (" + compactTokens(u.CachedPromptTokens) + " cached)"
	}
	s += " · reply " + compactTokens(u.CompletionTokens)
	if u.TokensPerSecond > 0 {
		s += " at " + tokensPerSecond(u.TokensPerSecond)
	}
	return s + fmt.Sprintf(" · %.1fs", float64(p.ElapsedMs)/1000)
}

// messages counts the entries that are messages, not model-call figures.
func (t *transcriptView) messages() int {
	n := 0
	for _, e := range t.entries {
		if !e.call {
			n++
		}
	}
	return n
}
