package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// style names one of the console's text styles that only set attributes
// (bold, faint, reverse): they read the same on any background, since the
// terminal draws them in its own foreground and background colours.
// Styles are constants, not package-level variables: every string styled
// with one is program text or already sanitized. Coloured styles are tones
// (theme.go), drawn through the Model's theme.
type style int

const (
	styleTitle style = iota
	styleFaint
	styleCursor
	styleSelected
	styleBar
	styleKey
	styleMatch // a search match
)

func (s style) lip() lipgloss.Style {
	l := lipgloss.NewStyle()
	switch s {
	case styleTitle, styleKey:
		return l.Bold(true)
	case styleFaint:
		return l.Faint(true)
	case styleCursor, styleSelected, styleBar, styleMatch:
		return l.Reverse(true)
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
	return trimLineEnds(ansi.Wrap(s, width, ""))
}

// trimLineEnds drops the spaces ansi.Wrap leaves at the end of a wrapped
// line: a line of exactly the width plus its space would otherwise be cut
// with "…" by fit, mid-sentence.
func trimLineEnds(s string) string {
	if !strings.Contains(s, " \n") && !strings.HasSuffix(s, " ") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// wrapIndented wraps sanitized plain text to width like wrapPlain, each
// line's continuation indented as the line is, so blocks stay blocks.
func wrapIndented(s string, width int) string {
	if width < 8 {
		width = 8
	}
	s = strings.ReplaceAll(s, "\t", "    ")
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		body := strings.TrimLeft(line, " ")
		ind := len(line) - len(body)
		if ind > width/2 {
			ind = 0
			body = line
		}
		for j, part := range strings.Split(trimLineEnds(ansi.Wrap(body, width-ind, "")), "\n") {
			if j > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strings.Repeat(" ", ind) + part)
		}
	}
	return b.String()
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

// Overlay geometry. A modal owns its frame, a clear moat of one cell left
// and right of it, and any strip of background beside it narrower than
// minStrip cells: a sliver of cut background text beside a frame reads as
// debris ("│x…", "×3"), not as the screen behind. The rows above and below
// stay the background's whole.
const (
	moat     = 1
	minStrip = 4
)

// rect is a region of the screen, in cells: [x0, x1) × [y0, y1).
type rect struct{ x0, y0, x1, y1 int }

// overlayRect is where overlay puts a box of bw × bh cells on a screen
// of width × height, and the region it owns around it.
func overlayRect(bw, bh, width, height int) (box, owned rect) {
	x := max(0, (width-bw)/2)
	y := max(0, (height-bh)/2)
	box = rect{x, y, min(width, x+bw), min(height, y+bh)}
	owned = rect{max(0, x-moat), box.y0, min(width, box.x1+moat), box.y1}
	if owned.x0 < minStrip {
		owned.x0 = 0
	}
	if width-owned.x1 < minStrip {
		owned.x1 = width
	}
	return box, owned
}

// overlay draws box (lines) over base centred, returning the frame. Every
// cell outside the region the box owns (overlayRect) is the background's
// exactly; the owned cells around the box are blank.
func overlay(base []string, box []string, width, height int) []string {
	bw := 0
	for _, l := range box {
		bw = max(bw, ansi.StringWidth(l))
	}
	b, own := overlayRect(bw, len(box), width, height)
	out := append([]string(nil), base...)
	for len(out) < height {
		out = append(out, "")
	}
	for row := own.y0; row < own.y1 && row < len(out); row++ {
		mid := strings.Repeat(" ", own.x1-own.x0)
		if i := row - b.y0; row >= b.y0 && i < len(box) {
			mid = strings.Repeat(" ", b.x0-own.x0) + "\x1b[0m" + fit(box[i], b.x1-b.x0) + "\x1b[0m" + strings.Repeat(" ", own.x1-b.x1)
		}
		out[row] = splice(out[row], mid, own.x0, own.x1, width)
	}
	return out
}

// splice replaces cells [x0, x1) of a styled line of width cells with mid
// (x1-x0 cells wide). A wide rune cut by either edge becomes spaces, so
// every cell keeps its column.
func splice(line, mid string, x0, x1, width int) string {
	line = fit(line, width)
	left := ansi.Truncate(line, x0, "")
	if w := ansi.StringWidth(left); w < x0 {
		left += strings.Repeat(" ", x0-w)
	}
	right := ansi.TruncateLeft(line, x1, "")
	if w := ansi.StringWidth(right); w < width-x1 {
		right = strings.Repeat(" ", width-x1-w) + right
	}
	return left + "\x1b[0m" + mid + "\x1b[0m" + right
}

// boxed frames content lines with a rounded border and a title, width
// cells wide overall.
func boxed(title string, lines []string, width int) []string {
	inner := max(4, width-4)
	top := "╭─ " + styleTitle.Render(title) + " "
	top += strings.Repeat("─", max(0, width-1-ansi.StringWidth(top))) + "╮"
	out := []string{top}
	for _, l := range lines {
		out = append(out, "│ "+fit(l, inner)+" │")
	}
	out = append(out, "╰"+strings.Repeat("─", width-2)+"╯")
	return out
}

// withFlash adds a notice inside a framed box, above its bottom border,
// so a key's answer shows where the operator is looking. A box as tall
// as the screen gives up its last rows of content for it.
func withFlash(th theme, box []string, flash string, height int) []string {
	if flash == "" || len(box) < 3 {
		return box
	}
	w := ansi.StringWidth(box[0])
	var rows []string
	for _, l := range wrapStyled(flash, max(1, w-4)) {
		rows = append(rows, "│ "+fit(th.Render(toneActive, l), w-4)+" │")
	}
	keep := len(box) - 1
	if over := len(box) + len(rows) - height; over > 0 {
		keep = max(1, keep-over)
	}
	out := append([]string(nil), box[:keep]...)
	out = append(out, rows...)
	return append(out, box[len(box)-1])
}

// boxedFit frames lines in a box as wide as its widest line or title
// needs, and at most maxWidth: a dialog sized to its text.
func boxedFit(title string, lines []string, maxWidth int) []string {
	w := ansi.StringWidth(title) + 6
	for _, l := range lines {
		w = max(w, ansi.StringWidth(l)+4)
	}
	return boxed(title, lines, min(w, maxWidth))
}

// wrapStyled wraps a styled line to width cells at spaces, breaking a word
// only when it is longer than a whole line.
func wrapStyled(s string, width int) []string {
	if width < 1 {
		return []string{s}
	}
	return strings.Split(ansi.Wrap(s, width, ""), "\n")
}

// hints formats "key what" pairs for a line of width cells, dropping
// whole pairs that do not fit: the later ones first, but the first pair,
// esc and ? last.
func hints(width int, pairs ...string) string {
	var segs []segment
	for i := 0; i+1 < len(pairs); i += 2 {
		prio := 100 - i
		switch {
		case i == 0:
			prio = 300
		case pairs[i] == "esc" || pairs[i] == "?":
			prio = 200
		}
		text := keyHint(pairs[i], pairs[i+1])
		if len(segs) > 0 {
			text = "  " + text
		}
		segs = append(segs, segment{text, prio})
	}
	return fitSegments(segs, width)
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
