package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// View draws the frame: a pure function of the model.
func (m *Model) View() string {
	if m.quitting {
		return ""
	}
	return m.frame(true)
}

// frame draws the screen, with the overlay on top when withOverlay (the
// background alone otherwise, which the overlay tests compare against).
func (m *Model) frame(withOverlay bool) string {
	w, h := m.lay.width, m.lay.height
	lines := []string{m.topBar(w), fit(m.banner(), w)}
	var body []string
	switch m.screen {
	case screenHistory:
		body = m.historyView(w, h-3)
		lines = append(lines, padLines(body, w, h-3)...)
		lines = append(lines, fit(hints(w, "↑↓", "select", "enter", "expand", "o", "open in Watch", "r", "resume", "3", "Compose", "?", "keys"), w))
	case screenCompose:
		body = m.composeView(w, h-3)
		lines = append(lines, padLines(body, w, h-3)...)
		lines = append(lines, fit(hints(w, "ctrl+s", "submit", "ctrl+e", "effort", "ctrl+o", "continue from", "esc", "Watch", "?", "keys", "ctrl+g", "editor"), w))
	case screenQueue:
		body = m.queueView(w, h-3)
		lines = append(lines, padLines(body, w, h-3)...)
		lines = append(lines, fit(m.queueHint(), w))
	case screenLog:
		body = m.logView(w, h-3)
		lines = append(lines, padLines(body, w, h-3)...)
		lines = append(lines, fit(m.logHint(w), w))
	default:
		lines = append(lines, m.watchView(w)...)
	}
	lines = padLines(lines, w, h)
	if box := m.overlayBox(); box != nil && withOverlay {
		lines = overlay(lines, withFlash(m.th, box, m.flash, h), w, h)
	}
	return strings.Join(lines, "\n")
}

// topBar: app name, screens, the viewed run's id (whole, or not at all),
// a replay marker, status, effort, the help key. Segments drop by priority
// when the terminal is narrow; none is cut.
func (m *Model) topBar(w int) string {
	// Priorities: the current tab and the status stay longest, then the
	// replay marker and the run id; the other tabs go right to left.
	left := []segment{{" Guildhall", 10}}
	for i, t := range m.tabs() {
		if m.tabScreen(i) == m.screen {
			left = append(left, segment{" [" + t + "]", 90})
		} else {
			left = append(left, segment{" " + t, 20 - i})
		}
	}
	right := []segment{{" ? help ", 40}}
	if v := m.view; v != nil && v.id != "" {
		if m.replaying() {
			left = append(left, segment{"  ⏮ replay", 80})
		}
		left = append(left, segment{"  " + render.SanitizeLine(v.id), 70})
		right = []segment{{v.status(), 90}, {" · " + render.SanitizeLine(v.effort), 30}, {"  ? help ", 40}}
	}
	return styleBar.Render(spread(left, right, w))
}

// tabs are the screens' names in key order.
func (m *Model) tabs() []string {
	tabs := []string{"Watch", "History", "Compose"}
	if m.opts.Queue != nil {
		tabs = append(tabs, "Queue")
	}
	return append(tabs, "Log")
}

// tabScreen is the screen of the i-th tab.
func (m *Model) tabScreen(i int) screen {
	if i == len(m.tabs())-1 {
		return screenLog
	}
	return screen(i)
}

// replaying reports whether the run on screen is a past run read back
// from its log rather than the session's live one.
func (m *Model) replaying() bool { return m.view != nil && m.view != m.live }

// healthCopy is the banner's fixed copy per category, naming the
// deployment's model whose endpoint it is when that is a named one.
func healthCopy(h runner.HealthView) string {
	s := healthText(h)
	if s != "" && h.Model != "" {
		s = strings.Replace(s, "The model provider", "The endpoint of model "+render.SanitizeLine(h.Model), 1)
		s = strings.Replace(s, "the model provider", "the endpoint of model "+render.SanitizeLine(h.Model), 1)
	}
	return s
}

func healthText(h runner.HealthView) string {
	if h.State == runner.HealthSuspended {
		return "⚠ The model provider is unavailable: the run is suspended and resumes when it recovers."
	}
	if h.State != runner.HealthDegraded {
		return ""
	}
	switch h.Category {
	case "auth":
		return "⚠ The model provider rejected the credentials."
	case "rate_limit":
		return "⚠ The model provider is rate-limiting requests; retrying."
	case "server":
		return "⚠ The model provider reports server errors; retrying."
	case "timeout":
		return "⚠ Requests to the model provider are timing out; retrying."
	case "cut_stream":
		return "⚠ Replies from the model provider were cut off; retrying."
	case "malformed":
		return "⚠ The model provider sent malformed replies; retrying."
	case "context_length":
		return "⚠ A request exceeded the model's context window."
	case "network":
		return "⚠ The model provider cannot be reached; retrying."
	}
	return "⚠ The model provider is having trouble; retrying."
}

