package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

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
	w, h := m.lay.width, m.lay.height
	lines := []string{m.topBar(w), fit(m.banner(), w)}
	var body []string
	switch m.screen {
	case screenHistory:
		body = m.historyView(w, h-3)
		lines = append(lines, padLines(body, w, h-3)...)
		lines = append(lines, fit(keyHint("↑↓", "select", "enter", "expand", "o", "open in Watch", "r", "resume", "3", "Compose", "?", "keys"), w))
	case screenCompose:
		body = m.composeView(w, h-3)
		lines = append(lines, padLines(body, w, h-3)...)
		lines = append(lines, fit(keyHint("ctrl+s", "submit", "ctrl+e", "effort", "ctrl+o", "continue from", "esc", "Watch", "?", "keys"), w))
	case screenQueue:
		body = m.queueView(w, h-3)
		lines = append(lines, padLines(body, w, h-3)...)
		lines = append(lines, fit(m.queueHint(), w))
	default:
		lines = append(lines, m.watchView(w)...)
	}
	lines = padLines(lines, w, h)
	if box := m.overlayBox(); box != nil {
		lines = overlay(lines, box, w, h)
	}
	return strings.Join(lines, "\n")
}

// topBar: app name, screens, the viewed run's label, status, effort, keys.
func (m *Model) topBar(w int) string {
	tabs := []string{"Watch", "History", "Compose"}
	if m.opts.Queue != nil {
		tabs = append(tabs, "Queue")
	}
	var b strings.Builder
	b.WriteString(" Guildhall ")
	for i, t := range tabs {
		if screen(i) == m.screen {
			b.WriteString("[" + t + "]")
		} else {
			b.WriteString(" " + t + " ")
		}
	}
	right := " ? help "
	v := m.view
	if v != nil && v.id != "" {
		label := m.runLabel(v)
		b.WriteString("  " + v.id)
		if label != "" {
			b.WriteString(" · " + label)
		}
		right = " " + v.status() + " · " + render.SanitizeLine(v.effort) + right
	}
	left := b.String()
	room := w - ansi.StringWidth(right)
	return styleBar.Render(fit(left, room) + right)
}

// runLabel is the run's one-line label as plain text: its summary, else
// the first line of its task.
func (m *Model) runLabel(v *runView) string {
	if s := m.summaries[v.id]; s != "" {
		return render.SanitizeLine(s)
	}
	return render.SanitizeLine(firstLine(v.task))
}

