package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// style names one of the console's text styles. Styles are constants, not
// package-level variables: every string styled with one is program text or
// already sanitized.
type style int

const (
	styleTitle style = iota
	styleFaint
	styleCursor
	styleSelected
	styleActive
	styleOK
	styleErr
	styleBar
	styleBanner
	styleKey
)

func (s style) lip() lipgloss.Style {
	l := lipgloss.NewStyle()
	switch s {
	case styleTitle, styleKey:
		return l.Bold(true)
	case styleFaint:
		return l.Faint(true)
	case styleCursor, styleSelected, styleBar:
		return l.Reverse(true)
	case styleActive, styleBanner:
		return l.Bold(true).Foreground(lipgloss.Color("11"))
	case styleOK:
		return l.Foreground(lipgloss.Color("10"))
	case styleErr:
		return l.Foreground(lipgloss.Color("9"))
	}
	return l
}

// Render styles s.
func (s style) Render(str string) string { return s.lip().Render(str) }

// fit pads or cuts a styled line to exactly width cells.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := ansi.StringWidth(s)
	if w > width {
		return ansi.Truncate(s, width, "…")
	}
	return s + strings.Repeat(" ", width-w)
}

// clip cuts a styled line to at most width cells.
func clip(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > width {
		return ansi.Truncate(s, width, "…")
	}
	return s
}

// wrapPlain wraps sanitized plain text to width, breaking long words.
func wrapPlain(s string, width int) string {
	if width < 8 {
		width = 8
	}
	s = strings.ReplaceAll(s, "\t", "    ")
	return ansi.Wrap(s, width, "")
}

// padLines makes lines exactly height rows of width cells.
func padLines(lines []string, width, height int) []string {
	out := make([]string, height)
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], width)
		} else {
			out[i] = strings.Repeat(" ", width)
		}
	}
	return out
}

// overlay draws box (lines) over base centred, returning the frame.
func overlay(base []string, box []string, width, height int) []string {
	bw := 0
	for _, l := range box {
		bw = max(bw, ansi.StringWidth(l))
	}
	x := max(0, (width-bw)/2)
	y := max(0, (height-len(box))/2)
	out := append([]string(nil), base...)
	for len(out) < height {
		out = append(out, "")
	}
	for i, l := range box {
		row := y + i
		if row >= len(out) {
			break
		}
		b := fit(out[row], width)
		left := ansi.Truncate(b, x, "")
		right := ansi.TruncateLeft(b, x+bw, "")
		out[row] = left + "\x1b[0m" + fit(l, bw) + "\x1b[0m" + right
	}
	return out
}

// boxed frames content lines with a rounded border and a title, width
// cells wide overall.
func boxed(title string, lines []string, width int) []string {
	inner := max(4, width-4)
	top := "╭─ " + styleTitle.Render(title) + " "
	top += strings.Repeat("─", max(0, width-2-ansi.StringWidth(top))) + "╮"
	out := []string{top}
	for _, l := range lines {
		out = append(out, "│ "+fit(l, inner)+" │")
	}
	out = append(out, "╰"+strings.Repeat("─", width-2)+"╯")
	return out
}

// keyHint formats "key what" pairs for a footer.
func keyHint(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b.WriteString("  ")
		}
		b.WriteString(styleKey.Render(pairs[i]))
		b.WriteString(" ")
		b.WriteString(pairs[i+1])
	}
	return b.String()
}
