package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

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
	// Theme is ThemeDark (the default) or ThemeLight, as for the console
	// (Options.Theme).
	Theme string
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
	th := newTheme(p.Theme == ThemeLight, termenv.NewOutput(out).EnvColorProfile())
	final, err := tea.NewProgram(newTrustModel(p, th), popts...).Run()
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
// (sanitised) and wrapped per width in View. The warnings come first, and
// t is refused until each one has been on screen: a long guild cannot
// push them below the first page and have them trusted unread.
type trustModel struct {
	th            theme
	lines         []trustLine
	width, height int
	top           int
	answer        trustAnswer
	// warnings counts the "!" lines; seen records, per "!" line (by its
	// index in lines), whether its first and its last row have been on
	// screen, and refused is set once t was pressed too early.
	warnings int
	seen     map[int]*[2]bool
	refused  bool
}

// trustLine is one paragraph of the prompt; a bullet line is a change,
// marked "!" when it warns and "-" otherwise. A line is drawn in its
// tone when toned, else in its style.
type trustLine struct {
	text   string
	st     style
	tn     tone
	toned  bool
	bullet bool
	warn   bool
}

func newTrustModel(p TrustPrompt, th theme) trustModel {
	m := trustModel{th: th, width: 80, height: 24, seen: map[int]*[2]bool{}}
	add := func(text string, st style) {
		m.lines = append(m.lines, trustLine{text: text, st: st})
	}
	addToned := func(text string, tn tone) {
		m.lines = append(m.lines, trustLine{text: text, tn: tn, toned: true})
	}
	change := func(text string, warn bool) {
		if warn {
			m.seen[len(m.lines)] = &[2]bool{}
			m.warnings++
		}
		m.lines = append(m.lines, trustLine{text: text, bullet: true, warn: warn})
	}
	add("This workspace supplies its own configuration", styleTitle)
	add(render.SanitizeLine(p.Workspace), styleFaint)
	if p.Changed != "" {
		addToned(render.SanitizeLine(p.Changed), toneBanner)
	}
	add("", 0)
	var rest []TrustChange
	for _, c := range p.Changes {
		if !c.Warn {
			rest = append(rest, c)
		}
	}
	switch n := len(p.Changes) - len(rest); n {
	case 0:
		add("No warnings.", styleTitle)
	case 1:
		addToned("1 warning:", toneErr)
	default:
		addToned(fmt.Sprintf("%d warnings:", n), toneErr)
	}
	for _, c := range p.Changes {
		if c.Warn {
			change(render.SanitizeLine(c.Text), true)
		}
	}
	add("", 0)
	add("A cloned repository's guild and deployment files are the repository's, not yours: Guildhall applies them only if you trust them. Nothing of theirs has run.", 0)
	add("", 0)
	add("Files:", styleTitle)
	for _, f := range p.Files {
		add("  "+render.SanitizeLine(f), 0)
	}
	if len(rest) > 0 {
		add("", 0)
		if m.warnings > 0 {
			add("Trusting them would also:", styleTitle)
		} else {
			add("Trusting them would:", styleTitle)
		}
		for _, c := range rest {
			change(render.SanitizeLine(c.Text), false)
		}
	}
	add("", 0)
	add("Keys are never sent to an endpoint the workspace chose. The decision is remembered for this folder and these contents; `guildhall trust` changes it.", styleFaint)
	m.markSeen()
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
			if m.unseen() > 0 {
				m.refused = true
				return m, nil
			}
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
		case "pgup", "b":
			m.top = max(0, m.top-m.bodyHeight())
		case "pgdown", " ", "f":
			m.top = min(m.maxTop(), m.top+m.bodyHeight())
		case "home", "g":
			m.top = 0
		case "end", "G":
			m.top = m.maxTop()
		}
	}
	m.markSeen()
	return m, nil
}

// bodyHeight is the rows for text, the key line aside.
func (m trustModel) bodyHeight() int { return max(1, m.height-1) }

// wrapped is the prompt's rows at the current width, and for each line
// the index of its first row.
func (m trustModel) wrapped() ([]string, []int) {
	w := max(20, m.width)
	var out []string
	starts := make([]int, len(m.lines))
	for i, l := range m.lines {
		starts[i] = len(out)
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
		for j, part := range strings.Split(ansi.Wrap(text, w-len(indent), ""), "\n") {
			if j > 0 {
				part = indent + part
			}
			switch {
			case l.warn:
				out = append(out, m.th.Render(toneErr, part))
			case l.toned:
				out = append(out, m.th.Render(l.tn, part))
			case l.st != 0:
				out = append(out, l.st.Render(part))
			default:
				out = append(out, part)
			}
		}
	}
	return out, starts
}

// window is the rows on screen: [top, end).
func (m trustModel) window(rows int) (top, end int) {
	body := m.bodyHeight()
	top = min(m.top, max(0, rows-body))
	return top, min(rows, top+body)
}

// markSeen records which warnings' first and last rows are on screen now.
func (m trustModel) markSeen() {
	rows, starts := m.wrapped()
	top, end := m.window(len(rows))
	for i, s := range m.seen {
		first, last := starts[i], len(rows)-1
		if i+1 < len(starts) {
			last = starts[i+1] - 1
		}
		s[0] = s[0] || first >= top && first < end
		s[1] = s[1] || last >= top && last < end
	}
}

// unseen counts the warnings not yet wholly on screen.
func (m trustModel) unseen() int {
	n := 0
	for _, s := range m.seen {
		if !s[0] || !s[1] {
			n++
		}
	}
	return n
}

func (m trustModel) maxTop() int {
	rows, _ := m.wrapped()
	return max(0, len(rows)-m.bodyHeight())
}

// View is the prompt: a pure function of the model.
func (m trustModel) View() string {
	lines, _ := m.wrapped()
	top, end := m.window(len(lines))
	shown := append([]string(nil), lines[top:end]...)
	for len(shown) < m.bodyHeight() {
		shown = append(shown, "")
	}
	var hint string
	if n := m.unseen(); n > 0 {
		more := "1 more warning"
		if n > 1 {
			more = fmt.Sprintf("%d more warnings", n)
		}
		scroll := styleFaint.Render("scroll to see " + more + " before trusting")
		if m.refused {
			scroll = m.th.Render(toneErr, "scroll to see "+more+" before trusting")
		}
		hint = keyHint("↓", "") + scroll + "  " + keyHint("i", "ignore", "q", "quit")
	} else {
		hint = keyHint("t", "trust and apply", "i", "ignore (use your config)", "q", "quit")
	}
	if len(lines) > m.bodyHeight() {
		hint += styleFaint.Render(fmt.Sprintf("  ↑↓ %d–%d of %d", top+1, end, len(lines)))
	}
	shown = append(shown, fit(hint, m.width))
	return strings.Join(shown, "\n")
}
