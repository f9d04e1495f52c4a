// This file holds the console's message loop: Update and the messages
// it routes, and the small state helpers they share. It is split from
// app.go, which holds the model, its options and how events apply.

package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
)

// Update routes messages. It does no I/O: effects are commands.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	mm, cmd := m.update(msg)
	if m.notice != m.noticeSeen {
		m.noticeSeen, m.noticeTicks = m.notice, 0
	}
	m.sizeEditors()
	m.prepareLive()
	return mm, cmd
}

// prepareLive renders the live pane for the frame when it is on screen,
// so that View only draws it.
func (m *Model) prepareLive() {
	if v := m.live; v != nil && m.view == v && m.screen == screenWatch && v.stream.roleID != "" {
		v.stream.prepare(m.md, m.lay.width, m.lay.streamH)
	}
}

// sizeEditors gives every open editor its size in the current layout, so
// that views only draw them.
func (m *Model) sizeEditors() {
	inner := m.overlayWidth() - 4
	m.compose.editor.SetSize(m.lay.width, min(10, max(3, (m.lay.height-3)/3)))
	// A short screen keeps a one-line answer so the question still shows.
	answerH := 3
	if m.lay.height < 20 {
		answerH = 1
	}
	if len(m.questions) > 0 {
		m.q.editor.SetSize(inner, answerH)
	}
	if m.interrupt != nil {
		m.interrupt.editor.SetSize(inner, answerH)
	}
	if m.transcript != nil {
		m.transcript.search.SetSize(inner-2, 1)
	}
	if a := m.queue.answer; a != nil {
		a.editor.SetSize(inner, answerH)
	}
	if e := m.queue.edit; e != nil {
		e.editor.SetSize(inner, max(3, min(12, m.lay.height-10)))
	}
	m.sizeSettings()
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.lay = computeLayout(msg.Width, msg.Height)
		m.clampSequence()
		m.syncLog()
		if m.transcript != nil {
			m.transcript.prepare(m.overlayWidth()-4, m.overlayBodyH(), m.md)
		}
		return m, nil
	case eventsMsg:
		var cmds []tea.Cmd
		for _, e := range msg.events {
			cmds = append(cmds, m.applyEvent(e))
		}
		m.live.refresh()
		m.clampSequence()
		if m.screen == screenLog {
			m.syncLog()
		}
		if m.transcript != nil && m.transcript.loaded {
			m.transcript.prepare(m.overlayWidth()-4, m.overlayBodyH(), m.md)
		}
		if threadEvents(msg.events) && m.live != nil {
			cmds = append(cmds, m.refreshThread(m.live.id))
		}
		cmds = append(cmds, m.maybeLoadSummary(msg.events))
		if d := m.sub.Dropped(); d > m.dropped && m.live != nil && m.live.id != "" {
			m.dropped = d
			cmds = append(cmds, resyncLive(m.ws, m.live.id))
		}
		cmds = append(cmds, waitEvents(m.sub), m.maybeTick())
		return m, tea.Batch(cmds...)
	case resyncMsg:
		if msg.err != nil || m.live == nil || msg.run.id != m.live.id {
			return m, nil
		}
		nv := msg.run
		for _, e := range m.recent {
			if e.Seq > nv.lastSeq {
				nv.apply(e)
			}
		}
		nv.stream = m.live.stream
		nv.refresh()
		if m.view == m.live {
			m.view = nv
		}
		m.live = nv
		m.clampSequence()
		return m, nil
	case summaryMsg:
		m.summaryLoading = false
		if msg.text != "" {
			m.summaries[msg.runID] = msg.text
		}
		return m, nil
	case subClosedMsg:
		if es, ok := m.sess.(EndingSession); ok && es.Err() != nil {
			m.notice = "Detached: " + render.SanitizeLine(es.Err().Error())
		}
		return m, nil
	case tickMsg:
		m.ticking = false
		m.phase++
		return m, m.maybeTick()
	case healthTickMsg:
		m.expireNotice()
		return m, tea.Batch(healthCmd(m.sess), healthTick())
	case healthMsg:
		m.health = msg.view
		return m, nil
	case modelInfoMsg:
		m.model = msg.info
		return m, nil
	case questionsMsg:
		for _, q := range msg.questions {
			m.addQuestion(q.RunID, q.AskHumanPayload)
		}
		return m, nil
	case answerDoneMsg:
		if msg.err == nil {
			m.notice = "Answer sent."
		} else {
			if isAlreadyAnswered(msg.err) {
				m.closeQuestion(msg.id)
				m.notice = "Already answered from another client: your answer was not used."
			} else {
				m.notice = "The answer was not delivered: " + render.SanitizeLine(msg.err.Error())
				if len(m.questions) > 0 && m.questions[0].q.ID == msg.id {
					m.questions[0].sent = false
				}
			}
		}
		return m, nil
	case submitDoneMsg:
		if msg.err != nil {
			m.notice = "Not submitted: " + render.SanitizeLine(submitError(msg.err))
			return m, nil
		}
		m.compose.editor.Reset()
		if msg.queued != nil {
			// A run is live: the task waits in the queue.
			m.notice = "Queued as " + render.SanitizeLine(msg.queued.ID) + ": it runs when the live run and the tasks before it are done."
			m.screen = screenQueue
			m.queue.selID = msg.queued.ID
			return m, m.queueRefreshCmd()
		}
		m.notice = "Submitted " + render.SanitizeLine(msg.runID) + "."
		m.screen = screenWatch
		m.view, m.replayMeta = m.live, nil
		return m, nil
	case queueTickMsg:
		return m, tea.Batch(m.queueRefreshCmd(), queueTick())
	case queueMsg:
		m.applyQueue(msg)
		return m, nil
	case queueOpMsg:
		if msg.err != nil {
			m.notice = render.SanitizeLine(queueError(msg.op, msg.id, msg.err))
			if a := m.queue.answer; a != nil && a.id == msg.id {
				a.sent = false
			}
		} else {
			m.notice = render.SanitizeLine(queueDoneNotice(msg.op, msg.id, msg.item))
			if a := m.queue.answer; a != nil && a.id == msg.id {
				m.queue.answer = nil
			}
		}
		m.queue.loading = true
		return m, listQueue(m.opts.Queue)
	case controlDoneMsg:
		if msg.err != nil {
			m.flashNote(msg.what + " failed: " + render.SanitizeLine(msg.err.Error()))
			return m, nil
		}
		note := controlNotice(msg.what)
		if msg.message != "" && m.live != nil && m.live.id == msg.runID {
			m.live.addInquiry(inquiry{kind: msg.what, message: msg.message, sent: true})
			if len(m.questions) > 0 {
				note = controlNoticeWhileAsked(msg.what)
			}
		}
		m.flashNote(note)
		return m, nil
	case historyMsg:
		m.history.loaded, m.history.err = true, msg.err
		m.history.rows = msg.rows
		m.history.sel = min(m.history.sel, max(0, len(msg.rows)-1))
		for _, r := range msg.rows {
			m.summaries[r.id] = r.summary
		}
		return m, nil
	case replayMsg:
		if msg.err != nil && msg.run == nil {
			m.notice = "Could not open " + msg.runID + ": " + render.SanitizeLine(msg.err.Error())
			return m, nil
		}
		m.view, m.replayMeta = msg.run, msg.meta
		m.screen, m.flowSel, m.seqSel, m.seqTop, m.seqFollow = screenWatch, "", 0, 0, false
		m.inspector, m.transcript, m.plan, m.showResult, m.diff = nil, nil, nil, false, nil
		m.notice = ""
		m.drawer = nil
		m.syncLog()
		return m, m.refreshThread(msg.runID)
	case threadMsg:
		return m, m.applyThread(msg)
	case threadSummaryMsg:
		m.applyThreadSummary(msg)
		return m, nil
	case planMsg:
		if m.plan != nil && m.view != nil && msg.runID == m.view.id {
			m.plan.text, m.plan.err, m.plan.loaded = msg.text, msg.err, true
		}
		return m, nil
	case transcriptMsg:
		if t := m.transcript; t != nil && t.roleID == msg.roleID && t.runID == msg.runID {
			t.entries, t.loaded = msg.entries, true
			if msg.err != nil {
				t.note = "Could not read the whole log: " + render.SanitizeLine(msg.err.Error())
			}
			t.prepare(m.overlayWidth()-4, m.overlayBodyH(), m.md)
		}
		return m, nil
	case copiedMsg:
		m.flashNote(msg.note)
		return m, nil
	case editedMsg:
		m.applyEdited(msg)
		return m, nil
	case revertPlanMsg, revertDoneMsg:
		return m, m.applyRevertMsg(msg)
	case changesMsg:
		m.applyChanges(msg)
		return m, nil
	case endpointCheckedMsg, endpointAppliedMsg:
		return m, m.applyEndpointMsg(msg)
	case connectedMsg:
		return m, m.connected(msg.c)
	case tea.MouseMsg:
		return m, m.handleMouse(msg)
	case tea.KeyMsg:
		return m, m.handleKey(msg)
	}
	return m, nil
}

