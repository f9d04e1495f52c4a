package tui

import (
	"context"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/thread"
	"github.com/guildhall/guildhall/store"
)

// The task thread of the run on screen: the one-line task-identity header
// above Watch and the task-history drawer (h). Both read runner.LoadThread,
// the human-facing thread of the run and the runs it continues, loaded in a
// command and cached per run; the header prefers the generated thread
// summary (Options.Summarize), also fetched in a command and cached.

// threadInfo is what the console holds about one run's thread.
type threadInfo struct {
	thread  thread.Thread
	loaded  bool
	err     error
	loading bool
	dirty   bool // thread events arrived while a load was on its way

	title, description string
	summarizing        bool
	summarized         int // entries the summary was asked for (-1: never)
}

// Messages of the thread commands.
type (
	threadMsg struct {
		runID  string
		thread thread.Thread
		err    error
	}
	threadSummaryMsg struct {
		runID, title, description string
		err                       error
	}
)

func loadThreadCmd(ws store.Workspace, runID string) tea.Cmd {
	return func() tea.Msg {
		th, err := runner.LoadThread(ws, runID)
		return threadMsg{runID: runID, thread: th, err: err}
	}
}

func summarizeCmd(ctx context.Context, fn func(context.Context, string) (string, string, error), runID string) tea.Cmd {
	return func() tea.Msg {
		title, desc, err := fn(ctx, runID)
		return threadSummaryMsg{runID: runID, title: title, description: desc, err: err}
	}
}

func (m *Model) threadOf(runID string) *threadInfo {
	if m.threads == nil {
		m.threads = map[string]*threadInfo{}
	}
	ti := m.threads[runID]
	if ti == nil {
		ti = &threadInfo{summarized: -1}
		m.threads[runID] = ti
	}
	return ti
}

// refreshThread (re)loads a run's thread unless a load is on its way, in
// which case it is loaded once more when that one lands.
func (m *Model) refreshThread(runID string) tea.Cmd {
	if runID == "" {
		return nil
	}
	ti := m.threadOf(runID)
	if ti.loading {
		ti.dirty = true
		return nil
	}
	ti.loading, ti.dirty = true, false
	return loadThreadCmd(m.ws, runID)
}

// threadEvents reports whether a batch holds events the thread reads.
func threadEvents(evs []event.Event) bool {
	for _, e := range evs {
		if !e.Ephemeral && thread.Reads(e.Type) {
			return true
		}
	}
	return false
}

func (m *Model) applyThread(msg threadMsg) tea.Cmd {
	ti := m.threadOf(msg.runID)
	ti.loading = false
	if msg.err != nil {
		ti.err = msg.err
		if !ti.loaded {
			ti.loaded = true
		}
	} else {
		ti.thread, ti.loaded, ti.err = msg.thread, true, nil
	}
	var cmds []tea.Cmd
	if ti.dirty {
		cmds = append(cmds, m.refreshThread(msg.runID))
	}
	// Summarise a thread once per shape: when first seen, and again when
	// entries were added (a finished run, an answered question).
	if fn := m.opts.Summarize; fn != nil && msg.err == nil && !ti.summarizing && ti.summarized != len(ti.thread.Entries) && len(ti.thread.Entries) > 0 {
		if ti.summarized < 0 || !m.threadLive(msg.runID) {
			ti.summarizing, ti.summarized = true, len(ti.thread.Entries)
			cmds = append(cmds, summarizeCmd(m.ctx, fn, msg.runID))
		}
	}
	return tea.Batch(cmds...)
}

func (m *Model) threadLive(runID string) bool {
	return m.live != nil && m.live.id == runID && m.live.live()
}

func (m *Model) applyThreadSummary(msg threadSummaryMsg) {
	ti := m.threadOf(msg.runID)
	ti.summarizing = false
	if msg.err == nil && strings.TrimSpace(msg.title) != "" {
		ti.title, ti.description = msg.title, msg.description
	}
}

