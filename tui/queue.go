package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// Queue is what the console needs from the workspace's task queue: the
// list, the per-item operations the Queue screen offers, and submit-or-
// queue for Compose. *runner.Scheduler satisfies it; a remote client over
// the queue API can stand in for it.
type Queue interface {
	List() ([]store.QueueItem, error)
	Edit(ctx context.Context, id string, e store.QueueEdit) (store.QueueItem, error)
	MoveBy(ctx context.Context, id string, delta int) (store.QueueItem, error)
	Cancel(ctx context.Context, id string) (store.QueueItem, error)
	Requeue(ctx context.Context, id string) (store.QueueItem, error)
	Answer(ctx context.Context, id, answer string) (store.QueueItem, error)
	SubmitOrQueue(ctx context.Context, sub runner.Submission) (runID string, queued *store.QueueItem, err error)
}

// queueRefresh is how often the Queue list is re-read: the scheduler and
// other processes (guildhall queue add) change queue.json on their own.
const queueRefresh = time.Second

// Messages of the queue commands.
type (
	queueMsg struct {
		items []store.QueueItem
		err   error
	}
	queueTickMsg struct{}
	// queueOpMsg is the outcome of one operation on one item.
	queueOpMsg struct {
		op, id string
		item   store.QueueItem
		err    error
	}
)

// queueState is the Queue screen: the items in queue order and the
// selection, kept on the same item across refreshes and reorders.
type queueState struct {
	items   []store.QueueItem
	loaded  bool
	err     error
	sel     int
	selID   string
	scroll  int
	loading bool

	edit   *queueEditState
	answer *queueAnswerState
}

// queueEditState edits a waiting item's task and effort.
type queueEditState struct {
	id     string
	effort string
	editor editor
}

// queueAnswerState answers a needs_input item's parked question.
type queueAnswerState struct {
	id, runID string
	q         store.QueueQuestion
	questionState
	sent bool
}

func listQueue(q Queue) tea.Cmd {
	return func() tea.Msg {
		items, err := q.List()
		return queueMsg{items: items, err: err}
	}
}

func queueTick() tea.Cmd {
	return tea.Tick(queueRefresh, func(time.Time) tea.Msg { return queueTickMsg{} })
}

func queueOp(op, id string, fn func() (store.QueueItem, error)) tea.Cmd {
	return func() tea.Msg {
		it, err := fn()
		return queueOpMsg{op: op, id: id, item: it, err: err}
	}
}

func submitOrQueueCmd(ctx context.Context, q Queue, sub runner.Submission) tea.Cmd {
	return func() tea.Msg {
		id, queued, err := q.SubmitOrQueue(ctx, sub)
		return submitDoneMsg{runID: id, queued: queued, err: err}
	}
}

// queueError is an operation's error for the notice line. A store
// QueueItemError already names the item and its status; anything else is
// prefixed with the item.
func queueError(op, id string, err error) string {
	var ie *store.QueueItemError
	if errors.As(err, &ie) {
		s := ie.Error()
		return strings.ToUpper(s[:1]) + s[1:] + "."
	}
	return "Could not " + op + " queue item " + id + ": " + err.Error()
}

func queueDoneNotice(op, id string, it store.QueueItem) string {
	switch op {
	case "move":
		return fmt.Sprintf("Moved %s.", id)
	case "cancel":
		return fmt.Sprintf("Cancelled %s.", id)
	case "requeue":
		return fmt.Sprintf("Requeued %s at the end of the queue.", id)
	case "answer":
		return fmt.Sprintf("Answered %s: it runs next.", id)
	case "edit":
		return fmt.Sprintf("Saved %s.", id)
	}
	return op + " " + id + " done."
}

// applyQueue takes in a fresh list, keeping the selection on its item.
func (m *Model) applyQueue(msg queueMsg) {
	qs := &m.queue
	qs.loading = false
	qs.loaded, qs.err = true, msg.err
	if msg.err != nil {
		return
	}
	qs.items = msg.items
	qs.sel = min(qs.sel, max(0, len(qs.items)-1))
	for i, it := range qs.items {
		if it.ID == qs.selID {
			qs.sel = i
		}
	}
	if qs.sel < len(qs.items) {
		qs.selID = qs.items[qs.sel].ID
	}
	// A parked question answered or cancelled elsewhere closes its modal.
	if a := qs.answer; a != nil && !a.sent {
		if it, ok := m.queueItem(a.id); !ok || it.Status != store.QueueNeedsInput {
			qs.answer = nil
			m.notice = "Queue item " + a.id + " no longer needs an answer."
		}
	}
}

