package tui

import (
	"errors"

	tea "github.com/charmbracelet/bubbletea"

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
		{"y", "copy what has the focus, as shown (OSC 52; see Copying)"},
		{"Y", "Watch, inspector: copy it raw (as recorded, controls removed)"},
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

// controlNoticeWhileAsked is an interrupt's notice while a question is
// open: the run's next safe point comes after the answer.
func controlNoticeWhileAsked(what string) string {
	if what == "plan_modification" {
		return "Plan change sent: it applies after your answer."
	}
	return "Inquiry sent: the run takes it after your answer."
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
	switch m.topOverlay() {
	case overlayConfirm:
		return m.keyConfirm(key)
	case overlayRevert:
		return m.keyRevert(key)
	case overlayHelp:
		return m.keyPager(key, &m.helpScroll, func() { m.help, m.helpScroll = false, 0 }, "?")
	case overlayEndpoint:
		return m.keyEndpoint(k)
	case overlayNotes:
		return m.keyNotes(key)
	case overlayQueueAnswer:
		return m.keyQueueAnswer(k)
	case overlayQueueEdit:
		return m.keyQueueEdit(k)
	case overlayQuestion:
		return m.keyQuestion(k)
	case overlayInterrupt:
		return m.keyInterrupt(k)
	case overlayTranscript:
		return m.keyTranscript(k)
	case overlayInspector:
		return m.keyInspector(key)
	case overlayDrawer:
		return m.keyDrawer(key)
	case overlayAnswer:
		switch key {
		case "esc", "enter", "q":
			m.answerCard = nil
		case "y":
			return m.copyText("the answer", m.answerCard.answer)
		}
		return nil
	case overlayDiff:
		return m.keyDiff(key)
	case overlayResult:
		return m.keyResult(key)
	case overlayPlan:
		if key == "y" {
			return m.copyText("the plan", m.plan.text)
		}
		return m.keyPager(key, &m.plan.scroll, func() { m.plan = nil }, "p")
	}
	// No overlay, or the Compose picker, whose keys keyCompose handles.
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
		(m.screen == screenCompose && m.topOverlay() == overlayNone)
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
		prompt := "A run is live. Quit? It stops at its next safe point and can be resumed later."
		if m.opts.Ephemeral {
			prompt = "A run is live. Quit? The run stops and its temporary workspace is removed, so it cannot be resumed."
		}
		m.confirm = &confirmState{action: "quit", prompt: prompt}
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