func (m *Model) banner() string {
	if m.replaying() {
		return m.replayBanner()
	}
	switch {
	case len(m.questions) > 0 && m.qHidden && m.notice != "":
		// Short, so the latest notice (an inquiry sent) still shows.
		return m.th.Render(toneBanner, "❓ A question waits (a)") + styleFaint.Render(" · "+m.notice)
	case len(m.questions) > 0 && m.qHidden:
		return m.th.Render(toneBanner, "❓ A question is waiting for you: press a to answer.")
	case m.view != nil && m.view.paused != nil && m.view == m.live:
		return m.th.Render(toneBanner, pauseCard(m.view.paused))
	}
	if n := m.queuedQuestions(); n > 0 {
		if m.notice != "" {
			// Short, so the latest notice still shows beside it.
			return m.th.Render(toneBanner, fmt.Sprintf("❓ %d queued (a answers)", n)) + styleFaint.Render(" · "+m.notice)
		}
		return m.th.Render(toneBanner, queuedQuestionsBanner(n))
	}
	if m.endpointProblem != "" {
		return m.th.Render(toneBanner, "⚠ The model endpoint did not answer: E shows why (r retry, e settings).")
	}
	if s := healthCopy(m.health); s != "" {
		return m.th.Render(toneBanner, s)
	}
	if m.runNoteUnseen && m.view != nil && len(m.view.notes) > 0 {
		return runNoteBanner(m.th, m.view.notes[len(m.view.notes)-1])
	}
	if m.notesUnseen {
		return notesBanner(m.th, m.opts.Notes, m.opts.Setup)
	}
	if m.notice != "" {
		return styleFaint.Render(m.notice)
	}
	if m.opts.Setup != "" {
		return styleFaint.Render(render.SanitizeLine(m.opts.Setup))
	}
	return ""
}

// replayBanner labels a replayed run as one, whatever the live run is
// doing: the live run's banners (a pause, the provider's health, egress)
// are not this run's and never sit over it. A live question and the
// latest notice show after the label.
func (m *Model) replayBanner() string {
	label := "⏮ Replay of " + render.SanitizeLine(m.view.id) + ", read from its log · b returns to the live run"
	extra := ""
	switch {
	case len(m.questions) > 0:
		extra = "❓ the live run asks: b, then a"
	case m.notice != "":
		extra = m.notice
	}
	if extra == "" {
		return m.th.Render(toneBanner, label)
	}
	return m.th.Render(toneBanner, "⏮ Replay") + styleFaint.Render(" · "+extra)
}

// queuedQuestionsBanner surfaces parked questions like a live one.
func queuedQuestionsBanner(n int) string {
	if n == 1 {
		return "❓ 1 queued question needs an answer: a answers it, u opens the queue."
	}
	return fmt.Sprintf("❓ %d queued questions need an answer: a answers the first, u opens the queue.", n)
}

// pauseCard is fixed copy, the status word and the time: never the
// platform's suspension message or any provider text.
func pauseCard(p *event.RunStatusPayload) string {
	if p.Status == store.StatusSuspended {
		return "⏸ Suspended: the model provider is unavailable. It resumes on its own when the provider recovers."
	}
	return "⏸ Paused by the operator. R resumes, X terminates."
}