func (m *Model) queueItem(id string) (store.QueueItem, bool) {
	for _, it := range m.queue.items {
		if it.ID == id {
			return it, true
		}
	}
	return store.QueueItem{}, false
}

func (m *Model) selectedQueueItem() (store.QueueItem, bool) {
	qs := &m.queue
	if qs.sel < 0 || qs.sel >= len(qs.items) {
		return store.QueueItem{}, false
	}
	return qs.items[qs.sel], true
}

// queuedQuestions counts the parked questions waiting for an answer.
func (m *Model) queuedQuestions() int {
	n := 0
	for _, it := range m.queue.items {
		if it.Status == store.QueueNeedsInput && it.Question != nil {
			n++
		}
	}
	return n
}

// firstQueuedQuestion is the first item parked on a question.
func (m *Model) firstQueuedQuestion() (store.QueueItem, bool) {
	for _, it := range m.queue.items {
		if it.Status == store.QueueNeedsInput && it.Question != nil {
			return it, true
		}
	}
	return store.QueueItem{}, false
}

// queueRefreshCmd re-reads the list unless a read is already on its way.
func (m *Model) queueRefreshCmd() tea.Cmd {
	if m.opts.Queue == nil || m.queue.loading {
		return nil
	}
	m.queue.loading = true
	return listQueue(m.opts.Queue)
}

func (m *Model) openQueue() tea.Cmd {
	if m.opts.Queue == nil {
		m.notice = "This console has no task queue."
		return nil
	}
	m.screen = screenQueue
	return m.queueRefreshCmd()
}

// keyQueue handles the Queue screen's keys; ok is false for keys it leaves
// to the global handler.
func (m *Model) keyQueue(key string) (tea.Cmd, bool) {
	qs := &m.queue
	q := m.opts.Queue
	it, have := m.selectedQueueItem()
	ctx := m.ctx
	switch key {
	case "up", "k":
		qs.sel, qs.scroll = max(0, qs.sel-1), 0
	case "down", "j":
		qs.sel, qs.scroll = min(max(0, len(qs.items)-1), qs.sel+1), 0
	case "K", "shift+up", "J", "shift+down":
		if !have {
			return nil, true
		}
		delta := 1
		if key == "K" || key == "shift+up" {
			delta = -1
		}
		id := it.ID
		return queueOp("move", id, func() (store.QueueItem, error) { return q.MoveBy(ctx, id, delta) }), true
	case "x", "delete":
		if have {
			m.confirm = &confirmState{action: "cancel_queue", id: it.ID,
				prompt: "Cancel queue item " + it.ID + " (" + render.SanitizeLine(firstLine(it.Task)) + ")?"}
		}
	case "r":
		if have {
			id := it.ID
			return queueOp("requeue", id, func() (store.QueueItem, error) { return q.Requeue(ctx, id) }), true
		}
	case "e":
		if !have {
			return nil, true
		}
		if it.Status != store.QueueWaiting {
			m.notice = "Only a waiting item can be edited; " + it.ID + " is " + render.SanitizeLine(it.Status) + "."
			return nil, true
		}
		st := &queueEditState{id: it.ID, effort: it.Effort}
		st.editor.placeholder = "The task"
		st.editor.SetValue(it.Task)
		qs.edit = st
	case "a", "enter":
		if !have {
			return nil, true
		}
		if it.Status != store.QueueNeedsInput || it.Question == nil {
			if key == "a" {
				m.notice = it.ID + " has no question waiting for an answer."
			}
			return nil, true
		}
		m.openQueueAnswer(it)
	case "o":
		if have && it.RunID != "" {
			if m.live != nil && it.RunID == m.live.id {
				m.backToLive()
				m.screen = screenWatch
				return nil, true
			}
			return replayRun(m.ws, it.RunID), true
		}
	case "pgdown":
		qs.scroll += 5
	case "pgup":
		qs.scroll = max(0, qs.scroll-5)
	case "esc":
		m.screen = screenWatch
	default:
		return nil, false
	}
	if it, ok := m.selectedQueueItem(); ok {
		qs.selID = it.ID
	}
	return nil, true
}

