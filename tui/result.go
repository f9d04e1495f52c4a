package tui

import (
	"context"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
)

// The result card and what changed. The card says what the run reported,
// once: a fixed framing line for the status, the summary, the error
// message when it says something the summary did not. It lists what
// changed in the workspace since the run started (runner.Session.Changes)
// and offers only the keys that act on what is there.

// changesState is a run's change set, loaded in a command.
type changesState struct {
	runID   string
	loaded  bool
	changes runner.Changes
	err     error
}

type changesMsg struct {
	runID   string
	changes runner.Changes
	err     error
}

func changesCmd(ctx context.Context, s Session, runID string) tea.Cmd {
	return func() tea.Msg {
		ch, err := s.Changes(ctx, runID)
		return changesMsg{runID: runID, changes: ch, err: err}
	}
}

// openResult shows the result card of the run on screen and (re)loads
// what it changed: the files may have changed since it was last read.
func (m *Model) openResult() tea.Cmd {
	m.showResult, m.resultOpen = true, resultState{}
	if m.view == nil || m.view.id == "" {
		return nil
	}
	m.changes = &changesState{runID: m.view.id}
	return changesCmd(m.ctx, m.sess, m.view.id)
}

func (m *Model) applyChanges(msg changesMsg) {
	if c := m.changes; c != nil && c.runID == msg.runID {
		c.loaded, c.changes, c.err = true, msg.changes, msg.err
	}
}

// framing is the fixed line above what a run that did not succeed
// reported.
func framing(status string) string {
	switch status {
	case "error":
		return "The run reported an error."
	case "interrupted":
		return "The run stopped before it finished."
	case "needs_clarification":
		return "The run needs more information from you."
	}
	return ""
}

// sameText reports whether two pieces of prose say the same thing.
func sameText(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

// resultSummary is the card's summary text ("" when there is none).
func resultSummary(v *runView) string {
	if v == nil || v.card == nil || v.card.Card == nil {
		return ""
	}
	return strings.TrimSpace(v.card.Card.Summary)
}

func (m *Model) resultBox(w int) []string {
	inner := w - 4
	body := pager(m.resultLines(inner), m.resultOpen.scroll, m.overlayBodyH()-1)
	body = append(body, hints(inner, m.resultKeys()...))
	return boxed("Result · "+render.SanitizeLine(m.view.id), body, w)
}

// resultLines is the card's content at inner cells.
func (m *Model) resultLines(inner int) []string {
	v := m.view
	p := v.card
	lines := []string{styleTitle.Render("Status: ") + statusGlyph(m.th, p.Status) + " " + render.SanitizeLine(p.Status)}
	summary := resultSummary(v)
	ei := resultError(v)
	if f := framing(p.Status); f != "" {
		lines = append(lines, "", m.th.Render(toneErr, f))
	}
	if p.NoAction {
		lines = append(lines, "")
		for _, l := range strings.Split(wrapPlain(render.NoActionText, inner), "\n") {
			lines = append(lines, m.th.Render(toneErr, l))
		}
	}
	if summary != "" {
		lines = block(lines, m.markdown(summary, inner))
	}
	if ei != nil && strings.TrimSpace(ei.Message) != "" && !sameText(ei.Message, summary) {
		lines = block(lines, m.markdown(ei.Message, inner))
	}
	if ei != nil && len(ei.Details) > 0 {
		lines = append(lines, technicalDetails(ei.Details, m.resultOpen.details, inner, "d shows them")...)
	}
	if p.Card != nil && len(p.Card.Artifacts) > 0 {
		lines = append(lines, "", styleTitle.Render("Artifacts"))
		lines = append(lines, artifactLines(p.Card.Artifacts, inner)...)
	}
	return append(lines, m.changeLines(inner)...)
}

// block appends a block of lines after one blank line, however many
// blank lines the block starts with.
func block(lines, b []string) []string {
	for len(b) > 0 && strings.TrimSpace(ansi.Strip(b[0])) == "" {
		b = b[1:]
	}
	return append(append(lines, ""), b...)
}

// resultKeys are the result card's keys, only those that act on what the
// card holds.
func (m *Model) resultKeys() []string {
	v := m.view
	keys := []string{"esc", "close"}
	if m.changes != nil && m.changes.loaded && len(m.changes.changes.Files) > 0 {
		keys = append(keys, "w", "what changed", "U", "revert")
	}
	if resultSummary(v) != "" {
		keys = append(keys, "y", "copy summary")
	}
	if ei := resultError(v); ei != nil {
		if len(ei.Details) > 0 {
			keys = append(keys, "d", "details")
		}
		keys = append(keys, "c", "copy raw error")
	}
	return append(keys, "n", "new task", "H", "history")
}

// changeLines is the card's "What changed" section.
func (m *Model) changeLines(inner int) []string {
	c := m.changes
	if c == nil || c.runID != m.view.id {
		return nil
	}
	head := styleTitle.Render("What changed")
	switch {
	case !c.loaded:
		return []string{"", head + styleFaint.Render(" · reading…")}
	case c.err != nil:
		return []string{"", head, styleFaint.Render("  Could not tell: ") + render.SanitizeLine(c.err.Error())}
	case len(c.changes.Files) == 0:
		return []string{"", head + styleFaint.Render(" · no file changed since the run started")}
	}
	ch := c.changes
	add, rem := 0, 0
	for _, f := range ch.Files {
		add, rem = add+f.Added, rem+f.Removed
	}
	n := len(ch.Files)
	out := []string{"", head + styleFaint.Render(fmt.Sprintf(" · %d file%s, +%d −%d", n, plural(n), add, rem))}
	switch ch.Source {
	case runner.ChangesFromGit:
		out = append(out, styleFaint.Render("  git diff against the run's base "+render.SanitizeLine(shortHash(ch.Base))))
	case runner.ChangesFromLog:
		out = append(out, styleFaint.Render("  the files the run's file tools wrote (no git base)"))
	}
	for i, f := range ch.Files {
		if i == 8 && n > 9 {
			out = append(out, styleFaint.Render(fmt.Sprintf("  … %d more · w shows them all", n-i)))
			break
		}
		out = append(out, "  "+fileLine(m.th, f, inner-2))
	}
	if m.live != m.view || m.live.live() {
		out = append(out, styleFaint.Render("  As the files are now: later work may have changed them too."))
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// fileLine is one changed file: a status letter, its path (cut at the
// front, where paths share least) and its line counts, which show whole.
func fileLine(th theme, f runner.FileChange, width int) string {
	letter := map[string]string{"modified": "M", "added": "A", "deleted": "D", "written": "W", "binary": "B", "too large": "L"}[f.Status]
	if letter == "" {
		letter = "?"
	}
	counts := ""
	if f.Added+f.Removed > 0 {
		counts = fmt.Sprintf("  %s %s", th.Render(toneOK, fmt.Sprintf("+%d", f.Added)), th.Render(toneErr, fmt.Sprintf("−%d", f.Removed)))
	}
	room := width - 2 - ansi.StringWidth(counts)
	path := render.SanitizeLine(f.Path)
	if pw := ansi.StringWidth(path); pw > room && room > 1 {
		path = ansi.TruncateLeft(path, pw-room+1, "…")
	}
	return letter + " " + path + counts
}