func (m *Model) watchView(w int) []string {
	v := m.view
	body := m.lay.bodyH
	out := []string{m.identityLine(v, w)}
	var fl flowLayout
	switch {
	case (v == nil || v.id == "") && m.heldTask != nil && m.connecting:
		out = append(out, padLines([]string{"", "  Connecting to the model endpoint: your task starts once it answers.", "",
			"  " + keyHint("H", "history of this workspace", "?", "every key")}, w, body)...)
	case (v == nil || v.id == "") && m.heldTask != nil:
		// A task was given: it waits, it is not missing.
		lines := []string{""}
		for _, l := range strings.Split(wrapPlain("Your task waits for the model endpoint and starts once it answers. E shows why it did not, and e there changes its settings.", w-4), "\n") {
			lines = append(lines, "  "+l)
		}
		lines = append(lines, "", "  "+keyHint("E", "endpoint", "H", "history of this workspace", "?", "every key"))
		out = append(out, padLines(lines, w, body)...)
	case v == nil || v.id == "":
		out = append(out, padLines([]string{
			"",
			"  No run yet.",
			"",
			"  " + keyHint("n", "compose a task", "H", "history of this workspace", "?", "every key"),
		}, w, body)...)
	case m.kind == viewSequence:
		out = append(out, padLines(renderSequence(m.th, v, m.res, m.seqTop, m.seqSel, m.phase, w, body), w, body)...)
	default:
		fl = layoutFlow(v, m.res, w, body)
		out = append(out, padLines(renderFlow(m.th, v, m.res, fl, m.flowSel, m.phase, w, body), w, body)...)
	}
	// The active role's reply, streaming.
	out = append(out, m.paneHeader(v, w))
	var stream []string
	if v != nil && v == m.live && v.stream.roleID != "" && v.stream.width == w {
		stream = v.stream.lines
	}
	out = append(out, padLines(stream, w, m.lay.streamH)...)
	out = append(out, fit(m.statusLine(v, fl, w), w))
	out = append(out, m.footer(v, w))
	return out
}

// statusLine shows the focused item's full text (the flow node or the
// sequence message the selection is on), else what the run is doing now.
func (m *Model) statusLine(v *runView, fl flowLayout, w int) string {
	if v == nil {
		return ""
	}
	if full := m.focusText(v, fl); full != "" {
		return styleTitle.Render("▸ ") + full
	}
	caption := render.NowCaption(v.model, m.res)
	if caption == "" && v.card != nil {
		caption = "Finished: " + runStatusWord(v) + ". r shows the result."
	}
	return styleTitle.Render(caption)
}

// focusText is the whole text of what the selection is on, or "".
func (m *Model) focusText(v *runView, fl flowLayout) string {
	if m.kind == viewSequence {
		if m.seqFollow || len(v.model.Operations) == 0 {
			return ""
		}
		if m.seqSel >= len(v.model.Operations) {
			return "end · " + runStatusWord(v)
		}
		op := v.model.Operations[m.seqSel]
		src, _ := v.model.Participant(op.Source)
		dst, _ := v.model.Participant(op.Destination)
		return fmt.Sprintf("%d · %s", m.seqSel+1, opLabel(m.res, op, src, dst))
	}
	if m.flowSel == "" {
		return ""
	}
	if i := fl.cellOf(m.flowSel); i >= 0 {
		return fl.cells[i].full
	}
	return ""
}

// footer: the meters on the left, the keys that act on the right; both
// drop what does not fit, "? keys" last.
func (m *Model) footer(v *runView, w int) string {
	var hints []segment
	add := func(key, what string, prio int) {
		hints = append(hints, segment{"  " + keyHint(key, what), prio})
	}
	if v != nil && len(v.model.Operations) > 0 {
		add("tab", m.otherViewName(), 3)
		add("enter", "inspect", 2)
	}
	if v != nil && v.id != "" {
		add("p", "plan", 1)
	}
	if m.runLive() && !m.replaying() {
		add("i", "interrupt", 2)
	}
	if m.replaying() {
		add("b", "live run", 5)
	}
	add("?", "keys", 10)
	meters := m.footerMeters(v)
	switch {
	case m.connecting:
		meters = m.connectingMeters()
	case v == nil || v.id == "":
		meters = m.idleMeters()
	}
	return fit(spread(meters, hints, w), w)
}

func (m *Model) otherViewName() string {
	if m.kind == viewFlow {
		return "sequence"
	}
	return "flow"
}

// Overlays.

func (m *Model) overlayWidth() int { return max(20, min(m.lay.width-4, 100)) }

// overlayBodyH is the scrollable body height of a document overlay.
func (m *Model) overlayBodyH() int { return max(3, m.lay.height-6) }