// healthCopy is the banner's fixed copy per category.
func healthCopy(h runner.HealthView) string {
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
	switch {
	case len(m.questions) > 0 && m.qHidden:
		return styleBanner.Render("❓ A question is waiting for you: press a to answer.")
	case m.view != nil && m.view.paused != nil && m.view == m.live:
		return styleBanner.Render(pauseCard(m.view.paused))
	}
	if n := m.queuedQuestions(); n > 0 {
		if m.notice != "" {
			// Short, so the latest notice still shows beside it.
			return styleBanner.Render(fmt.Sprintf("❓ %d queued (a answers)", n)) + styleFaint.Render(" · "+m.notice)
		}
		return styleBanner.Render(queuedQuestionsBanner(n))
	}
	if m.endpointProblem != "" {
		return styleBanner.Render("⚠ The model endpoint did not answer: E shows why (r retry, e settings).")
	}
	if s := healthCopy(m.health); s != "" {
		return styleBanner.Render(s)
	}
	if m.notesUnseen {
		return notesBanner(m.opts.Notes, m.opts.Setup)
	}
	if m.notice != "" {
		return styleFaint.Render(m.notice)
	}
	if m.opts.Setup != "" {
		return styleFaint.Render(render.SanitizeLine(m.opts.Setup))
	}
	return ""
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
	if v == nil || v.id == "" {
		out = append(out, padLines([]string{
			"",
			"  No run yet.",
			"",
			"  " + keyHint("n", "compose a task", "H", "history of this workspace", "?", "every key"),
		}, w, body)...)
	} else if m.kind == viewSequence {
		out = append(out, padLines(renderSequence(v, m.res, m.seqTop, m.seqSel, m.phase, w, body), w, body)...)
	} else {
		fl := layoutFlow(v, m.res, w, body)
		out = append(out, padLines(renderFlow(v, m.res, fl, m.flowSel, m.phase, w, body), w, body)...)
	}
	// The active role's reply, streaming.
	header := "── reply "
	var stream []string
	if v != nil && v == m.live && v.stream.roleID != "" {
		if p, ok := v.model.Participant(v.stream.roleID); ok {
			header = "── " + m.res.ParticipantLabel(p) + " "
		}
		stream = v.streamLines(m.lay.streamH)
	}
	out = append(out, styleFaint.Render(fit(header+strings.Repeat("─", w), w)))
	out = append(out, padLines(stream, w, m.lay.streamH)...)
	caption := ""
	if v != nil {
		caption = render.NowCaption(v.model, m.res)
		if caption == "" && v.card != nil {
			caption = "Finished: " + runStatusWord(v) + ". r shows the result."
		}
	}
	out = append(out, fit(styleTitle.Render(caption), w))
	cost := ""
	if v != nil {
		cost = render.CostStrip(v.model).String()
	}
	hint := keyHint("tab", m.otherViewName(), "enter", "inspect", "p", "plan", "i", "interrupt", "?", "keys")
	out = append(out, fit(cost+"  "+hint, w))
	return out
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
	switch {
	case m.confirm != nil:
		return boxed("Confirm", []string{m.confirm.prompt, "", keyHint("y", "yes", "n", "no")}, min(w, 70))
	case m.help:
		return m.helpBox(w)
	case m.endpoint != nil:
		return m.endpointBox(w)
	case m.notes != nil:
		return m.notesBox(w)
	case m.queue.answer != nil:
		return m.queueAnswerBox(w)
	case m.queue.edit != nil:
		return m.queueEditBox(w)
	case m.questionVisible():
		return m.questionBox(w)
	case m.interrupt != nil:
		return m.interruptBox(w)
	case m.transcript != nil:
		return m.transcriptBox(w)
	case m.inspector != nil:
		return m.inspectorBox(w)
	case m.drawer != nil:
		return m.drawerBox(w)
	case m.answerCard != nil:
		return m.answerBox(w)
	case m.showResult && m.view != nil && m.view.card != nil:
		return m.resultBox(w)
	case m.plan != nil:
		return m.planBox(w)
	case m.screen == screenCompose && m.compose.picking:
		return m.pickerBox(w)
	}
	return nil
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
	var lines []string
	for _, k := range keyHelp() {
		if k[1] == "" {
			lines = append(lines, styleTitle.Render(k[0]))
			continue
		}
		lines = append(lines, fmt.Sprintf("  %-16s %s", k[0], k[1]))
	}
	h := m.overlayBodyH()
	if len(lines) > h && w >= 90 {
		// Two columns when tall.
		half := (len(lines) + 1) / 2
		var two []string
		for i := 0; i < half; i++ {
			r := ""
			if i+half < len(lines) {
				r = lines[i+half]
			}
			two = append(two, fit(lines[i], (w-4)/2)+r)
		}
		lines = two
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
	var opts []string
	for i, o := range q.Options {
		line := fmt.Sprintf("%d. %s", i+1, render.SanitizeLine(o.Label))
		if o.Description != "" {
			line += styleFaint.Render(" — " + render.SanitizeLine(o.Description))
		}
		line = clip(line, inner-2)
		if i == m.q.opt {
			opts = append(opts, "▸ "+styleSelected.Render(line))
		} else {
			opts = append(opts, "  "+line)
		}
	}
	foot := m.q.editor.Render(!pq.sent)
	hint := keyHint("enter", "send", "alt+enter", "new line", "↑↓/1-9", "option", "esc", "later")
	if pq.sent {
		hint = styleFaint.Render("Sending…")
	}
	foot = append(foot, hint)
	room := max(3, m.lay.height-2-len(head)-len(opts)-len(foot)-2)
	lines := append(head, pager(body, m.q.scroll, room)...)
	lines = append(lines, opts...)
	lines = append(lines, foot...)
	title := "Question"
	if len(m.questions) > 1 {
		title += fmt.Sprintf(" (1 of %d)", len(m.questions))
	}
	return boxed(title, lines, w)
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
	lines = append(lines, keyHint("enter", "send", "alt+enter", "new line", "esc", "cancel"))
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

func (m *Model) resultBox(w int) []string {
	v := m.view
	inner := w - 4
	p := v.card
	lines := []string{styleTitle.Render("Status: ") + statusGlyph(p.Status) + " " + render.SanitizeLine(p.Status)}
	if p.Card != nil {
		if strings.TrimSpace(p.Card.Summary) != "" {
			lines = append(lines, "")
			lines = append(lines, m.markdown(p.Card.Summary, inner)...)
		}
		if len(p.Card.Artifacts) > 0 {
			lines = append(lines, styleTitle.Render("Artifacts"))
			for _, a := range p.Card.Artifacts {
				lines = append(lines, "  "+clip(render.SanitizeLine(a), inner-2))
			}
		}
	}
	if ei := resultError(v); ei != nil {
		lines = append(lines, "", styleErr.Render("The run reported an error."))
		if ei.Message != "" {
			lines = append(lines, m.markdown(ei.Message, inner)...)
		}
		if len(ei.Details) > 0 {
			if m.resultOpen.details {
				lines = append(lines, styleTitle.Render("▾ Technical details"))
				for _, l := range strings.Split(wrapPlain(render.Sanitize(prettyJSON(string(ei.Details))), inner-2), "\n") {
					lines = append(lines, "  "+l)
				}
			} else {
				lines = append(lines, styleTitle.Render("▸ Technical details")+styleFaint.Render(" (d shows them)"))
			}
		}
	}
	body := pager(lines, m.resultOpen.scroll, m.overlayBodyH()-1)
	hint := keyHint("esc", "close", "d", "details", "c", "copy raw")
	if resultError(v) == nil {
		hint = keyHint("esc", "close", "H", "history", "n", "new task")
	}
	body = append(body, hint)
	return boxed("Result · "+v.id, body, w)
}

func statusGlyph(s string) string {
	switch s {
	case "success":
		return styleOK.Render("✓")
	case "error":
		return styleErr.Render("✗")
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

func (m *Model) inspectorBox(w int) []string {
	v := m.view
	mod := v.model
	inner := w - 4
	var lines []string
	var opIdx = -1
	title := "Inspector"
	if st := m.inspector; st.pid != "" {
		p, ok := mod.Participant(st.pid)
		if !ok {
			return boxed(title, []string{"Nothing selected."}, w)
		}
		title = m.res.ParticipantLabel(p)
		lines = append(lines, kv("Kind", string(p.Kind)), kv("Name", render.SanitizeLine(p.Role)))
		if p.RoleID != "" {
			lines = append(lines, kv("Instance", render.SanitizeLine(p.RoleID)))
		}
		if d := m.res.ParticipantDescription(p); d != "" {
			lines = append(lines, kv("About", d))
		}
		lines = append(lines, kv("Invocations", fmt.Sprint(p.Invocations)))
		if p.Turns > 0 {
			lines = append(lines, kv("Model turns", fmt.Sprint(p.Turns)))
		}
		lines = append(lines, kv("Tokens", metricsLine(p.Metrics)))
		if i, ok := v.lastCall[st.pid]; ok {
			opIdx = i
		}
	} else {
		opIdx = st.op
	}
	if opIdx >= 0 && opIdx < len(mod.Operations) {
		op, _ := mod.OperationDetails(mod.Operations[opIdx].ID)
		src, _ := mod.Participant(op.Source)
		dst, _ := mod.Participant(op.Destination)
		if m.inspector.pid == "" {
			title = m.res.OperationLabel(op, src, dst)
			lines = append(lines, kv("Kind", string(op.Kind)), kv("From", m.res.ParticipantLabel(src)), kv("To", m.res.ParticipantLabel(dst)))
		} else {
			lines = append(lines, "", styleTitle.Render("Latest call: ")+m.res.OperationLabel(op, src, dst))
		}
		lines = append(lines, kv("Started", fmtTime(op.StartedAt)))
		if op.SettledAt != nil {
			lines = append(lines, kv("Settled", fmtTime(*op.SettledAt)))
		}
		lines = append(lines, kv("State", string(op.Lifecycle)+openWord(op)))
		if o := callOutcome(mod, op); o != "" {
			lines = append(lines, kv("Outcome", render.SanitizeLine(o)))
		}
		if op.ErrorKind != "" {
			lines = append(lines, kv("Error kind", render.SanitizeLine(op.ErrorKind)))
		}
		if op.Kind == render.OpCall {
			lines = append(lines, kv("This call", metricsLine(op.Metrics)))
		}
		for _, a := range op.Annotations {
			lines = append(lines, kv("Note", annotationText(a)))
		}
		if strings.TrimSpace(op.Details) != "" {
			lines = append(lines, "", styleTitle.Render("Details"))
			lines = append(lines, m.markdown(op.Details, inner)...)
		}
	}
	body := pager(lines, m.inspector.scroll, m.overlayBodyH()-1)
	body = append(body, keyHint("↑↓", "move", "pgup pgdn", "scroll", "t", "transcript", "esc", "close"))
	return boxed(title, body, w)
}

// annotationText is one note on an operation, as plain sanitised text.
func annotationText(a render.Annotation) string {
	if a.Type == event.ToolCallsIgnored {
		return render.SanitizeLine(fmt.Sprintf("%d tool calls after %s in the same reply were not run", a.Count, a.Tool))
	}
	return render.SanitizeLine(string(a.Type) + " " + a.Category + " " + a.Tool)
}

func kv(k, v string) string { return styleFaint.Render(fmt.Sprintf("%-12s", k)) + v }

func metricsLine(mt render.Metrics) string {
	s := compactTokens(mt.Tokens) + " tokens"
	if mt.CachedPromptTokens > 0 {
		s += " · " + compactTokens(mt.CachedPromptTokens) + " cached"
	}
	if mt.ElapsedSeconds > 0 {
		s += fmt.Sprintf(" · %.1fs", mt.ElapsedSeconds)
	}
	return s
}

func openWord(op render.Operation) string {
	if op.Open {
		return ", open"
	}
	return ""
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000 UTC")
}

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
		lines = t.render(w-4, h)
	}
	lines = padLines(lines, w-4, h)
	foot := keyHint("↑↓ pgup pgdn", "scroll", "/", "search", "n", "next", "esc", "close")
	if t.searching {
		foot = "/" + strings.TrimPrefix(t.search.Render(true)[0], "│ ")
	} else if t.note != "" {
		foot = styleFaint.Render(t.note) + "  " + foot
	}
	lines = append(lines, foot)
	return boxed(fmt.Sprintf("Transcript · %s · %d messages", t.label, len(t.entries)), lines, w)
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