// identityLine is the task-identity header, plain text only: the run's
// summary (summary.txt) once it exists; else the generated thread title
// and description, when they say more than the task; else the
// deterministic identity (the first task's first line) and the latest
// thing the operator said. Nothing in it repeats what is already there.
func (m *Model) identityLine(v *runView, width int) string {
	if v == nil || v.id == "" {
		return ""
	}
	ti := m.threads[v.id]
	task := taskLine(v.task)
	if ti != nil && ti.loaded && ti.err == nil && ti.thread.Identity.FirstTask != "" {
		task = taskLine(ti.thread.Identity.FirstTask)
	}
	var line string
	switch {
	case m.summaries[v.id] != "":
		line = "◆ " + render.SanitizeLine(m.summaries[v.id])
		if ti != nil && ti.thread.Identity.Runs > 1 {
			line += styleFaint.Render(fmt.Sprintf(" · %d runs", ti.thread.Identity.Runs))
		}
	case ti != nil && ti.title != "" && !repeats(ti.title, task):
		line = "◆ " + render.SanitizeLine(ti.title)
		if d := strings.TrimSpace(ti.description); d != "" && !repeats(d, task) && !repeats(d, ti.title) {
			line += styleFaint.Render(" — " + render.SanitizeLine(d))
		}
	case ti != nil && ti.loaded && ti.err == nil:
		id := ti.thread.Identity
		line = "◆ " + render.SanitizeLine(task)
		if latest := firstLine(id.LatestHumanText); latest != "" && latest != task {
			line += styleFaint.Render(" · You: ") + render.SanitizeLine(latest)
		}
		if id.Runs > 1 {
			line += styleFaint.Render(fmt.Sprintf(" · %d runs", id.Runs))
		}
	default:
		line = "◆ " + render.SanitizeLine(task)
	}
	return clip(line, width)
}

// taskLine is a task's first line for the one-line task header, ending
// with "…" when the task goes on (h shows it whole), so a line cut at a
// line break does not read as the whole task.
func taskLine(task string) string {
	first := firstLine(task)
	if strings.TrimSpace(task) != first && !strings.HasSuffix(first, "…") {
		first += " …"
	}
	return first
}

// repeats reports whether a generated title or description only repeats
// text (one is a prefix of the other, ignoring case, an ellipsis and the
// spaces around).
func repeats(gen, text string) bool {
	norm := func(s string) string {
		s = strings.ToLower(strings.TrimSpace(firstLine(s)))
		s = strings.TrimRight(strings.TrimSuffix(s, "…"), " .")
		return strings.Join(strings.Fields(s), " ")
	}
	g, t := norm(gen), norm(text)
	return g != "" && t != "" && (strings.HasPrefix(t, g) || strings.HasPrefix(g, t))
}

// threadDrawer is the open task-history drawer.
type threadDrawer struct {
	runID  string
	scroll int
	follow bool // stay at the newest entry until the operator scrolls
}