// submit starts a task, or queues it while a run is live when the console
// has a queue.
func (m *Model) submit(sub runner.Submission) tea.Cmd {
	if m.connecting {
		// The probe decides the model and the guild: the run waits.
		m.heldTask = &sub
		m.notice = "The task starts once the model endpoint answers."
		return nil
	}
	if m.opts.Queue != nil {
		return submitOrQueueCmd(m.ctx, m.opts.Queue, sub)
	}
	return submitCmd(m.ctx, m.sess, sub)
}

// clampSequence keeps the sequence selection and window valid and, while
// following, on the newest row.
func (m *Model) clampSequence() {
	m.seqSel, m.seqTop = clampWindow(m.seqSel, m.seqTop, seqRows(m.view), max(1, m.lay.bodyH-1), m.seqFollow)
}

// clampWindow keeps a list's selection on one of its n rows (the last
// while following) and the top of its h-row window where the selection
// shows, with no empty rows below the last when there are enough.
func clampWindow(sel, top, n, h int, follow bool) (int, int) {
	if follow && n > 0 {
		sel = n - 1
	}
	sel = max(0, min(sel, n-1))
	if sel < top {
		top = sel
	}
	if sel >= top+h {
		top = sel - h + 1
	}
	return sel, max(0, min(top, max(0, n-h)))
}

