// This file holds the keys of the forms an operator types into: the
// question modal, the interrupt box, the transcript, the history picker
// and the compose screen. It is split from keys.go, which routes keys.

package tui

import (
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

func (m *Model) questionVisible() bool { return len(m.questions) > 0 && !m.qHidden }

func (m *Model) keyQuestion(k tea.KeyMsg) tea.Cmd {
	q := &m.questions[0]
	st := &m.q
	switch k.String() {
	case "esc":
		m.qHidden = true
		return nil
	case "ctrl+g":
		return m.editExternally(editTarget{box: "answer", id: q.q.ID})
	case "enter":
		if q.sent {
			return nil
		}
		answer := st.answer(optionLabels(q.q.Options))
		if answer == "" {
			m.notice = "Type an answer or pick an option."
			return nil
		}
		q.sent = true
		return answerCmd(m.sess, q.q.ID, answer)
	}
	st.handleKey(k, len(q.q.Options))
	return nil
}

// answer is the typed answer, else the picked option's label.
func (st *questionState) answer(options []string) string {
	answer := strings.TrimSpace(st.editor.Value())
	if answer == "" && st.opt >= 0 && st.opt < len(options) {
		answer = options[st.opt]
	}
	return answer
}

// handleKey is the answer form shared by the question modal and the
// parked-question modal: scrolling, picking an option with the arrows or
// its number while nothing is typed, and typing a free answer (which
// clears the pick).
func (st *questionState) handleKey(k tea.KeyMsg, options int) {
	switch k.String() {
	case "pgup":
		st.scroll = max(0, st.scroll-5)
		st.followOpt = false
		return
	case "pgdown":
		st.scroll += 5
		st.followOpt = false
		return
	case "up":
		if st.editor.Empty() && options > 0 {
			st.opt, st.followOpt = max(0, st.opt-1), true
			return
		}
	case "down":
		if st.editor.Empty() && options > 0 {
			st.opt, st.followOpt = min(options-1, st.opt+1), true
			return
		}
	}
	if st.editor.Empty() && k.Type == tea.KeyRunes && len(k.Runes) == 1 && !k.Paste {
		if n, err := strconv.Atoi(string(k.Runes)); err == nil && n >= 1 && n <= options {
			st.opt, st.followOpt = n-1, true
			return
		}
	}
	if st.editor.HandleKey(k) && !st.editor.Empty() {
		st.opt = -1
	}
}

func optionLabels(opts []event.Option) []string {
	out := make([]string, len(opts))
	for i, o := range opts {
		out[i] = o.Label
	}
	return out
}

func (m *Model) keyInterrupt(k tea.KeyMsg) tea.Cmd {
	st := m.interrupt
	switch k.String() {
	case "esc":
		m.interrupt = nil
		return nil
	case "ctrl+g":
		return m.editExternally(editTarget{box: "interrupt", interrupt: st})
	case "tab":
		if st.kind == "inquiry" {
			st.kind = "plan_modification"
		} else {
			st.kind = "inquiry"
		}
		return nil
	case "pgup":
		st.scroll = max(0, st.scroll-5)
		return nil
	case "pgdown":
		st.scroll += 5
		return nil
	case "enter":
		msg := strings.TrimSpace(st.editor.Value())
		if msg == "" || !m.runLive() {
			return nil
		}
		id, kind := m.live.id, st.kind
		m.interrupt = nil
		sess := m.sess
		return func() tea.Msg {
			return controlDoneMsg{what: kind, runID: id, message: msg, err: sess.Interrupt(id, kind, msg)}
		}
	}
	st.editor.HandleKey(k)
	return nil
}

func (m *Model) keyTranscript(k tea.KeyMsg) tea.Cmd {
	t := m.transcript
	w, h := m.overlayWidth()-4, m.overlayBodyH()
	if t.searching {
		switch k.String() {
		case "esc":
			t.searching = false
		case "enter":
			t.searching = false
			t.find.set(t.search.Value(), t.texts(), t.top)
			t.prepare(w, h, m.md)
			t.goToMatch(m.md)
		default:
			t.search.HandleKey(k)
		}
		t.prepare(w, h, m.md)
		return nil
	}
	switch k.String() {
	case "esc", "q", "t":
		if k.String() == "esc" && t.find.query != "" {
			t.find = finder{}
			return nil
		}
		m.transcript = nil
		return nil
	case "/":
		t.searching = true
		t.search.Reset()
		return nil
	case "n", "N":
		d := 1
		if k.String() == "N" {
			d = -1
		}
		if t.find.step(d) {
			t.goToMatch(m.md)
		} else if t.find.query == "" {
			m.flashNote("Press / to search first.")
		}
	case "J":
		t.setJSON(!t.json)
	case "y":
		return m.copyText("this message", t.copyText(t.top))
	case "Y":
		return m.copyText("the whole transcript", t.copyText(-1))
	case "down", "j":
		t.scroll(1, m.md)
	case "up", "k":
		t.scroll(-1, m.md)
	case "pgdown", " ":
		t.scroll(h, m.md)
	case "pgup":
		t.scroll(-h, m.md)
	case "home", "g":
		t.top, t.topLine = 0, 0
	case "end", "G":
		t.top, t.topLine = max(0, len(t.entries)-1), 0
	case "?":
		m.help = true
	}
	t.prepare(w, h, m.md)
	return nil
}

func (m *Model) keyHistory(key string) (tea.Cmd, bool) {
	h := &m.history
	switch key {
	case "up", "k":
		h.sel = max(0, h.sel-1)
		h.expanded = false
	case "down", "j":
		h.sel = min(max(0, len(h.rows)-1), h.sel+1)
		h.expanded = false
	case "enter":
		h.expanded = !h.expanded
		h.scroll = 0
	case "pgdown":
		h.scroll += 5
	case "pgup":
		h.scroll = max(0, h.scroll-5)
	case "o":
		if h.sel < len(h.rows) {
			id := h.rows[h.sel].id
			if m.live != nil && id == m.live.id {
				m.backToLive()
				m.screen = screenWatch
				return nil, true
			}
			return replayRun(m.ws, id), true
		}
	case "r":
		// Resume a run that stopped before finishing (crash, signal,
		// suspension, a spent budget) from its checkpoint.
		if h.sel < len(h.rows) {
			row := h.rows[h.sel]
			if row.meta == nil || store.Terminal(row.meta.Status) && !runner.BudgetStopped(row.meta) {
				m.notice = "Only an unfinished run can be resumed."
				return nil, true
			}
			if row.meta.Foreign {
				m.notice = "Foreign run (not written by Guildhall for you): shown, never resumed."
				return nil, true
			}
			id := row.id
			m.screen = screenWatch
			return controlCmd("resume", func() error { return m.sess.Resume(id) }), true
		}
	case "esc":
		m.screen = screenWatch
	default:
		return nil, false
	}
	return nil, true
}

// efforts are the effort tiers in selector order.
func efforts() []string { return []string{"quick", "standard", "thorough"} }

// taskIn is the task typed in ed, trimmed. ok is false when there is
// none, which the banner then says.
func (m *Model) taskIn(ed *editor) (task string, ok bool) {
	task = strings.TrimSpace(ed.Value())
	if task == "" {
		m.notice = "The task is empty."
	}
	return task, task != ""
}

// nextOf is the entry after cur in a cycle through order, or fallback when
// cur is not in it.
func nextOf(order []string, cur, fallback string) string {
	for i, e := range order {
		if e == cur {
			return order[(i+1)%len(order)]
		}
	}
	return fallback
}

func (m *Model) keyCompose(k tea.KeyMsg) tea.Cmd {
	c := &m.compose
	if c.picking {
		switch k.String() {
		case "up", "k":
			c.pickSel = max(0, c.pickSel-1)
		case "down", "j":
			c.pickSel = min(max(0, len(m.pickable())-1), c.pickSel+1)
		case "enter":
			rows := m.pickable()
			if c.pickSel < len(rows) {
				c.continueFrom = rows[c.pickSel].id
			}
			c.picking = false
		case "esc":
			c.picking = false
		}
		return nil
	}
	switch k.String() {
	case "ctrl+g":
		return m.editExternally(editTarget{box: "compose"})
	case "ctrl+s":
		task, ok := m.taskIn(&c.editor)
		if !ok {
			return nil
		}
		return m.submit(runner.Submission{Task: task, Effort: c.effort, LogLevel: m.opts.LogLevel, ContinuesFrom: c.continueFrom})
	case "ctrl+e":
		c.effort = nextOf(efforts(), c.effort, "standard")
	case "ctrl+o":
		c.picking, c.pickSel = true, 0
		return loadHistory(m.ws)
	case "ctrl+x":
		c.continueFrom = ""
	case "ctrl+d":
		c.details = !c.details
	case "pgdown":
		c.scroll += 5
	case "pgup":
		c.scroll = max(0, c.scroll-5)
	case "esc":
		m.screen = screenWatch
	case "enter":
		c.editor.Newline()
	default:
		c.editor.HandleKey(k)
	}
	return nil
}

// pickable lists the finished runs a task may continue from.
func (m *Model) pickable() []historyRow {
	var out []historyRow
	for _, r := range m.history.rows {
		if r.meta != nil && store.Terminal(r.meta.Status) {
			out = append(out, r)
		}
	}
	return out
}
