package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
)

// The Log screen lists every event of the run on screen as the headless
// printer shows it (render.HeadlessLine), searchable (/ n N, every match
// marked, "3 of 12") and filterable by role (f). It is windowed: a frame
// draws the lines on screen only, so a run of 100,000 events scrolls as
// fast as one of ten.

// logLine is one printed event: its time, the role it concerns ("" for
// run-level events) and the headless line, already sanitized.
type logLine struct {
	at   time.Time
	role string
	text string
	// boundary marks a line of the run itself (the resume marker), kept
	// under any role filter: where the run restarted matters to every role.
	boundary bool
}

// headless reports whether HeadlessLine prints anything for a type, so
// that events it skips (model calls, deltas) are not decoded for it.
func headless(t event.Type) bool {
	switch t {
	case event.RunStarted, event.RoleStart, event.RoleFinished, event.ToolCall, event.ToolResult,
		event.AskHuman, event.HumanAnswer, event.ProviderFailure, event.LLMUnavailable,
		event.ContextBudgetExceeded, event.UnknownTool, event.InvalidToolCall, event.Egress, event.RunStatus,
		event.TextToolCalls, event.Repetition, event.ToolCallsIgnored, event.MCPServer:
		return true
	}
	return false
}

// addLog takes in one persisted event.
func (v *runView) addLog(e event.Event) {
	if e.Type == event.RunResumed {
		// The restart boundary, between the commands before a crash and
		// after it, as guildhall show's thread marks it.
		v.log = append(v.log, logLine{at: e.Timestamp, text: "── Run resumed from its checkpoint ──", boundary: true})
		return
	}
	if !headless(e.Type) {
		return
	}
	text, ok := render.HeadlessLine(e)
	if !ok {
		return
	}
	var who struct {
		Role string `json:"role"`
	}
	_ = json.Unmarshal(e.Payload, &who)
	if who.Role != "" {
		if v.logRoles == nil {
			v.logRoles = map[string]bool{}
		}
		if !v.logRoles[who.Role] {
			v.logRoles[who.Role] = true
			v.logRoleList = append(v.logRoleList, who.Role)
		}
	}
	v.log = append(v.log, logLine{at: e.Timestamp, role: who.Role, text: text})
}

// logState is the Log screen's position, search and filter.
type logState struct {
	runID  string
	role   string // the role shown, "" for all
	index  []int  // the lines shown (indices into runView.log); nil: all
	sel    int    // the selected line, in shown order
	top    int
	follow bool // stay on the newest line
	find   finder
	search editor
	typing bool
}

func (l *logState) count(v *runView) int {
	if l.index != nil {
		return len(l.index)
	}
	return len(v.log)
}

func (l *logState) line(v *runView, i int) logLine {
	if l.index != nil {
		return v.log[l.index[i]]
	}
	return v.log[i]
}

// texts are the lines shown, for the finder.
func (l *logState) texts(v *runView) []string {
	out := make([]string, l.count(v))
	for i := range out {
		out[i] = l.line(v, i).text
	}
	return out
}

// refilter applies the role filter.
func (l *logState) refilter(v *runView) {
	l.index = nil
	if l.role != "" {
		l.index = []int{}
		for i, ln := range v.log {
			if ln.role == l.role || ln.boundary {
				l.index = append(l.index, i)
			}
		}
	}
	if l.find.query != "" {
		l.find.reindex(l.texts(v))
	}
}

// sync keeps the log state on the run on screen, the selection in range
// and, while following, on the newest line. It runs in Update.
func (m *Model) syncLog() {
	v, l := m.view, &m.logv
	if v == nil {
		return
	}
	if l.runID != v.id {
		*l = logState{runID: v.id, follow: true, search: l.search}
		l.search.singleLine = true
	}
	if l.role != "" && l.index != nil {
		// Lines that arrived since the filter was applied.
		last := -1
		if len(l.index) > 0 {
			last = l.index[len(l.index)-1]
		}
		for i := last + 1; i < len(v.log); i++ {
			if v.log[i].role == l.role {
				l.index = append(l.index, i)
			}
		}
	}
	l.sel, l.top = clampWindow(l.sel, l.top, l.count(v), m.logBodyH(), l.follow)
}

