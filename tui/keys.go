package tui

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/guildhall/guildhall/runner/event"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

// keyHelp lists every key, for the ? overlay and the docs.
func keyHelp() [][2]string {
	return [][2]string{
		{"Anywhere", ""},
		{"1 / w", "Watch the run"},
		{"2 / H", "History of this workspace's runs"},
		{"3 / n", "Compose a new task"},
		{"4 / u", "Queue of tasks waiting to run"},
		{"5 / e", "Log: every event of the run, searchable"},
		{"?", "this help"},
		{"esc", "close the overlay on top"},
		{"y", "copy what has the focus (OSC 52; see Copying)"},
		{"M", "mouse capture on / off (off: the terminal selects text)"},
		{"q / ctrl+c", "quit (asks first while a run is live)"},
		{"E", "model endpoint: why it did not answer, or its settings"},
		{"N", "notes from start-up"},
		{"Watch", ""},
		{"tab", "toggle Flow / Sequence"},
		{"↑↓ / j k", "move the selection; the status line shows it whole"},
		{"←→", "caller / first callee (flow)"},
		{"h", "task history: the thread of this task"},
		{"pgup pgdn g G", "scroll the sequence; f follows the newest"},
		{"enter", "inspect the selection (J: a tool's JSON)"},
		{"t", "transcript of the selected role instance"},
		{"p", "plan disclosure (plan.md)"},
		{"L", "cycle labels: whimsical / friendly / detailed"},
		{"a", "answer the waiting question (or a queued one)"},
		{"r", "show the result card again"},
		{"i", "interrupt: ask the run or change its plan"},
		{"P / R / X", "pause / resume / terminate (asks first)"},
		{"b", "back to the live run after a replay"},
		{"The footer", ""},
		{"context", "the active role's conversation, of the model's window"},
		{"model @ host", "the model and the endpoint it is served from"},
		{"tokens", "reported by the endpoint (cached: reused prompt)"},
		{"$", "cost, when the deployment gives model.price"},
		{"last reply", "how long the latest model reply took"},
		{"Modals", ""},
		{"enter", "submit the answer (alt+enter: new line)"},
		{"↑↓ / 1-9", "pick an option in the question modal"},
		{"tab", "switch inquiry / plan change (interrupt)"},
		{"w", "result: what changed, file by file (←→ files)"},
		{"U / u", "result: revert the run's edits / what changed: revert the file"},
		{"d / c", "result: technical details / copy raw error"},
		{"/ n N", "transcript, log: search, next / previous match"},
		{"J", "transcript, inspector: tool calls as JSON / text"},
		{"y / Y", "transcript: copy a message / the whole transcript"},
		{"f", "log: filter by role (cycles)"},
		{"r / e", "endpoint dialog: retry / edit the settings"},
		{"History", ""},
		{"enter / o", "expand a run / open it in Watch (a replay)"},
		{"r", "resume a run that stopped before finishing"},
		{"Compose", ""},
		{"ctrl+s", "submit the task"},
		{"ctrl+g", "edit the text in $VISUAL / $EDITOR (also answers, interrupts)"},
		{"ctrl+e", "cycle effort: quick / standard / thorough"},
		{"ctrl+o / ctrl+x", "continue from a prior run / clear it"},
		{"ctrl+d", "show / hide technical details of the reference"},
		{"Queue", ""},
		{"↑↓ / j k", "select an item"},
		{"K J / shift+↑↓", "move the item up / down the queue"},
		{"e", "edit a waiting item (ctrl+s saves, ctrl+e effort)"},
		{"x", "cancel the item (asks first)"},
		{"r", "requeue a finished, failed or parked item"},
		{"a / enter", "answer a parked question"},
		{"o", "open the item's run in Watch"},
		{"Copying", ""},
		{"OSC 52", "y writes the text to the terminal's clipboard, over SSH"},
		{"tmux", "needs set -g set-clipboard on"},
		{"file", "when OSC 52 cannot carry it: GUILDHALL_CLIPBOARD=file"},
	}
}

type confirmState struct {
	prompt string
	action string // quit | terminate | cancel_queue
	id     string // the queue item to cancel
}

type questionState struct {
	opt    int // selected option, -1 for none
	editor editor
	scroll int
	// followOpt keeps the picked option in view until the operator
	// scrolls.
	followOpt bool
}

type interruptState struct {
	kind   string
	editor editor
	scroll int
}

type inspectorState struct {
	pid    string // a flow node's participant (key is the node), or
	key    string
	op     int // a sequence row (when pid is "")
	scroll int
	json   bool // a tool call or result as JSON (J)
}

