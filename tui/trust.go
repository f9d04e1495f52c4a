package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
)

// TrustPrompt asks the operator whether to apply a workspace's own
// configuration. Every string in it comes from the workspace (names,
// values) or is built from it, so the dialog sanitises each one.
type TrustPrompt struct {
	Workspace string
	Files     []string
	Changes   []TrustChange
	// Changed, when set, says the files differ from the ones an earlier
	// decision was about ("you trusted them on 2026-11-30").
	Changed string
}

// TrustChange is one line of what trusting would change; Warn marks one
// that weakens isolation or moves the model endpoint.
type TrustChange struct {
	Text string
	Warn bool
}

// ErrQuit is returned when the operator quits at the prompt.
var ErrQuit = errors.New("quit")

// AskTrust shows the prompt full screen until the operator answers: t
// trusts (true), i ignores (false), q quits (ErrQuit). It runs before the
// console, as its own program, so nothing of the workspace's is applied
// while the operator reads.
func AskTrust(ctx context.Context, p TrustPrompt, ro RunOptions) (bool, error) {
	out := ro.Output
	if out == nil {
		out = os.Stdout
	}
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(out)}
	if ro.Input != nil {
		popts = append(popts, tea.WithInput(ro.Input))
	}
	if !ro.NoAltScreen {
		popts = append(popts, tea.WithAltScreen())
	}
	final, err := tea.NewProgram(newTrustModel(p), popts...).Run()
	if err != nil {
		if ctx.Err() != nil {
			return false, ErrQuit
		}
		return false, fmt.Errorf("trust prompt: %w", err)
	}
	m := final.(trustModel)
	if m.answer == answerQuit {
		return false, ErrQuit
	}
	return m.answer == answerTrust, nil
}

type trustAnswer int

const (
	answerNone trustAnswer = iota
	answerTrust
	answerIgnore
	answerQuit
)

// trustModel is the prompt's Bubble Tea model. Its lines are built once
// (sanitised) and wrapped per width in View.
type trustModel struct {
	lines         []trustLine
	width, height int
	top           int
	answer        trustAnswer
}

// trustLine is one paragraph of the prompt; a bullet line is a change,
// marked "!" when it warns and "-" otherwise.
type trustLine struct {
	text   string
	st     style
	bullet bool
	warn   bool
}

func newTrustModel(p TrustPrompt) trustModel {
	m := trustModel{width: 80, height: 24}
	add := func(text string, st style, warn bool) {
		m.lines = append(m.lines, trustLine{text: text, st: st, warn: warn})
	}
	change := func(text string, warn bool) {
		m.lines = append(m.lines, trustLine{text: text, bullet: true, warn: warn})
	}
	add("This workspace supplies its own configuration", styleTitle, false)
	add(render.SanitizeLine(p.Workspace), styleFaint, false)
	add("", 0, false)
	add("A cloned repository's guild and deployment files are the repository's, not yours: Guildhall applies them only if you trust them. Nothing of theirs has run.", 0, false)
	if p.Changed != "" {
		add(render.SanitizeLine(p.Changed), styleBanner, false)
	}
	add("", 0, false)
	add("Files:", styleTitle, false)
	for _, f := range p.Files {
		add("  "+render.SanitizeLine(f), 0, false)
	}
	add("", 0, false)
	add("Trusting them would:", styleTitle, false)
	for _, c := range p.Changes {
		change(render.SanitizeLine(c.Text), c.Warn)
	}
	add("", 0, false)
	add("Keys are never sent to an endpoint the workspace chose. The decision is remembered for this folder and these contents; `guildhall trust` changes it.", styleFaint, false)
	return m
}

func (m trustModel) Init() tea.Cmd { return nil }

func (m trustModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.top = min(m.top, m.maxTop())
	case tea.KeyMsg:
		switch msg.String() {
		case "t", "T":
			m.answer = answerTrust
			return m, tea.Quit
		case "i", "I", "n", "N":
			m.answer = answerIgnore
			return m, tea.Quit
		case "q", "Q", "esc", "ctrl+c":
			m.answer = answerQuit
			return m, tea.Quit
		case "up", "k":
			m.top = max(0, m.top-1)
		case "down", "j":
			m.top = min(m.maxTop(), m.top+1)
		case "pgup":
			m.top = max(0, m.top-m.bodyHeight())
		case "pgdown", " ":
			m.top = min(m.maxTop(), m.top+m.bodyHeight())
		}
	}
	return m, nil
}

// bodyHeight is the rows for text, the key line aside.
func (m trustModel) bodyHeight() int { return max(1, m.height-1) }

func (m trustModel) wrapped() []string {
	w := max(20, m.width)
	var out []string
	for _, l := range m.lines {
		text, indent := l.text, ""
		switch {
		case l.warn:
			text, indent = "! "+text, "  "
		case l.bullet:
			text, indent = "- "+text, "  "
		}
		if text == "" {
			out = append(out, "")
			continue
		}
		for i, part := range strings.Split(ansi.Wrap(text, w-len(indent), ""), "\n") {
			if i > 0 {
				part = indent + part
			}
			switch {
			case l.warn:
				out = append(out, styleErr.Render(part))
			case l.st != 0:
				out = append(out, l.st.Render(part))
			default:
				out = append(out, part)
			}
		}
	}
	return out
}

func (m trustModel) maxTop() int { return max(0, len(m.wrapped())-m.bodyHeight()) }

// View is the prompt: a pure function of the model.
func (m trustModel) View() string {
	lines := m.wrapped()
	body := m.bodyHeight()
	top := min(m.top, max(0, len(lines)-body))
	end := min(len(lines), top+body)
	shown := append([]string(nil), lines[top:end]...)
	for len(shown) < body {
		shown = append(shown, "")
	}
	hint := keyHint("t", "trust and apply", "i", "ignore (use your config)", "q", "quit")
	if len(lines) > body {
		hint += styleFaint.Render(fmt.Sprintf("  ↑↓ %d–%d of %d", top+1, end, len(lines)))
	}
	shown = append(shown, fit(hint, m.width))
	return strings.Join(shown, "\n")
}