func (m *Model) overlayBox() []string {
	w := m.overlayWidth()
	switch m.topOverlay() {
	case overlayConfirm:
		return m.confirmBox(w)
	case overlayRevert:
		return m.revertBox(w)
	case overlayHelp:
		return m.helpBox(w)
	case overlayEndpoint:
		return m.endpointBox(w)
	case overlayNotes:
		return m.notesBox(w)
	case overlayQueueAnswer:
		return m.queueAnswerBox(w)
	case overlayQueueEdit:
		return m.queueEditBox(w)
	case overlayQuestion:
		return m.questionBox(w)
	case overlayInterrupt:
		return m.interruptBox(w)
	case overlayTranscript:
		return m.transcriptBox(w)
	case overlayInspector:
		return m.inspectorBox(w)
	case overlayDrawer:
		return m.drawerBox(w)
	case overlayAnswer:
		return m.answerBox(w)
	case overlayDiff:
		return m.diffBox(w)
	case overlayResult:
		return m.resultBox(w)
	case overlayPlan:
		return m.planBox(w)
	case overlayPicker:
		return m.pickerBox(w)
	}
	return nil
}

// confirmBox is a yes/no dialog sized to its prompt, which wraps rather
// than being cut.
func (m *Model) confirmBox(w int) []string {
	maxw := min(w, 64)
	lines := wrapStyled(m.confirm.prompt, maxw-4)
	lines = append(lines, "", keyHint("y", "yes", "n", "no"))
	return boxedFit("Confirm", lines, maxw)
}

// pager cuts a document to the overlay body at scroll.
func pager(lines []string, scroll, height int) []string {
	maxScroll := max(0, len(lines)-height)
	scroll = max(0, min(scroll, maxScroll))
	end := min(len(lines), scroll+height)
	out := append([]string(nil), lines[scroll:end]...)
	if maxScroll > 0 {
		out = append(out, styleFaint.Render(fmt.Sprintf("── %d–%d of %d · ↑↓ pgup pgdn", scroll+1, end, len(lines))))
	}
	return out
}

func (m *Model) markdown(text string, width int) []string {
	return strings.Split(strings.TrimRight(m.md.Render(text, width), "\n"), "\n")
}

func (m *Model) helpBox(w int) []string {
	h := m.overlayBodyH()
	two := len(keyHelp()) > h && w >= 90
	colW := w - 4
	if two {
		colW = (w - 4) / 2
	}
	// Keys in a column of their own; descriptions wrap beneath it.
	keyW := min(16, colW/3)
	var lines []string
	for _, k := range keyHelp() {
		if k[1] == "" {
			lines = append(lines, styleTitle.Render(k[0]))
			continue
		}
		for i, d := range wrapStyled(k[1], max(8, colW-keyW-4)) {
			key := ""
			if i == 0 {
				key = k[0]
			}
			lines = append(lines, "  "+fit(key, keyW)+" "+d)
		}
	}
	if two {
		half := (len(lines) + 1) / 2
		var out []string
		for i := 0; i < half; i++ {
			r := ""
			if i+half < len(lines) {
				r = lines[i+half]
			}
			out = append(out, fit(lines[i], colW)+r)
		}
		lines = out
	}
	return boxed("Keys · esc closes", pager(lines, m.helpScroll, h), w)
}

func (m *Model) questionBox(w int) []string {
	pq := m.questions[0]
	q := pq.q
	inner := w - 4
	roleLabel := m.res.ParticipantLabel(render.Participant{Kind: render.KindRole, Role: q.Role})
	head := []string{styleFaint.Render(clip("Run "+render.SanitizeLine(pq.runID)+" · "+roleLabel+" asks", inner))}
	var body []string
	body = append(body, m.markdown(q.Question, inner)...)
	if strings.TrimSpace(q.Context) != "" {
		body = append(body, styleTitle.Render("Context"))
		body = append(body, m.markdown(q.Context, inner)...)
	} else if strings.TrimSpace(q.AssistantText) != "" {
		body = append(body, styleTitle.Render("Previous assistant message (no context was provided)."))
		body = append(body, m.markdown(q.AssistantText, inner)...)
	}
	options := make([]event.Option, len(q.Options))
	copy(options, q.Options)
	hint := hints(inner, "enter", "send", "esc", "later", "↑↓/1-9", "option", "alt+enter", "new line", "ctrl+g", "editor")
	lines := m.answerForm(head, body, options, &m.q, pq.sent, hint, inner)
	title := "Question"
	if len(m.questions) > 1 {
		title += fmt.Sprintf(" (1 of %d)", len(m.questions))
	}
	return boxed(title, lines, w)
}