func (m *Model) openQueueAnswer(it store.QueueItem) {
	st := &queueAnswerState{id: it.ID, runID: it.RunID, q: *it.Question, questionState: questionState{opt: -1}}
	st.editor.placeholder = "Type an answer, or pick an option"
	m.queue.answer = st
}

func (m *Model) keyQueueAnswer(k tea.KeyMsg) tea.Cmd {
	st := m.queue.answer
	switch k.String() {
	case "esc":
		m.queue.answer = nil
		return nil
	case "ctrl+g":
		return m.editExternally(editTarget{box: "queue-answer", id: st.id})
	case "enter":
		if st.sent {
			return nil
		}
		labels := make([]string, len(st.q.Options))
		for i, o := range st.q.Options {
			labels[i] = o.Label
		}
		answer := st.answer(labels)
		if answer == "" {
			m.notice = "Type an answer or pick an option."
			return nil
		}
		st.sent = true
		q, ctx, id := m.opts.Queue, m.ctx, st.id
		return queueOp("answer", id, func() (store.QueueItem, error) { return q.Answer(ctx, id, answer) })
	}
	if key := k.String(); !st.sent || key == "pgup" || key == "pgdown" {
		st.handleKey(k, len(st.q.Options))
	}
	return nil
}

func (m *Model) keyQueueEdit(k tea.KeyMsg) tea.Cmd {
	st := m.queue.edit
	switch k.String() {
	case "esc":
		m.queue.edit = nil
	case "ctrl+g":
		return m.editExternally(editTarget{box: "queue-edit", id: st.id})
	case "ctrl+s":
		task, ok := m.taskIn(&st.editor)
		if !ok {
			return nil
		}
		effort := st.effort
		q, ctx, id := m.opts.Queue, m.ctx, st.id
		m.queue.edit = nil
		return queueOp("edit", id, func() (store.QueueItem, error) {
			return q.Edit(ctx, id, store.QueueEdit{Task: &task, Effort: &effort})
		})
	case "ctrl+e":
		// "" is the project default; then the tiers.
		st.effort = nextOf(append([]string{""}, efforts()...), st.effort, "")
	case "enter":
		st.editor.Newline()
	default:
		st.editor.HandleKey(k)
	}
	return nil
}

// queueStatusGlyph marks an item's status.
func queueStatusGlyph(th theme, s string) string {
	switch s {
	case store.QueueWaiting:
		return "…"
	case store.QueueActive:
		return th.Render(toneActive, "●")
	case store.QueueNeedsInput:
		return th.Render(toneActive, "❓")
	case store.QueueDone:
		return th.Render(toneOK, "✓")
	case store.QueueError:
		return th.Render(toneErr, "✗")
	}
	return "■"
}

// queueView draws the Queue screen: the list, then the selected item.
func (m *Model) queueView(w, h int) []string {
	qs := &m.queue
	switch {
	case !qs.loaded && qs.err == nil:
		return []string{"", styleFaint.Render("  Reading the queue…")}
	case qs.err != nil && len(qs.items) == 0:
		return []string{"", "  Could not read the queue: " + render.SanitizeLine(qs.err.Error())}
	case len(qs.items) == 0:
		return []string{"", "  The queue is empty. Tasks submitted in Compose while a run is live wait here."}
	}
	wideRun := w >= 110
	head := fmt.Sprintf("  %-15s %-20s %-9s ", "STATUS", "ITEM", "EFFORT")
	if wideRun {
		head += fmt.Sprintf("%-20s ", "RUN")
	}
	out := []string{styleFaint.Render(fit(head+"TASK", w))}
	if qs.err != nil {
		out = append(out, m.th.Render(toneErr, fit("  The queue could not be re-read: "+render.SanitizeLine(qs.err.Error()), w)))
	}
	details := m.queueDetails(w - 2)
	listH := min(len(qs.items), max(3, (h-len(out))/2))
	if len(details) == 0 {
		listH = h - len(out)
	}
	start := max(0, min(qs.sel-listH/2, len(qs.items)-listH))
	pos := 0
	for i, it := range qs.items {
		if it.Status == store.QueueWaiting {
			pos++
		}
		if i < start || i >= start+listH {
			continue
		}
		status := queueStatusGlyph(m.th, it.Status) + " " + render.SanitizeLine(strings.ReplaceAll(it.Status, "_", " "))
		if it.Status == store.QueueWaiting {
			status += fmt.Sprintf(" #%d", pos)
		}
		effort := it.Effort
		if effort == "" {
			effort = "default"
		}
		line := "  " + fit(status, 15) + " " + fit(render.SanitizeLine(it.ID), 20) + " " + fit(render.SanitizeLine(effort), 9) + " "
		if wideRun {
			line += fit(render.SanitizeLine(it.RunID), 20) + " "
		}
		line = fit(line+render.SanitizeLine(firstLine(it.Task)), w)
		if i == qs.sel {
			line = styleSelected.Render(line)
		}
		out = append(out, line)
	}
	if len(details) > 0 {
		out = append(out, styleFaint.Render(strings.Repeat("─", w)))
		for _, l := range pager(details, qs.scroll, max(2, h-len(out)-1)) {
			out = append(out, " "+l)
		}
	}
	return out
}

