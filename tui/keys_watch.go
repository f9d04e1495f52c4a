// This file holds the Watch screen's keys: selection, the inspector,
// the result overlay, copying and mouse clicks. It is split from keys.go,
// which routes keys and holds the global ones.

package tui

import (
	"encoding/json"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render"
)

func (m *Model) keyWatch(key string) tea.Cmd {
	v := m.view
	switch key {
	case "tab":
		if m.kind == viewFlow {
			m.kind = viewSequence
		} else {
			m.kind = viewFlow
		}
	case "up", "k", "down", "j", "left", "right":
		m.moveSelection(key)
	case "h":
		return m.openDrawer()
	case "b":
		if m.view != m.live {
			m.backToLive()
		}
	case "pgup", "pgdown", "home", "end", "g", "G":
		m.seqFollow = false
		h := max(1, m.lay.bodyH-1)
		switch key {
		case "pgup":
			m.seqSel -= h
		case "pgdown":
			m.seqSel += h
		case "home", "g":
			m.seqSel = 0
		case "end", "G":
			m.seqSel, m.seqFollow = seqRows(v), true
		}
		m.clampSequence()
	case "f":
		m.seqFollow = true
		m.clampSequence()
	case "enter":
		if v == nil || len(v.model.Operations) == 0 {
			return nil
		}
		if m.kind == viewSequence && m.seqSel >= len(v.model.Operations) && v.card != nil {
			return m.openResult()
		}
		if m.kind == viewFlow {
			if m.flowSel == "" {
				fl := layoutFlow(v, m.res, m.lay.width, m.lay.bodyH)
				if len(fl.nodes) > 0 {
					m.flowSel = fl.nodes[len(fl.nodes)-1]
				}
			}
			m.inspector = &inspectorState{pid: flowPID(m.flowSel), key: m.flowSel}
		} else {
			m.inspector = &inspectorState{op: m.seqSel}
		}
	case "t":
		return m.openTranscript()
	case "p":
		if v == nil || v.id == "" {
			m.notice = "No run on screen, so no plan to show: n composes a task, H opens a past run."
			return nil
		}
		m.plan = &planState{}
		return loadPlan(m.ws, v.id)
	case "y":
		return m.copyFocused(false)
	case "Y":
		return m.copyFocused(true)
	case "r":
		if v != nil && v.card != nil {
			return m.openResult()
		}
		m.notice = "The run has not finished: there is no result yet."
	case "i":
		if m.refuseControl("interrupt") {
			return nil
		}
		m.interrupt = &interruptState{kind: "inquiry"}
		m.interrupt.editor.placeholder = "Your question for the run, or the change to its plan"
	case "P":
		if m.refuseControl("pause") {
			return nil
		}
		if m.live.paused != nil {
			m.notice = "The run is already paused: R resumes it."
			return nil
		}
		id := m.live.id
		return controlCmd("pause", func() error { return m.sess.Pause(id) })
	case "R":
		if m.refuseControl("resume") {
			return nil
		}
		id := m.live.id
		return controlCmd("resume", func() error { return m.sess.Resume(id) })
	case "X":
		if m.refuseControl("terminate") {
			return nil
		}
		m.confirm = &confirmState{action: "terminate", prompt: "Terminate the run? It ends as interrupted with its record intact."}
	}
	return nil
}

// refuseControl puts on the banner why a control key cannot act on the
// run on screen, and reports whether it cannot.
func (m *Model) refuseControl(what string) bool {
	why := m.cannotControl(what)
	if why != "" {
		m.notice = why
	}
	return why != ""
}

// cannotControl says why a control key cannot act on the run on screen,
// or "" when it can.
func (m *Model) cannotControl(what string) string {
	switch {
	case m.replaying():
		return "A replay: " + what + " acts on the live run only (b returns to it)."
	case m.live != nil && m.live.card != nil:
		return "The run has finished (" + runStatusWord(m.live) + "): there is nothing to " + what + ". n composes a follow-up."
	case !m.runLive():
		return "No run is live: there is nothing to " + what + ". n composes a task."
	}
	return ""
}