// answerForm lays out a question modal's inside: the head, the question
// and its options (which scroll together when the screen is short,
// keeping the picked option in view), the answer editor and the keys.
func (m *Model) answerForm(head, body []string, options []event.Option, st *questionState, sent bool, hint string, inner int) []string {
	opts := m.optionLines(options, st.opt, inner)
	foot := st.editor.Render(!sent)
	if sent {
		hint = styleFaint.Render("Sending…")
	}
	foot = append(foot, hint)
	room := max(2, m.lay.height-2-len(head)-len(foot)-2)
	doc := append(append([]string(nil), body...), opts.lines...)
	scroll := st.scroll
	if st.opt >= 0 && st.followOpt && len(doc) > room {
		first, last := len(body)+opts.first[st.opt], len(body)+opts.last[st.opt]
		scroll = max(0, min(first, last-room+2))
	}
	lines := append(append([]string(nil), head...), pager(doc, scroll, room)...)
	return append(lines, foot...)
}

// optionList is a question's options laid out: each option's label, its
// description wrapped beneath it, and where each option starts and ends.
type optionList struct {
	lines       []string
	first, last []int
}

func (m *Model) optionLines(options []event.Option, sel, inner int) optionList {
	var ol optionList
	for i, o := range options {
		ol.first = append(ol.first, len(ol.lines))
		mark := "  "
		label := fmt.Sprintf("%d. %s", i+1, render.SanitizeLine(o.Label))
		if i == sel {
			mark = "▸ "
		}
		for j, l := range wrapStyled(label, inner-2) {
			if j == 0 && i == sel {
				l = styleSelected.Render(l)
			}
			if j == 0 {
				ol.lines = append(ol.lines, mark+l)
			} else {
				ol.lines = append(ol.lines, "     "+l)
			}
		}
		if d := render.SanitizeLine(o.Description); strings.TrimSpace(d) != "" {
			for _, l := range wrapStyled(d, inner-5) {
				ol.lines = append(ol.lines, "     "+styleFaint.Render(l))
			}
		}
		ol.last = append(ol.last, len(ol.lines)-1)
	}
	return ol
}

func (m *Model) interruptBox(w int) []string {
	st := m.interrupt
	inner := w - 4
	kinds := "▸ Ask the run a question   Change its plan"
	if st.kind == "plan_modification" {
		kinds = "  Ask the run a question ▸ Change its plan"
	}
	lines := []string{kinds + styleFaint.Render("   (tab switches)"), ""}
	var hist []string
	for _, q := range m.live.inquiries {
		what := "You asked"
		if q.kind == "plan_modification" {
			what = "You changed the plan"
		}
		hist = append(hist, styleTitle.Render(what)+": "+render.SanitizeLine(q.message))
		switch {
		case q.sent && len(m.questions) > 0:
			hist = append(hist, styleFaint.Render("  sent: the run takes it once the open question is answered"))
		case q.sent:
			hist = append(hist, styleFaint.Render("  sent: the run takes it at its next safe point"))
		case q.dropped != "":
			hist = append(hist, styleFaint.Render("  not delivered: no inquiry handler is configured"))
		case q.answered:
			hist = append(hist, m.markdown(q.answer, inner)...)
		case q.kind == "inquiry":
			hist = append(hist, styleFaint.Render("  waiting for the answer…"))
		}
	}
	if len(hist) == 0 {
		hist = []string{styleFaint.Render("No inquiries yet.")}
	}
	room := max(3, m.lay.height-12)
	lines = append(lines, pager(hist, max(0, len(hist)-room+st.scroll), room)...)
	lines = append(lines, "")
	lines = append(lines, st.editor.Render(true)...)
	lines = append(lines, hints(inner, "enter", "send", "esc", "cancel", "alt+enter", "new line", "ctrl+g", "editor"))
	return boxed("Interrupt "+m.live.id, lines, w)
}

func (m *Model) answerBox(w int) []string {
	a := m.answerCard
	lines := []string{styleFaint.Render("You asked: ") + render.SanitizeLine(a.message), ""}
	lines = append(lines, m.markdown(a.answer, w-4)...)
	lines = append(lines, "", keyHint("esc", "close"))
	return boxed("Answer from the run", pager(lines, 0, m.overlayBodyH()), w)
}

// resultError is the run's surfaced error, if any.
func resultError(v *runView) *event.ErrorInfo {
	if v == nil || v.card == nil {
		return nil
	}
	if v.card.Error != nil {
		return v.card.Error
	}
	if v.card.Card != nil {
		return v.card.Card.Error
	}
	return nil
}

// statusGlyph is a run status's glyph, by the one outcome rule.
func statusGlyph(th theme, s string) string {
	g := render.RoleVerdict(s, "").Glyph
	switch g {
	case "✓":
		return th.Render(toneOK, g)
	case "✗":
		return th.Render(toneErr, g)
	}
	return "■"
}

