package tui

import (
	"strings"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
)

// editor is a small multiline text editor: the Compose task, the question
// modal's answer, the interrupt message and the transcript search. It is a
// plain struct: the owner routes keys to HandleKey and draws Render.
type editor struct {
	lines       [][]rune
	row, col    int
	placeholder string
	singleLine  bool
}

// Value is the text.
func (e *editor) Value() string {
	parts := make([]string, len(e.lines))
	for i, l := range e.lines {
		parts[i] = string(l)
	}
	return strings.Join(parts, "\n")
}

// SetValue replaces the text and puts the cursor at its end.
func (e *editor) SetValue(s string) {
	e.lines = nil
	for _, l := range strings.Split(s, "\n") {
		e.lines = append(e.lines, []rune(l))
	}
	e.row = len(e.lines) - 1
	e.col = len(e.lines[e.row])
}

// Reset empties the editor.
func (e *editor) Reset() { e.lines, e.row, e.col = nil, 0, 0 }

// Empty reports whether there is no text.
func (e *editor) Empty() bool { return strings.TrimSpace(e.Value()) == "" }

func (e *editor) ensure() {
	if len(e.lines) == 0 {
		e.lines = [][]rune{{}}
		e.row, e.col = 0, 0
	}
}

// Insert types text at the cursor. Control characters other than newline
// and tab are dropped; a single-line editor turns newlines into spaces.
func (e *editor) Insert(rs []rune) {
	e.ensure()
	for _, r := range rs {
		switch {
		case r == '\r':
			continue
		case r == '\n':
			if e.singleLine {
				r = ' '
			} else {
				e.Newline()
				continue
			}
		case r == '\t':
		case unicode.IsControl(r):
			continue
		}
		l := e.lines[e.row]
		l = append(l[:e.col], append([]rune{r}, l[e.col:]...)...)
		e.lines[e.row] = l
		e.col++
	}
}

// Newline splits the line at the cursor.
func (e *editor) Newline() {
	e.ensure()
	l := e.lines[e.row]
	rest := append([]rune(nil), l[e.col:]...)
	e.lines[e.row] = l[:e.col]
	e.lines = append(e.lines[:e.row+1], append([][]rune{rest}, e.lines[e.row+1:]...)...)
	e.row, e.col = e.row+1, 0
}

// HandleKey applies an editing key and reports whether it used it. Enter is
// left to the owner (it submits in most places); alt+enter inserts a
// newline in a multiline editor.
func (e *editor) HandleKey(k tea.KeyMsg) bool {
	e.ensure()
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		if k.Alt && !k.Paste {
			return false
		}
		e.Insert(k.Runes)
		if k.Type == tea.KeySpace && len(k.Runes) == 0 {
			e.Insert([]rune{' '})
		}
	case tea.KeyEnter:
		if k.Alt && !e.singleLine {
			e.Newline()
			return true
		}
		return false
	case tea.KeyCtrlJ:
		if e.singleLine {
			return false
		}
		e.Newline()
	case tea.KeyBackspace, tea.KeyCtrlH:
		if e.col > 0 {
			l := e.lines[e.row]
			e.lines[e.row] = append(l[:e.col-1], l[e.col:]...)
			e.col--
		} else if e.row > 0 {
			prev := e.lines[e.row-1]
			e.col = len(prev)
			e.lines[e.row-1] = append(prev, e.lines[e.row]...)
			e.lines = append(e.lines[:e.row], e.lines[e.row+1:]...)
			e.row--
		}
	case tea.KeyDelete:
		l := e.lines[e.row]
		if e.col < len(l) {
			e.lines[e.row] = append(l[:e.col], l[e.col+1:]...)
		} else if e.row+1 < len(e.lines) {
			e.lines[e.row] = append(l, e.lines[e.row+1]...)
			e.lines = append(e.lines[:e.row+1], e.lines[e.row+2:]...)
		}
	case tea.KeyLeft:
		if e.col > 0 {
			e.col--
		} else if e.row > 0 {
			e.row--
			e.col = len(e.lines[e.row])
		}
	case tea.KeyRight:
		if e.col < len(e.lines[e.row]) {
			e.col++
		} else if e.row+1 < len(e.lines) {
			e.row, e.col = e.row+1, 0
		}
	case tea.KeyUp:
		if e.row == 0 {
			return false
		}
		e.row--
		e.col = min(e.col, len(e.lines[e.row]))
	case tea.KeyDown:
		if e.row+1 >= len(e.lines) {
			return false
		}
		e.row++
		e.col = min(e.col, len(e.lines[e.row]))
	case tea.KeyHome, tea.KeyCtrlA:
		e.col = 0
	case tea.KeyEnd, tea.KeyCtrlE:
		e.col = len(e.lines[e.row])
	case tea.KeyCtrlU:
		e.lines[e.row] = e.lines[e.row][e.col:]
		e.col = 0
	case tea.KeyCtrlK:
		e.lines[e.row] = e.lines[e.row][:e.col]
	default:
		return false
	}
	return true
}

// Render draws the editor height rows tall, scrolled to keep the cursor in
// view. Long lines wrap. The text is the operator's, but it may have been
// pasted from anywhere, so it is sanitized like any other.
func (e *editor) Render(width, height int, focused bool) []string {
	if width < 4 {
		width = 4
	}
	if len(e.lines) == 0 || (len(e.lines) == 1 && len(e.lines[0]) == 0) {
		out := []string{"│ " + styleFaint.Render(ansi.Truncate(e.placeholder, width-2, "…"))}
		if focused {
			out[0] = "│ " + styleCursor.Render(" ") + styleFaint.Render(ansi.Truncate(e.placeholder, width-3, "…"))
		}
		for len(out) < height {
			out = append(out, "│")
		}
		return out
	}
	inner := width - 2
	var rows []string
	cursorRow := 0
	for i, l := range e.lines {
		// Wrap by rune count; the editor's text is sanitized per rune.
		segs := wrapRunes(l, inner)
		for j, seg := range segs {
			start := j * inner
			text := render.SanitizeLine(string(seg))
			if focused && i == e.row && e.col >= start && (e.col < start+len(seg) || (e.col == start+len(seg) && j == len(segs)-1)) {
				cursorRow = len(rows)
				c := e.col - start
				before := render.SanitizeLine(string(seg[:c]))
				at, after := " ", ""
				if c < len(seg) {
					at = render.SanitizeLine(string(seg[c : c+1]))
					after = render.SanitizeLine(string(seg[c+1:]))
					if at == "" || at == "\t" {
						at = " "
					}
				}
				text = before + styleCursor.Render(at) + after
			}
			rows = append(rows, "│ "+text)
		}
	}
	top := 0
	if cursorRow >= height {
		top = cursorRow - height + 1
	}
	rows = rows[top:]
	if len(rows) > height {
		rows = rows[:height]
	}
	for len(rows) < height {
		rows = append(rows, "│")
	}
	return rows
}

func wrapRunes(l []rune, n int) [][]rune {
	if n < 1 {
		n = 1
	}
	if len(l) == 0 {
		return [][]rune{{}}
	}
	var out [][]rune
	for len(l) > n {
		out = append(out, l[:n])
		l = l[n:]
	}
	return append(out, l)
}