type planState struct {
	text   string
	err    error
	loaded bool
	scroll int
}

type resultState struct {
	details bool
	scroll  int
}

func isAlreadyAnswered(err error) bool { return errors.Is(err, runner.ErrAlreadyAnswered) }

func submitError(err error) string {
	if errors.Is(err, runner.ErrRunInProgress) {
		return "a run is in progress; wait for it to finish"
	}
	return err.Error()
}

func controlNotice(what string) string {
	switch what {
	case "pause":
		return "Pause requested: the run pauses at its next safe point."
	case "resume":
		return "Resume requested."
	case "terminate":
		return "Terminate requested: the run ends at its next safe point."
	case "inquiry":
		return "Inquiry sent: the answer appears when the run reaches a safe point."
	case "plan_modification":
		return "Plan change sent: it applies at the run's next safe point."
	}
	return what + " done."
}

// handleKey routes a key to the overlay on top, else to the screen.
// Typed characters that arrive together (a fast typist, tmux send-keys)
// come as one message: each is handled in turn, so a "/" that opens a
// search sends the characters after it into the search.
func (m *Model) handleKey(k tea.KeyMsg) tea.Cmd {
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste && !m.typing() {
		var cmds []tea.Cmd
		for i, r := range k.Runes {
			if m.typing() {
				rest := k
				rest.Runes = k.Runes[i:]
				cmds = append(cmds, m.handleKey(rest))
				break
			}
			one := k
			one.Runes = []rune{r}
			cmds = append(cmds, m.handleKey(one))
		}
		return tea.Batch(cmds...)
	}
	key := k.String()
	m.flash = ""
	if key == "ctrl+c" {
		if m.confirm != nil && m.confirm.action == "quit" {
			return m.quit()
		}
		return m.askQuit()
	}
	if key == "M" && !m.typing() {
		return m.toggleMouse()
	}
	switch {
	case m.confirm != nil:
		return m.keyConfirm(key)
	case m.revert != nil:
		return m.keyRevert(key)
	case m.help:
		return m.keyPager(key, &m.helpScroll, func() { m.help, m.helpScroll = false, 0 }, "?")
	case m.endpoint != nil:
		return m.keyEndpoint(k)
	case m.notes != nil:
		return m.keyPager(key, &m.notes.scroll, func() { m.notes = nil }, "N")
	case m.queue.answer != nil:
		return m.keyQueueAnswer(k)
	case m.queue.edit != nil:
		return m.keyQueueEdit(k)
	case m.questionVisible():
		return m.keyQuestion(k)
	case m.interrupt != nil:
		return m.keyInterrupt(k)
	case m.transcript != nil:
		return m.keyTranscript(k)
	case m.inspector != nil:
		return m.keyInspector(key)
	case m.drawer != nil:
		return m.keyDrawer(key)
	case m.answerCard != nil:
		switch key {
		case "esc", "enter", "q":
			m.answerCard = nil
		case "y":
			return m.copyText("the answer", m.answerCard.answer)
		}
		return nil
	case m.diff != nil:
		return m.keyDiff(key)
	case m.showResult && m.view != nil && m.view.card != nil:
		return m.keyResult(key)
	case m.plan != nil:
		if key == "y" {
			return m.copyText("the plan", m.plan.text)
		}
		return m.keyPager(key, &m.plan.scroll, func() { m.plan = nil }, "p")
	}
	switch m.screen {
	case screenCompose:
		return m.keyCompose(k)
	case screenHistory:
		if c, ok := m.keyHistory(key); ok {
			return c
		}
	case screenQueue:
		if c, ok := m.keyQueue(key); ok {
			return c
		}
	case screenLog:
		if c, ok := m.keyLog(k); ok {
			return c
		}
	}
	return m.keyGlobal(key)
}

// typing reports whether keys go to a text editor.
func (m *Model) typing() bool {
	return m.questionVisible() || m.interrupt != nil || m.queue.answer != nil || m.queue.edit != nil ||
		(m.transcript != nil && m.transcript.searching) || (m.screen == screenLog && m.logv.typing) ||
		(m.screen == screenCompose && m.overlayBox() == nil)
}

// toggleMouse turns mouse capture on or off.
func (m *Model) toggleMouse() tea.Cmd {
	m.mouse = !m.mouse
	if m.mouse {
		m.flashNote("Mouse capture on: clicks select, the wheel scrolls. M gives the mouse back to the terminal.")
		return tea.EnableMouseCellMotion
	}
	m.flashNote("Mouse capture off: the terminal selects text. M turns capture on.")
	return tea.DisableMouse
}

