package tui

// The setup dialogs: the model endpoint that did not answer (retry, or
// edit the settings for this session), and the notes the start-up found.
// Both exist so that nothing the operator must read is printed before the
// console opens and hidden behind it.

import (
	"context"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render"
)

// Endpoint lets the console check the model endpoint and change it for
// this session. Messages it returns are the platform's own setup messages
// (they quote URLs the operator gave); the console sanitises them anyway.
type Endpoint interface {
	// Settings are the endpoint's current provider, base URL and model.
	Settings() EndpointSettings
	// Check asks the endpoint again: "" when it answered, else what was
	// tried and the usual causes.
	Check(ctx context.Context) string
	// Apply switches the session to s and checks it. err is set when s is
	// not valid (a bad URL, an unknown provider) or a run is live; problem
	// when the endpoint does not answer.
	Apply(ctx context.Context, s EndpointSettings) (problem string, err error)
}

// EndpointSettings are the endpoint settings the console can edit.
type EndpointSettings struct {
	Provider string
	BaseURL  string
	Model    string
}

// endpointState is the open endpoint dialog.
type endpointState struct {
	problem  string
	checking bool
	// form is the edit-settings form, when open.
	form   *settingsForm
	scroll int
}

// settingsForm edits the provider, base URL and model.
type settingsForm struct {
	fields [3]editor
	focus  int
	err    string
}

var settingsLabels = [3]string{"Provider", "Base URL", "Model"}

func newSettingsForm(s EndpointSettings) *settingsForm {
	f := &settingsForm{}
	for i := range f.fields {
		f.fields[i].singleLine = true
	}
	f.fields[0].placeholder = "openai, openai-responses or anthropic"
	f.fields[1].placeholder = "http://127.0.0.1:8080/v1"
	f.fields[2].placeholder = "empty: the server's first model"
	f.fields[0].SetValue(s.Provider)
	f.fields[1].SetValue(s.BaseURL)
	f.fields[2].SetValue(s.Model)
	return f
}

func (f *settingsForm) settings() EndpointSettings {
	return EndpointSettings{
		Provider: strings.TrimSpace(f.fields[0].Value()),
		BaseURL:  strings.TrimSpace(f.fields[1].Value()),
		Model:    strings.TrimSpace(f.fields[2].Value()),
	}
}

// Messages of the endpoint commands.
type (
	endpointCheckedMsg struct{ problem string }
	endpointAppliedMsg struct {
		settings EndpointSettings
		problem  string
		err      error
	}
)

func checkEndpointCmd(ctx context.Context, ep Endpoint) tea.Cmd {
	return func() tea.Msg { return endpointCheckedMsg{problem: ep.Check(ctx)} }
}

func applyEndpointCmd(ctx context.Context, ep Endpoint, s EndpointSettings) tea.Cmd {
	return func() tea.Msg {
		problem, err := ep.Apply(ctx, s)
		return endpointAppliedMsg{settings: s, problem: problem, err: err}
	}
}

// openEndpoint shows the dialog with problem.
func (m *Model) openEndpoint(problem string) {
	m.endpointProblem = problem
	m.endpoint = &endpointState{problem: problem}
}

// endpointResolved closes the dialog once the endpoint answered, and
// submits the task that waited for it.
func (m *Model) endpointResolved(note string) tea.Cmd {
	m.endpoint, m.endpointProblem = nil, ""
	m.notice = note
	if t := m.heldTask; t != nil {
		m.heldTask = nil
		return m.submit(*t)
	}
	return nil
}

func (m *Model) applyEndpointMsg(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case endpointCheckedMsg:
		if m.endpoint == nil {
			return nil
		}
		m.endpoint.checking = false
		if msg.problem == "" {
			return m.endpointResolved("The model endpoint answered.")
		}
		m.endpoint.problem, m.endpointProblem = msg.problem, msg.problem
		m.endpoint.scroll = 0
		m.notice = "The model endpoint still does not answer."
	case endpointAppliedMsg:
		if m.endpoint == nil {
			return nil
		}
		m.endpoint.checking = false
		// New settings change the footer's model @ host, answered or not.
		info := modelInfoCmd(m.sess)
		if msg.err != nil {
			if m.endpoint.form == nil {
				m.endpoint.form = newSettingsForm(msg.settings)
			}
			m.endpoint.form.err = msg.err.Error()
			return nil
		}
		if msg.problem == "" {
			return tea.Batch(info, m.endpointResolved("Now using "+settingsLine(msg.settings)+" for this session."))
		}
		m.endpoint.form = nil
		m.endpoint.problem, m.endpointProblem = msg.problem, msg.problem
		m.endpoint.scroll = 0
		return info
	}
	return nil
}