// copyFocused copies what the Watch selection is on: the sequence
// message or the flow node's latest call, else the streaming reply; as
// shown, or raw (Y).
func (m *Model) copyFocused(raw bool) tea.Cmd {
	cp := m.copyText
	if raw {
		cp = m.copyRawText
	}
	v := m.view
	if v == nil || v.id == "" {
		m.notice = "Nothing to copy yet."
		return nil
	}
	idx := -1
	switch {
	case m.kind == viewSequence && m.seqSel < len(v.model.Operations):
		idx = m.seqSel
	case m.kind == viewFlow && m.flowSel != "":
		if i, ok := v.nodeCall(m.flowSel); ok {
			idx = i
		}
	}
	if idx >= 0 {
		return cp("the selected message", m.opCopy(v, idx, false))
	}
	if v == m.live && len(v.stream.raw) > 0 {
		return cp("the streaming reply", string(v.stream.raw))
	}
	if v.card != nil {
		return cp("the result summary", resultSummary(v))
	}
	m.notice = "Select a node or a message first (↑↓), then y copies it."
	return nil
}

func (m *Model) backToLive() {
	m.view, m.replayMeta = m.live, nil
	m.flowSel, m.seqFollow = "", true
	m.clampSequence()
	m.notice = ""
}

// moveSelection moves the flow node or sequence row selection.
func (m *Model) moveSelection(key string) {
	v := m.view
	if v == nil {
		return
	}
	if m.kind == viewSequence {
		switch key {
		case "up", "k":
			m.seqSel--
			m.seqFollow = false
		case "down", "j":
			m.seqSel++
			m.seqFollow = m.seqSel >= seqRows(v)-1
		}
		m.clampSequence()
		return
	}
	fl := layoutFlow(v, m.res, m.lay.width, m.lay.bodyH)
	if len(fl.nodes) == 0 {
		return
	}
	i := fl.cellOf(m.flowSel)
	if i < 0 {
		m.flowSel = fl.nodes[0]
		return
	}
	// Up and down walk the nodes in reading order; left goes to the
	// caller, right to the first callee.
	switch key {
	case "up", "k":
		i = max(0, i-1)
	case "down", "j":
		i = min(len(fl.nodes)-1, i+1)
	case "left":
		if p := fl.cells[i].parent; p >= 0 {
			i = p
		}
	case "right":
		if c := fl.cells[i].child; c >= 0 {
			i = c
		}
	}
	m.flowSel = fl.nodes[i]
}

// selectedRoleID is the role instance the selection points at.
func (m *Model) selectedRoleID() (string, string) {
	v := m.view
	if v == nil {
		return "", ""
	}
	mod := v.model
	var pid string
	if m.inspector != nil && m.inspector.pid == "" || m.inspector == nil && m.kind == viewSequence {
		idx := m.seqSel
		if m.inspector != nil {
			idx = m.inspector.op
		}
		if idx < len(mod.Operations) {
			op := mod.Operations[idx]
			pid = op.Destination
			if p, ok := mod.Participant(pid); !ok || p.Kind != "role" {
				pid = op.Source
			}
		}
	} else if m.inspector != nil {
		pid = m.inspector.pid
	} else {
		pid = flowPID(m.flowSel)
	}
	p, ok := mod.Participant(pid)
	if !ok || p.Kind != render.KindRole {
		return "", ""
	}
	return p.RoleID, m.res.ParticipantLabel(p)
}

func (m *Model) openTranscript() tea.Cmd {
	roleID, label := m.selectedRoleID()
	if roleID == "" {
		m.notice = "Select a role instance to open its transcript."
		return nil
	}
	m.transcript = &transcriptView{runID: m.view.id, roleID: roleID, label: label}
	m.transcript.search.singleLine = true
	return loadTranscript(m.ws, m.view.id, roleID)
}