func (m *Model) askQuit() tea.Cmd {
	// An attached console only lets go of the run: nothing to confirm.
	if m.runLive() && !m.opts.Attached {
		m.confirm = &confirmState{action: "quit", prompt: "A run is live. Quit? It stops at its next safe point and can be resumed later."}
		return nil
	}
	return m.quit()
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}

func (m *Model) keyConfirm(key string) tea.Cmd {
	switch key {
	case "y", "Y", "enter":
		c := m.confirm
		m.confirm = nil
		switch c.action {
		case "quit":
			return m.quit()
		case "terminate":
			id := m.live.id
			return controlCmd("terminate", func() error { return m.sess.Terminate(id) })
		case "cancel_queue":
			q, ctx, id := m.opts.Queue, m.ctx, c.id
			return queueOp("cancel", id, func() (store.QueueItem, error) { return q.Cancel(ctx, id) })
		}
	case "n", "N", "esc", "q":
		m.confirm = nil
	}
	return nil
}

func (m *Model) keyGlobal(key string) tea.Cmd {
	switch key {
	case "q":
		return m.askQuit()
	case "?":
		m.help = true
	case "esc":
		m.notice, m.notesUnseen, m.runNoteUnseen = "", false, false
	case "1", "w":
		m.screen = screenWatch
	case "2", "H":
		m.screen = screenHistory
		return loadHistory(m.ws)
	case "3", "n":
		m.screen = screenCompose
		return loadHistory(m.ws)
	case "4", "u":
		return m.openQueue()
	case "5", "e":
		m.screen = screenLog
		m.syncLog()
	case "L":
		m.res = m.res.WithTier(m.res.Tier().Next())
		m.notice = "Labels: " + string(m.res.Tier())
	case "E":
		if m.endpointProblem != "" {
			m.endpoint = &endpointState{problem: m.endpointProblem}
		} else if m.opts.Endpoint != nil && !m.runLive() {
			m.endpoint = &endpointState{form: newSettingsForm(m.opts.Endpoint.Settings())}
		}
	case "N":
		if len(m.allNotes()) > 0 {
			m.notes, m.notesUnseen, m.runNoteUnseen = &notesState{}, false, false
		}
	case "a":
		if len(m.questions) > 0 {
			m.qHidden = false
		} else if it, ok := m.firstQueuedQuestion(); ok {
			m.openQueueAnswer(it)
		}
	}
	if m.screen != screenWatch {
		return nil
	}
	return m.keyWatch(key)
}

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
		return m.copyFocused()
	case "r":
		if v != nil && v.card != nil {
			return m.openResult()
		}
		m.notice = "The run has not finished: there is no result yet."
	case "i":
		if why := m.cannotControl("interrupt"); why != "" {
			m.notice = why
			return nil
		}
		m.interrupt = &interruptState{kind: "inquiry"}
		m.interrupt.editor.placeholder = "Your question for the run, or the change to its plan"
	case "P":
		if why := m.cannotControl("pause"); why != "" {
			m.notice = why
			return nil
		}
		if m.live.paused != nil {
			m.notice = "The run is already paused: R resumes it."
			return nil
		}
		id := m.live.id
		return controlCmd("pause", func() error { return m.sess.Pause(id) })
	case "R":
		if why := m.cannotControl("resume"); why != "" {
			m.notice = why
			return nil
		}
		id := m.live.id
		return controlCmd("resume", func() error { return m.sess.Resume(id) })
	case "X":
		if why := m.cannotControl("terminate"); why != "" {
			m.notice = why
			return nil
		}
		m.confirm = &confirmState{action: "terminate", prompt: "Terminate the run? It ends as interrupted with its record intact."}
	}
	return nil
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
// message or the flow node's latest call, else the streaming reply.
func (m *Model) copyFocused() tea.Cmd {
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
		return m.copyText("the selected message", m.opCopy(v, idx, false))
	}
	if v == m.live && len(v.stream.raw) > 0 {
		return m.copyText("the streaming reply", string(v.stream.raw))
	}
	if v.card != nil {
		return m.copyText("the result summary", resultSummary(v))
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
		return controlCmd(kind, func() error { return m.sess.Interrupt(id, kind, msg) })
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
		task := strings.TrimSpace(c.editor.Value())
		if task == "" {
			m.notice = "The task is empty."
			return nil
		}
		return m.submit(runner.Submission{Task: task, Effort: c.effort, LogLevel: m.opts.LogLevel, ContinuesFrom: c.continueFrom})
	case "ctrl+e":
		es := efforts()
		for i, e := range es {
			if e == c.effort {
				c.effort = es[(i+1)%len(es)]
				return nil
			}
		}
		c.effort = "standard"
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