func settingsLine(s EndpointSettings) string {
	line := s.Provider + " at " + s.BaseURL
	if s.Model != "" {
		line += ", model " + s.Model
	}
	return render.SanitizeLine(line)
}

// keyEndpoint handles keys while the endpoint dialog is open.
func (m *Model) keyEndpoint(k tea.KeyMsg) tea.Cmd {
	e := m.endpoint
	if e.form != nil {
		return m.keySettingsForm(k)
	}
	key := k.String()
	switch key {
	case "esc", "q":
		m.endpoint = nil
		if m.heldTask != nil {
			m.notice = "The task waits for the model endpoint: E reopens the setup dialog."
		}
	case "r", "R":
		if e.checking || m.opts.Endpoint == nil {
			return nil
		}
		e.checking = true
		return checkEndpointCmd(m.ctx, m.opts.Endpoint)
	case "e", "E":
		if e.checking || m.opts.Endpoint == nil {
			return nil
		}
		if m.runLive() {
			m.notice = "A run is live: its endpoint cannot change until it ends."
			return nil
		}
		e.form = newSettingsForm(m.opts.Endpoint.Settings())
	case "down", "j":
		e.scroll++
	case "up", "k":
		e.scroll = max(0, e.scroll-1)
	case "?":
		m.help = true
	}
	return nil
}

func (m *Model) keySettingsForm(k tea.KeyMsg) tea.Cmd {
	e := m.endpoint
	f := e.form
	switch k.String() {
	case "esc":
		e.form = nil
		if e.problem == "" {
			m.endpoint = nil // opened for the settings alone (E)
		}
		return nil
	case "tab", "down":
		f.focus = (f.focus + 1) % len(f.fields)
		return nil
	case "shift+tab", "up":
		f.focus = (f.focus + len(f.fields) - 1) % len(f.fields)
		return nil
	case "enter", "ctrl+s":
		if e.checking {
			return nil
		}
		e.checking, f.err = true, ""
		return applyEndpointCmd(m.ctx, m.opts.Endpoint, f.settings())
	}
	f.fields[f.focus].HandleKey(k)
	return nil
}

// endpointBox draws the dialog (or its form).
func (m *Model) endpointBox(w int) []string {
	e := m.endpoint
	inner := w - 4
	if e.form != nil {
		return m.settingsBox(w)
	}
	var body []string
	// Wrapped with each line's indent kept, so a cause's continuation
	// reads as part of it; never cut.
	body = append(body, strings.Split(wrapIndented(render.Sanitize(e.problem), inner), "\n")...)
	if m.heldTask != nil {
		body = append(body, "", styleFaint.Render("Your task waits and starts once the endpoint answers."))
	}
	foot := keyHint("r", "retry", "e", "edit settings", "esc", "close (E reopens)")
	if e.checking {
		foot = styleFaint.Render("Asking the endpoint…")
	}
	lines := append(pager(body, e.scroll, max(3, m.overlayBodyH()-2)), "", foot)
	return boxed("The model endpoint did not answer", lines, w)
}

func (m *Model) settingsBox(w int) []string {
	f := m.endpoint.form
	inner := w - 4
	lines := []string{styleFaint.Render(clip("For this session only; your files are not changed.", inner)), ""}
	for i := range f.fields {
		label := settingsLabels[i]
		if i == f.focus {
			label = styleSelected.Render("▸ " + label)
		} else {
			label = "  " + label
		}
		lines = append(lines, label)
		lines = append(lines, f.fields[i].Render(i == f.focus)...)
	}
	if f.err != "" {
		lines = append(lines, "")
		for _, l := range strings.Split(wrapPlain(render.SanitizeLine(f.err), inner), "\n") {
			lines = append(lines, m.th.Render(toneErr, l))
		}
	}
	foot := keyHint("tab", "next field", "enter", "apply and check", "esc", "back")
	if m.endpoint.checking {
		foot = styleFaint.Render("Asking the endpoint…")
	}
	lines = append(lines, "", foot)
	return boxed("Model endpoint settings", lines, w)
}