func (m *Model) keyInspector(key string) tea.Cmd {
	switch key {
	case "t":
		return m.openTranscript()
	case "J":
		m.inspector.json = !m.inspector.json
		return nil
	case "y":
		return m.copyText("these details", m.opCopy(m.view, m.inspectedOp(), m.inspector.json))
	case "Y":
		return m.copyRawText("these details", m.opCopy(m.view, m.inspectedOp(), m.inspector.json))
	case "up", "k", "down", "j":
		// Move the selection underneath and follow it.
		m.inspector = nil
		m.moveSelection(key)
		if m.kind == viewFlow {
			m.inspector = &inspectorState{pid: flowPID(m.flowSel), key: m.flowSel}
		} else {
			m.inspector = &inspectorState{op: m.seqSel}
		}
		return nil
	}
	return m.keyPager(key, &m.inspector.scroll, func() { m.inspector = nil }, "enter")
}

// inspectedOp is the operation the inspector shows: the sequence row, or
// the flow node's latest call; -1 for none.
func (m *Model) inspectedOp() int {
	st := m.inspector
	if st == nil {
		return -1
	}
	if st.pid == "" {
		return st.op
	}
	if i, ok := m.view.nodeCall(st.key); ok {
		return i
	}
	return -1
}

// keyPager scrolls a document overlay; esc (or the toggle key) closes it.
func (m *Model) keyPager(key string, scroll *int, closeFn func(), toggle string) tea.Cmd {
	h := m.overlayBodyH()
	switch key {
	case "esc", "q", toggle:
		closeFn()
	case "down", "j":
		*scroll++
	case "up", "k":
		*scroll = max(0, *scroll-1)
	case "pgdown", " ":
		*scroll += h
	case "pgup":
		*scroll = max(0, *scroll-h)
	case "home", "g":
		*scroll = 0
	case "?":
		if !m.help {
			m.help = true
		}
	}
	return nil
}

func (m *Model) keyResult(key string) tea.Cmd {
	switch key {
	case "d":
		if ei := resultError(m.view); ei != nil && len(ei.Details) > 0 {
			m.resultOpen.details = !m.resultOpen.details
		} else {
			m.flashNote("This run has no technical details.")
		}
		return nil
	case "c":
		return m.copyRaw()
	case "y":
		return m.copyText("the result summary", resultSummary(m.view))
	case "U":
		return m.openRevert(nil)
	case "w":
		switch c := m.changes; {
		case c == nil || !c.loaded:
			m.flashNote("Still reading what changed…")
		case len(c.changes.Files) == 0:
			m.flashNote("No file changed since the run started.")
		default:
			m.openDiff(0)
			m.prepareDiff()
		}
		return nil
	case "r":
		m.showResult = false
		return nil
	case "G", "end":
		m.resultOpen.scroll = max(0, len(m.resultLines(m.overlayWidth()-4))-(m.overlayBodyH()-1))
		return nil
	case "H", "2", "n", "3", "u", "4", "tab":
		m.showResult = false
		return m.keyGlobal(key)
	}
	return m.keyPager(key, &m.resultOpen.scroll, func() { m.showResult = false }, "esc")
}

// copyRaw copies the run's full error object as JSON: the machine kind,
// the message and the technical details, for a bug report.
func (m *Model) copyRaw() tea.Cmd {
	ei := resultError(m.view)
	if ei == nil {
		m.flashNote("This run reported no error: there is no raw error to copy.")
		return nil
	}
	b, err := json.MarshalIndent(ei, "", "  ")
	if err != nil {
		return nil
	}
	return m.copyText("the raw error JSON", string(b))
}

// handleMouse: a click selects the flow node or sequence row under it.
func (m *Model) handleMouse(msg tea.MouseMsg) tea.Cmd {
	if msg.Action != tea.MouseActionPress || m.screen != screenWatch || m.view == nil {
		return nil
	}
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		m.moveSelection("up")
		return nil
	case tea.MouseButtonWheelDown:
		m.moveSelection("down")
		return nil
	case tea.MouseButtonLeft:
	default:
		return nil
	}
	row := msg.Y - 3 // top bar, banner and identity header
	if row < 0 || row >= m.lay.bodyH {
		return nil
	}
	if m.kind == viewSequence {
		if row >= 1 {
			m.seqSel, m.seqFollow = m.seqTop+row-1, false
			m.clampSequence()
		}
		return nil
	}
	if key := flowHit(m.view, m.res, m.lay.width, m.lay.bodyH, msg.X, row); key != "" {
		m.flowSel = key
	}
	return nil
}