func (m *Model) logBodyH() int { return max(1, m.lay.height-5) }

func (m *Model) logView(w, h int) []string {
	v, l := m.view, &m.logv
	if v == nil || v.id == "" {
		return []string{"", "  No run on screen: its log shows here. n composes a task, H opens a past run."}
	}
	n := l.count(v)
	filter := "all roles"
	if l.role != "" {
		filter = "role " + m.res.ParticipantLabel(render.Participant{Kind: render.KindRole, Role: l.role})
	}
	head := fmt.Sprintf("%d of %d events · %s", n, len(v.log), filter)
	if l.follow && v.live() {
		head += " · following"
	}
	out := []string{styleFaint.Render(fit(head, w))}
	body := h - 1
	cur, hasCur := l.find.current()
	for i := l.top; i < n && len(out) <= body; i++ {
		ln := l.line(v, i)
		text := styleFaint.Render(ln.at.UTC().Format("15:04:05")) + " " + ln.text
		nth := -1
		if hasCur && cur.item == i {
			nth = cur.nth
		}
		text = highlightLines(m.th, []string{text}, l.find.query, nth, 0)[0]
		text = ansi.Truncate(text, w, "…")
		if i == l.sel {
			text = styleSelected.Render(fit(ansi.Strip(text), w))
		}
		out = append(out, text)
	}
	return out
}

func (m *Model) logHint(w int) string {
	l := &m.logv
	switch {
	case l.typing:
		return "/" + strings.TrimPrefix(l.search.Render(true)[0], "│ ")
	case l.find.query != "":
		st := l.find.status()
		return styleTitle.Render(st) + "  " + hints(w-ansi.StringWidth(st)-2, "n N", "next/prev", "/", "new search", "esc", "clear", "f", "role")
	}
	return hints(w, "↑↓ pgup pgdn", "scroll", "/", "search", "f", "role", "y", "copy line", "G", "follow", "1", "Watch", "?", "keys")
}

// keyLog handles the Log screen's keys.
func (m *Model) keyLog(k tea.KeyMsg) (tea.Cmd, bool) {
	v, l := m.view, &m.logv
	if v == nil {
		return nil, false
	}
	key := k.String()
	if l.typing {
		switch key {
		case "esc":
			l.typing = false
		case "enter":
			l.typing = false
			l.find.set(l.search.Value(), l.texts(v), l.sel)
			m.logToMatch()
		default:
			l.search.HandleKey(k)
		}
		return nil, true
	}
	h := m.logBodyH()
	switch key {
	case "/":
		l.typing = true
		l.search.Reset()
	case "n", "N":
		d := 1
		if key == "N" {
			d = -1
		}
		if l.find.step(d) {
			m.logToMatch()
		} else if l.find.query == "" {
			m.notice = "Press / to search the log first."
		}
	case "esc":
		if l.find.query != "" {
			l.find = finder{}
			return nil, true
		}
		m.screen = screenWatch
	case "f":
		l.role = nextOf(append([]string{""}, v.logRoleList...), l.role, l.role)
		l.refilter(v)
		l.follow = true
	case "up", "k":
		l.sel, l.follow = l.sel-1, false
	case "down", "j":
		l.sel++
		l.follow = l.sel >= l.count(v)-1
	case "pgup":
		l.sel, l.follow = l.sel-h, false
	case "pgdown", " ":
		l.sel += h
		l.follow = l.sel >= l.count(v)-1
	case "home", "g":
		l.sel, l.follow = 0, false
	case "end", "G":
		l.follow = true
	case "y":
		if n := l.count(v); l.sel < n {
			return m.copyText("the log line", l.line(v, l.sel).text), true
		}
	default:
		return nil, false
	}
	m.syncLog()
	return nil, true
}

// logToMatch selects the line of the current match.
func (m *Model) logToMatch() {
	l := &m.logv
	if mt, ok := l.find.current(); ok {
		l.sel, l.follow = mt.item, false
		// Centre it.
		l.top = max(0, mt.item-m.logBodyH()/2)
	}
	m.syncLog()
}