// sizeSettings gives the form's editors their width.
func (m *Model) sizeSettings() {
	if m.endpoint == nil || m.endpoint.form == nil {
		return
	}
	for i := range m.endpoint.form.fields {
		m.endpoint.form.fields[i].SetSize(m.overlayWidth()-4, 1)
	}
}

// idleMeters are the footer's figures before any run: the model and the
// endpoint's host the next run will use (after e changes them, the new
// ones).
func (m *Model) idleMeters() []segment {
	var segs []segment
	if m.model.Name != "" {
		segs = append(segs, segment{render.SanitizeLine(m.model.Name), 6})
	}
	if m.model.Host != "" {
		segs = append(segs, segment{" @ " + render.SanitizeLine(m.model.Host), 5})
	}
	return segs
}

// notesBanner points to the start-up notes: with the setup line beside it
// when there is one (both matter), else quoting the first note.
func notesBanner(th theme, notes []string, setup string) string {
	head := "ℹ 1 note from start-up (N shows it)"
	if len(notes) > 1 {
		head = fmt.Sprintf("ℹ %d notes from start-up (N shows them)", len(notes))
	}
	if setup != "" {
		// The setup line carries the trust decision, which must stay in
		// view at 80 columns, so the pointer to the notes is kept short.
		short := fmt.Sprintf("ℹ %d notes (N)", len(notes))
		if len(notes) == 1 {
			short = "ℹ 1 note (N)"
		}
		return th.Render(toneBanner, short) + styleFaint.Render(" · "+render.SanitizeLine(setup))
	}
	return th.Render(toneBanner, head+": "+render.SanitizeLine(notes[0]))
}

// notesState is the open notes dialog.
type notesState struct{ scroll int }

func (m *Model) notesBox(w int) []string {
	inner := w - 4
	var body []string
	notes := m.allNotes()
	for _, n := range notes {
		for i, l := range noteLines(n, inner-2) {
			if i == 0 {
				body = append(body, "• "+l)
			} else {
				body = append(body, "  "+l)
			}
		}
	}
	keys := []string{"esc", "close", "N", "shows them again"}
	if len(noteURLs(notes)) > 0 {
		keys = append(keys, "y", "copy the URL")
	}
	lines := append(pager(body, m.notes.scroll, max(3, m.overlayBodyH()-2)), "", keyHint(keys...))
	return boxed(notesTitle(len(m.opts.Notes), len(notes)), lines, w)
}

// noteLines wraps one note to width. A URL (the browser console's, with
// its token) is never wrapped, since a terminal selection across the box's
// border would copy the border with it: it gets a line of its own, cut
// with "…" when it is wider than the box (y copies it whole).
func noteLines(note string, width int) []string {
	var out, words []string
	flush := func() {
		if len(words) > 0 {
			out = append(out, strings.Split(wrapPlain(strings.Join(words, " "), width), "\n")...)
			words = nil
		}
	}
	for _, w := range strings.Fields(render.SanitizeLine(note)) {
		if !isURL(w) {
			words = append(words, w)
			continue
		}
		flush()
		out = append(out, clip(w, width))
	}
	flush()
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// noteURLs are the URLs the notes quote, in order, each once.
func noteURLs(notes []string) []string {
	var urls []string
	seen := map[string]bool{}
	for _, n := range notes {
		for _, w := range strings.Fields(render.SanitizeLine(n)) {
			if isURL(w) && !seen[w] {
				seen[w] = true
				urls = append(urls, w)
			}
		}
	}
	return urls
}

func isURL(w string) bool {
	return strings.HasPrefix(w, "http://") || strings.HasPrefix(w, "https://")
}

// keyNotes handles keys while the notes dialog is open: y copies the
// URLs the notes quote, else it pages.
func (m *Model) keyNotes(key string) tea.Cmd {
	if key == "y" {
		urls := noteURLs(m.allNotes())
		if len(urls) == 0 {
			m.flashNote("No URL in the notes to copy.")
			return nil
		}
		what := "the URL"
		if len(urls) > 1 {
			what = "the notes' URLs"
		}
		return m.copyText(what, strings.Join(urls, "\n"))
	}
	return m.keyPager(key, &m.notes.scroll, func() { m.notes = nil }, "N")
}