func (m *Model) planBox(w int) []string {
	p := m.plan
	var lines []string
	switch {
	case !p.loaded:
		lines = []string{styleFaint.Render("Reading plan.md…")}
	case p.err != nil:
		lines = []string{"Could not read the plan: " + render.SanitizeLine(p.err.Error())}
	case strings.TrimSpace(p.text) == "":
		lines = []string{styleFaint.Render("This run has no plan yet.")}
	default:
		lines = m.markdown(p.text, w-4)
	}
	return boxed("Plan · "+m.view.id+" · esc closes", pager(lines, p.scroll, m.overlayBodyH()), w)
}

// opCopy is the text y copies for an operation: what the inspector shows.
func (m *Model) opCopy(v *runView, idx int, asJSON bool) string {
	if v == nil || idx < 0 || idx >= len(v.model.Operations) {
		return ""
	}
	op, _ := v.model.OperationDetails(v.model.Operations[idx].ID)
	if raw, _, ok := v.model.OperationPayload(op.ID); ok {
		if asJSON {
			return prettyJSON(raw)
		}
		return resultText(raw)
	}
	return op.Details
}

func kv(k, v string) string { return styleFaint.Render(fmt.Sprintf("%-12s", k)) + v }

func (m *Model) transcriptBox(w int) []string {
	t := m.transcript
	h := m.overlayBodyH() - 1
	var lines []string
	switch {
	case !t.loaded:
		lines = []string{styleFaint.Render("Reading the log…")}
	case len(t.entries) == 0:
		lines = []string{styleFaint.Render("No messages logged for this role instance.")}
	default:
		lines = t.render(m.th, w-4, h)
	}
	lines = padLines(lines, w-4, h)
	mode := "JSON"
	if t.json {
		mode = "text"
	}
	foot := hints(w-4, "esc", "close", "/", "search", "n N", "next/prev", "J", mode, "y", "copy message", "Y", "copy all")
	switch {
	case t.searching:
		foot = "/" + strings.TrimPrefix(t.search.Render(true)[0], "│ ")
	case t.find.query != "":
		foot = styleTitle.Render(t.find.status()) + "  " + hints(w-4-ansi.StringWidth(t.find.status())-2, "n N", "next/prev", "/", "new search", "esc", "close")
	case t.note != "":
		foot = styleFaint.Render(t.note) + "  " + foot
	}
	lines = append(lines, foot)
	return boxed(fmt.Sprintf("Transcript · %s · %d messages", t.label, t.messages()), lines, w)
}

func (m *Model) pickerBox(w int) []string {
	rows := m.pickable()
	var lines []string
	if len(rows) == 0 {
		lines = []string{styleFaint.Render("No finished runs to continue from.")}
	}
	for i, r := range rows {
		line := fit(fmt.Sprintf("%s  %-20s %s", r.id, render.SanitizeLine(r.meta.Status), render.SanitizeLine(r.summary)), w-6)
		if i == m.compose.pickSel {
			line = styleSelected.Render(line)
		}
		lines = append(lines, line)
	}
	start := max(0, m.compose.pickSel-m.overlayBodyH()+2)
	return boxed("Continue from · enter picks · esc cancels", pager(lines[start:], 0, m.overlayBodyH()), w)
}

// detailJSON renders raw technical detail as sanitized preformatted text.
func detailJSON(raw json.RawMessage, width int) []string {
	return strings.Split(wrapPlain(render.Sanitize(prettyJSON(string(raw))), width), "\n")
}

// technicalDetails is an error's raw detail behind a disclosure: open, a
// title with the detail indented under it; closed, the title and hint, the
// key that opens it.
func technicalDetails(raw json.RawMessage, open bool, width int, hint string) []string {
	if !open {
		return []string{styleTitle.Render("▸ Technical details") + styleFaint.Render(" ("+hint+")")}
	}
	out := []string{styleTitle.Render("▾ Technical details")}
	for _, l := range detailJSON(raw, width-2) {
		out = append(out, "  "+l)
	}
	return out
}

// artifactLines lists a result's artifacts, each a safe line indented
// under a title of the caller's.
func artifactLines(artifacts []string, width int) []string {
	out := make([]string, len(artifacts))
	for i, a := range artifacts {
		out[i] = "  " + clip(render.SanitizeLine(a), width-2)
	}
	return out
}