// threadLines renders a thread's entries: human and orchestrator turns,
// questions and their context as safe Markdown; answers (the operator's
// own words), markers and labels as plain text.
func (m *Model) threadLines(th thread.Thread, width int) []string {
	var out []string
	for _, e := range th.Entries {
		when := ""
		if !e.At.IsZero() {
			when = e.At.UTC().Format("15:04:05")
		}
		// head is an entry's title line: the title, the entry's label when
		// it has one, then when and in which run.
		head := func(title, label string) {
			if label != "" {
				title += " · " + render.SanitizeLine(label)
			}
			meta := strings.TrimSpace(when + " " + render.SanitizeLine(e.RunID))
			out = append(out, styleTitle.Render(title)+styleFaint.Render("  "+meta))
		}
		switch e.Kind {
		case thread.Human:
			head("You", "")
			out = append(out, m.markdown(e.Text, width)...)
		case thread.Orchestrator:
			head("Orchestrator", e.Label)
			out = append(out, m.markdown(e.Text, width)...)
			if strings.TrimSpace(e.Context) != "" {
				out = append(out, m.markdown(e.Context, width)...)
			}
		case thread.Question:
			head("Question", "")
			out = append(out, m.markdown(e.Text, width)...)
			if strings.TrimSpace(e.Context) != "" {
				out = append(out, styleFaint.Render("  Context"))
				out = append(out, m.markdown(e.Context, width)...)
			}
		case thread.Answer:
			head("Your answer", e.Label)
			for _, l := range strings.Split(wrapPlain(render.Sanitize(e.Text), width-2), "\n") {
				out = append(out, "  "+l)
			}
		default: // markers and anything newer: plain text
			text := render.SanitizeLine(e.Label)
			if t := strings.TrimSpace(e.Text); t != "" {
				text += ": " + render.SanitizeLine(t)
			}
			out = append(out, styleFaint.Render(clip("── "+text+" "+when, width)))
		}
		out = append(out, "")
	}
	return out
}

func (m *Model) drawerBox(w int) []string {
	d := m.drawer
	ti := m.threads[d.runID]
	h := m.overlayBodyH() - 1
	var lines []string
	switch {
	case ti == nil || !ti.loaded:
		lines = []string{styleFaint.Render("Reading the task thread…")}
	case ti.err != nil && len(ti.thread.Entries) == 0:
		lines = []string{"Could not read the thread: " + render.SanitizeLine(ti.err.Error())}
	case len(ti.thread.Entries) == 0:
		lines = []string{styleFaint.Render("Nothing in this thread yet.")}
	default:
		lines = m.threadLines(ti.thread, w-4)
	}
	if task := m.drawerTask(ti); task != "" {
		// The header cuts the task; here it is whole.
		lines = append(append([]string{styleTitle.Render("Task")}, m.markdown(task, w-4)...), append([]string{""}, lines...)...)
	}
	scroll := d.scroll
	if d.follow {
		scroll = len(lines)
	}
	body := pager(lines, scroll, h)
	body = append(body, keyHint("↑↓ pgup pgdn", "scroll", "G", "newest", "esc", "close"))
	title := "Task history · " + render.SanitizeLine(d.runID)
	if ti != nil && ti.title != "" {
		title += " · " + render.SanitizeLine(ti.title)
	}
	return boxed(clip(title, w-6), body, w)
}

// drawerTask is the run's task when the thread does not already show it
// whole as one of the operator's entries.
func (m *Model) drawerTask(ti *threadInfo) string {
	v := m.view
	if v == nil || v.id != m.drawer.runID || strings.TrimSpace(v.task) == "" {
		return ""
	}
	if ti != nil {
		for _, e := range ti.thread.Entries {
			if e.Kind == thread.Human && strings.TrimSpace(e.Text) == strings.TrimSpace(v.task) {
				return ""
			}
		}
	}
	return v.task
}

func (m *Model) openDrawer() tea.Cmd {
	v := m.view
	if v == nil || v.id == "" {
		m.notice = "No run to show the history of."
		return nil
	}
	m.drawer = &threadDrawer{runID: v.id, follow: true}
	return m.refreshThread(v.id)
}

func (m *Model) keyDrawer(key string) tea.Cmd {
	d := m.drawer
	if d.follow && key != "esc" && key != "h" && key != "q" {
		// Start scrolling from where the view is: the newest entries.
		ti := m.threads[d.runID]
		if ti != nil {
			d.scroll = max(0, len(m.threadLines(ti.thread, m.overlayWidth()-4))-(m.overlayBodyH()-1))
		}
		d.follow = false
	}
	if key == "G" || key == "end" {
		d.follow = true
		return nil
	}
	return m.keyPager(key, &d.scroll, func() { m.drawer = nil }, "h")
}