// queueDetails is the selected item: machine fields plain; the task, the
// parked question and its context, the result summary and the error as
// safe Markdown.
func (m *Model) queueDetails(width int) []string {
	it, ok := m.selectedQueueItem()
	if !ok {
		return nil
	}
	out := []string{kv("Item", render.SanitizeLine(it.ID)) + "  " + kv("Status", render.SanitizeLine(it.Status))}
	if it.RunID != "" {
		r := kv("Run", render.SanitizeLine(it.RunID))
		if len(it.Runs) > 1 {
			r += styleFaint.Render(fmt.Sprintf("  (%d runs)", len(it.Runs)))
		}
		out = append(out, r)
	}
	if it.ContinuesFrom != "" {
		out = append(out, kv("Continues", render.SanitizeLine(it.ContinuesFrom)))
	}
	if !it.CreatedAt.IsZero() {
		out = append(out, kv("Queued", it.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")))
	}
	add := func(title, md string) {
		if strings.TrimSpace(md) == "" {
			return
		}
		out = append(out, styleTitle.Render(title))
		out = append(out, m.markdown(md, width)...)
	}
	if q := it.Question; q != nil && it.Status == store.QueueNeedsInput {
		add("Question (a to answer)", q.Text)
		add("Context", q.Context)
	}
	add("Task", it.Task)
	for _, a := range it.Answers {
		out = append(out, styleFaint.Render("You answered: ")+render.SanitizeLine(a.Answer))
	}
	add("Result", it.Summary)
	add("Error", it.Error)
	return out
}

func (m *Model) queueHint() string {
	return keyHint("↑↓", "select", "K/J", "move", "e", "edit", "x", "cancel", "r", "requeue", "a", "answer", "o", "open run", "?", "keys")
}

// queueAnswerBox is the parked question's modal: the question and its
// context as safe Markdown, the options, and a free answer.
func (m *Model) queueAnswerBox(w int) []string {
	st := m.queue.answer
	inner := w - 4
	who := "A queued run"
	if st.runID != "" {
		who = "Run " + render.SanitizeLine(st.runID)
	}
	head := []string{styleFaint.Render(clip(who+" stopped on this question; the answer starts its next run.", inner))}
	body := m.markdown(st.q.Text, inner)
	if strings.TrimSpace(st.q.Context) != "" {
		body = append(body, styleTitle.Render("Context"))
		body = append(body, m.markdown(st.q.Context, inner)...)
	}
	options := make([]event.Option, len(st.q.Options))
	for i, o := range st.q.Options {
		options[i] = event.Option{Label: o.Label, Description: o.Description}
	}
	hint := hints(inner, "enter", "send", "esc", "cancel", "↑↓/1-9", "option", "alt+enter", "new line", "ctrl+g", "editor")
	lines := m.answerForm(head, body, options, &st.questionState, st.sent, hint, inner)
	return boxed("Queued question · "+render.SanitizeLine(st.id), lines, w)
}

func (m *Model) queueEditBox(w int) []string {
	st := m.queue.edit
	lines := st.editor.Render(true)
	var effort []string
	for _, e := range append([]string{""}, efforts()...) {
		name := e
		if e == "" {
			name = "default"
		}
		if e == st.effort {
			effort = append(effort, styleSelected.Render(" "+name+" "))
		} else {
			effort = append(effort, " "+name+" ")
		}
	}
	lines = append(lines, "", "Effort "+strings.Join(effort, " "))
	lines = append(lines, keyHint("ctrl+s", "save", "ctrl+e", "effort", "enter", "new line", "esc", "cancel", "ctrl+g", "editor"))
	return boxed("Edit "+render.SanitizeLine(st.id), lines, w)
}