// maybeLoadSummary reads the live run's summary.txt after a model reply
// until it exists: the runner writes it after the run's first reply and
// again when the run ends.
func (m *Model) maybeLoadSummary(evs []event.Event) tea.Cmd {
	if m.live == nil || m.live.id == "" || m.summaryLoading {
		return nil
	}
	final := false
	reply := false
	for _, e := range evs {
		switch e.Type {
		case event.LLMCall:
			reply = true
		case event.RunStatus:
			final = m.live.card != nil
		}
	}
	if final || (reply && m.summaries[m.live.id] == "") {
		m.summaryLoading = true
		return loadSummary(m.ws, m.live.id)
	}
	return nil
}

// flashNote tells the operator something: on the banner line and, when
// an overlay covers the screen, inside it.
func (m *Model) flashNote(s string) {
	m.notice = s
	if m.topOverlay() != overlayNone {
		m.flash = s
	}
}

// noticeTicks is how many health ticks (healthTick, 2 s apart) a notice
// stays: three, so between 4 and 6 s, and two more for a long one, which
// takes longer to read.
func noticeLife(notice string) int {
	if len(notice) > 80 {
		return 5
	}
	return 3
}

// expireNotice ages the notice by one health tick and clears it, and its
// copy inside an overlay, once it has been shown long enough.
func (m *Model) expireNotice() {
	if m.notice == "" {
		return
	}
	m.noticeTicks++
	if m.noticeTicks < noticeLife(m.notice) {
		return
	}
	if m.flash == m.notice {
		m.flash = ""
	}
	m.notice, m.noticeSeen, m.noticeTicks = "", "", 0
}

func (m *Model) runLive() bool {
	return m.live != nil && m.live.live()
}
