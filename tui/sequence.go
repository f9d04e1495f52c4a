package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
)

// The sequence view: a column per role, plus "The human" and "Tools"; one
// row per operation down the time axis, drawn only for the rows in the
// window, so a 10,000-operation run costs what one screen costs.

const seqGutter = 6 // "  123 " operation numbers

// seqRows is the number of rows the sequence view has: one per operation,
// plus the terminal node of a finished run.
func seqRows(v *runView) int {
	if v == nil {
		return 0
	}
	n := len(v.model.Operations)
	if v.card != nil {
		n++
	}
	return n
}

// seqColumnX places the columns across width.
func seqColumnX(n, width int) (xs []int, spacing int) {
	if n == 0 {
		return nil, 0
	}
	spacing = max(8, (width-seqGutter)/n)
	xs = make([]int, n)
	for i := range xs {
		xs[i] = seqGutter + spacing*i + spacing/2
	}
	return xs, spacing
}

func seqColumnLabel(res *render.LabelResolver, col string) string {
	switch col {
	case "human", "interrupt", "tools":
		return res.PseudoLabel(col)
	}
	return res.ParticipantLabel(render.Participant{Kind: render.KindRole, Role: col})
}

// renderSequence draws height rows from row top; sel is the selected row.
func renderSequence(th theme, v *runView, res *render.LabelResolver, top, sel, phase, width, height int) []string {
	if v == nil || len(v.model.Operations) == 0 {
		return []string{styleFaint.Render("Nothing to show yet.")}
	}
	xs, spacing := seqColumnX(len(v.seqCols), width)
	// Header: column labels centred on their lifelines.
	head := newCells(width)
	labels := make([]string, len(v.seqCols))
	rooms := make([]int, len(v.seqCols))
	for i, col := range v.seqCols {
		labels[i], rooms[i] = seqColumnLabel(res, col), max(3, spacing-1)
	}
	for i, label := range shortenDistinct(labels, rooms) {
		head.put(xs[i]-ansi.StringWidth(label)/2, label)
	}
	out := []string{styleTitle.Render(head.String())}
	total := seqRows(v)
	for r := top; r < total && len(out) < height; r++ {
		out = append(out, seqRow(th, v, res, xs, r, r == sel, phase, width))
	}
	for len(out) < height {
		c := newCells(width)
		for _, x := range xs {
			c.put(x, "│")
		}
		out = append(out, styleFaint.Render(c.String()))
	}
	return out
}

func seqRow(th theme, v *runView, res *render.LabelResolver, xs []int, r int, selected bool, phase, width int) string {
	m := v.model
	c := newCells(width)
	for _, x := range xs {
		c.put(x, "│")
	}
	if r >= len(m.Operations) {
		// The run's terminal node.
		c.put(0, fmt.Sprintf("%5s ", "end"))
		if len(xs) > 0 {
			word := runStatusWord(v)
			glyph := render.RoleVerdict(word, "").Glyph
			if glyph == "" || word == "running" {
				glyph = "■"
			}
			c.put(xs[0]-1, glyph+" "+word)
		}
		return finishRow(th, c.String(), selected, false)
	}
	op := m.Operations[r]
	c.put(0, fmt.Sprintf("%5d ", r+1))
	src, _ := m.Participant(op.Source)
	dst, _ := m.Participant(op.Destination)
	sx, dx := xs[colOf(v, src)], xs[colOf(v, dst)]
	label := opLabel(res, op, src, dst)
	animated := render.IsAnimated(m, op)
	fill := "─"
	switch {
	case op.Kind == render.OpObserve:
		fill = "╌"
	case op.Kind == render.OpReturn:
		fill = "┈"
	}
	head := ""
	switch op.Kind {
	case render.OpReturn:
		head = render.OutcomeVerdict(op.Outcome, op.ErrorKind, op.OutcomeDetail).Glyph
	case render.OpTerminate:
		head = "✗"
	}
	if sx == dx {
		// Loopback: a call to the same column.
		c.put(sx, "├─╮")
		c.put(sx+4, "↺ "+label)
		return finishRow(th, c.String(), selected, animated)
	}
	lo, hi := min(sx, dx), max(sx, dx)
	for x := lo + 1; x < hi; x++ {
		f := fill
		if animated && (x+phase)%3 == 0 {
			f = " "
		}
		c.put(x, f)
	}
	if dx > sx {
		c.put(sx, "├")
		c.put(dx-1, "▶")
	} else {
		c.put(sx, "┤")
		c.put(dx+1, "◀")
	}
	if head != "" {
		c.put(dx, head)
	}
	// The label sits on the arrow when it fits, else beside its far end.
	// Cut at a word boundary; the status line shows it whole.
	// A short arrow's label goes beside it, on the side with more room.
	switch right, left := width-hi-4, lo-seqGutter-3; {
	case hi-lo-3 >= 8:
		c.put(lo+2, " "+shortWords(label, hi-lo-5)+" ")
	case right >= left || right >= ansi.StringWidth(label):
		c.put(hi+2, " "+shortWords(label, max(1, right))+" ")
	default:
		text := " " + shortWords(label, left) + " "
		c.put(lo-1-ansi.StringWidth(text), text)
	}
	return finishRow(th, c.String(), selected, animated)
}

func finishRow(th theme, s string, selected, animated bool) string {
	switch {
	case selected:
		return styleSelected.Render(s)
	case animated:
		return th.Render(toneActive, s)
	}
	return s
}

func colOf(v *runView, p render.Participant) int {
	key := p.Role
	if p.Kind == render.KindTool {
		key = "tools"
	}
	return v.seqIndex[key]
}

// opLabel is an operation's label, led by what failed when a tool's
// return failed ("2 failed · Tests answers Coder"): the lead survives the
// cut of a narrow column.
func opLabel(res *render.LabelResolver, op render.Operation, src, dst render.Participant) string {
	label := res.OperationLabel(op, src, dst)
	if op.Kind == render.OpReturn && op.Outcome == render.OutcomeFailed && op.OutcomeDetail != "" {
		label = render.SanitizeLine(op.OutcomeDetail) + " · " + label
	}
	return label
}

func runStatusWord(v *runView) string {
	if v.card != nil {
		return render.SanitizeLine(v.card.Status)
	}
	return render.SanitizeLine(v.model.Status)
}

// cells is a one-row character grid; wide runes take two cells.
type cells []rune

func newCells(width int) cells {
	c := make(cells, max(0, width))
	for i := range c {
		c[i] = ' '
	}
	return c
}

// put writes s from column x, clipped to the row. The second cell of a
// wide rune holds 0 and is skipped when the row is joined.
func (c cells) put(x int, s string) {
	for _, r := range s {
		w := runeWidth(r)
		if w == 0 {
			continue
		}
		if x < 0 {
			x += w
			continue
		}
		if x+w > len(c) {
			return
		}
		c[x] = r
		if w == 2 {
			c[x+1] = 0
		}
		x += w
	}
}

func (c cells) String() string {
	var b strings.Builder
	b.Grow(len(c) * 3)
	for i, r := range c {
		if r == 0 {
			continue
		}
		// A wide rune whose second cell was overwritten would shift the row.
		if i+1 < len(c) && runeWidth(r) == 2 && c[i+1] != 0 {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// runeWidth is a rune's cell width, with a fast path for the Latin and
// box-drawing runes that make up most rows.
func runeWidth(r rune) int {
	switch {
	case r >= 0x300 && r <= 0x36f:
		return 0
	case r < 0x1100 || (r >= 0x2500 && r <= 0x25ff):
		return 1
	}
	return ansi.StringWidth(string(r))
}
