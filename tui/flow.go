package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
)

// The flow graph: a lane per live stack, columns by call depth. Column 0 is
// the stack's root (the human, or an interrupt); each deeper column lists
// the participants called at that depth, the open call chain on the lane's
// first row so its edges run straight, siblings below it newest first.

const (
	flowEdgeW   = 4  // cells between two columns
	flowMinCol  = 10 // narrowest column before columns are dropped
	flowMaxCol  = 30 // widest column
	flowTopRows = 2  // rows of the type bar
)

// flowLane is one laid-out lane.
type flowLane struct {
	stack   string
	title   string
	first   int        // index of the first column shown (earlier ones are collapsed)
	cols    [][]string // participant ids per shown column, row order
	chain   []bool     // per shown column: row 0 is on the open chain
	more    []int      // per shown column: nodes not shown
	widths  []int
	rows    int
	animCol int // shown column whose incoming chain edge animates, or -1
}

// flowLayout is the flow view laid out for a size: what is drawn and the
// selectable nodes in reading order.
type flowLayout struct {
	lanes []flowLane
	nodes []string
}

// layoutFlow lays out the flow graph of v for width × height cells. Its cost
// follows what is on screen, not the run's length.
func layoutFlow(v *runView, res *render.LabelResolver, width, height int) flowLayout {
	var fl flowLayout
	if v == nil {
		return fl
	}
	m := v.model
	var stacks []string
	for _, id := range v.laneList {
		st, ok := m.StackByID(id)
		if !ok || (st.Resolved && id != "main") {
			continue
		}
		stacks = append(stacks, id)
	}
	avail := height - flowTopRows - 1
	if len(stacks) == 0 || avail < 2 {
		return fl
	}
	// The newest stacks matter most: drop the oldest interrupt lanes (never
	// main) when there is no room for two rows each.
	for len(stacks) > 1 && avail/len(stacks) < 3 {
		stacks = append(stacks[:1], stacks[2:]...)
	}
	per := avail / len(stacks)
	for _, sid := range stacks {
		l := v.lanes[sid]
		st, _ := m.StackByID(sid)
		lane := flowLane{stack: sid, title: laneTitle(st), animCol: -1}
		chain := m.OpenCalls(sid)
		chainAt := map[int]string{}
		for _, op := range chain {
			chainAt[op.Depth] = op.Destination
		}
		if len(chain) > 0 {
			chainAt[0] = chain[0].Source
		}
		// The active operation's edge animates when it is in flight.
		activeDepth := -1
		if op, ok := render.ActiveOperation(m); ok && op.Stack == sid && render.IsAnimated(m, op) && op.Kind == render.OpCall {
			activeDepth = op.Depth
			chainAt[op.Depth] = op.Destination
		}
		rows := max(1, per-1)
		var cols [][]string
		var isChain []bool
		var more []int
		for d, all := range l.cols {
			col := make([]string, 0, min(len(all), rows))
			onChain := false
			if pid, ok := chainAt[d]; ok {
				col = append(col, pid)
				onChain = true
			}
			for i := len(all) - 1; i >= 0 && len(col) < rows; i-- {
				if !onChain || all[i] != col[0] {
					col = append(col, all[i])
				}
			}
			cols = append(cols, col)
			isChain = append(isChain, onChain)
			more = append(more, len(all)-len(col))
		}
		// Widths: natural label widths, capped; drop leading columns while
		// even the narrowest columns do not fit.
		natural := make([]int, len(cols))
		for c, col := range cols {
			w := flowMinCol
			for _, pid := range col {
				w = max(w, ansi.StringWidth(nodeText(m, v, res, pid)))
			}
			natural[c] = min(w, flowMaxCol)
		}
		first := 0
		for len(cols)-first > 1 && (len(cols)-first)*flowMinCol+(len(cols)-first-1)*flowEdgeW+2 > width {
			first++
		}
		shown := len(cols) - first
		widths := append([]int(nil), natural[first:]...)
		lead := 0
		if first > 0 {
			lead = 2
		}
		for total(widths)+(shown-1)*flowEdgeW+lead > width {
			// Shrink the widest column by one.
			wi := 0
			for i := range widths {
				if widths[i] > widths[wi] {
					wi = i
				}
			}
			if widths[wi] <= flowMinCol {
				break
			}
			widths[wi]--
		}
		lane.first, lane.cols, lane.chain, lane.more, lane.widths = first, cols[first:], isChain[first:], more[first:], widths
		for _, col := range lane.cols {
			lane.rows = max(lane.rows, len(col))
		}
		if activeDepth >= first {
			lane.animCol = activeDepth - first
		}
		fl.lanes = append(fl.lanes, lane)
	}
	// Reading order for selection: lane by lane, column by column.
	for _, lane := range fl.lanes {
		for _, col := range lane.cols {
			fl.nodes = append(fl.nodes, col...)
		}
	}
	return fl
}

func total(ws []int) int {
	n := 0
	for _, w := range ws {
		n += w
	}
	return n
}

func laneTitle(st render.Stack) string {
	if st.ID == "main" {
		if st.Paused {
			return "Main run (paused)"
		}
		return "Main run"
	}
	t := "Interrupt"
	if st.Trigger != "" {
		t += " · " + render.SanitizeLine(strings.ReplaceAll(st.Trigger, "_", " "))
	}
	if st.Paused {
		t += " (paused)"
	}
	return t
}

// nodeText is a node's plain text: glyph, guild label, invocation counter
// and tokens.
func nodeText(m *render.Model, v *runView, res *render.LabelResolver, pid string) string {
	p, ok := m.Participant(pid)
	if !ok {
		return "?"
	}
	label := res.ParticipantLabel(p)
	switch p.Kind {
	case render.KindTool:
		return fmt.Sprintf("⚙ %s ×%d", label, p.Invocations)
	case render.KindHuman, render.KindInterrupt:
		return "◇ " + label
	}
	glyph := "●"
	if i, ok := v.lastCall[pid]; ok {
		call := m.Operations[i]
		switch outcome := callOutcome(m, call); {
		case call.Open:
		case outcome == "success":
			glyph = "✓"
		case outcome == "error":
			glyph = "✗"
		default:
			glyph = "■"
		}
	}
	s := glyph + " " + label
	if p.Invocations > 1 {
		s += fmt.Sprintf(" #%d", p.Invocations)
	}
	if p.Metrics.Tokens > 0 {
		s += " " + compactTokens(p.Metrics.Tokens)
	}
	return s
}

// callOutcome is a call's outcome: its return's, or its own when it was
// closed without one.
func callOutcome(m *render.Model, call render.Operation) string {
	if call.Outcome != "" {
		return call.Outcome
	}
	if call.ClosedBy != "" {
		if r, ok := m.Operation(call.ClosedBy); ok {
			return r.Outcome
		}
	}
	return ""
}

func compactTokens(n int) string {
	switch {
	case n >= 1_000_000:
		return trimDot(fmt.Sprintf("%.1fM", float64(n)/1e6))
	case n >= 1000:
		return trimDot(fmt.Sprintf("%.1fk", float64(n)/1e3))
	}
	return fmt.Sprintf("%d", n)
}

func trimDot(s string) string { return strings.Replace(s, ".0", "", 1) }

// typeBar is the top strip: each role and tool that has run, with counts.
func typeBar(slots []render.TypeSlot, res *render.LabelResolver, width int) []string {
	var roles, tools []string
	for _, s := range slots {
		label := res.ParticipantLabel(render.Participant{Kind: s.Kind, Role: s.Role})
		switch s.Kind {
		case render.KindRole:
			t := label
			if s.Instances > 1 {
				t += fmt.Sprintf(" ×%d", s.Instances)
			}
			roles = append(roles, t)
		case render.KindTool:
			tools = append(tools, fmt.Sprintf("%s %d", label, s.Invocations))
		}
	}
	return []string{
		clip(styleFaint.Render("Roles ")+strings.Join(roles, " · "), width),
		clip(styleFaint.Render("Tools ")+strings.Join(tools, " · "), width),
	}
}

// renderFlow draws the flow view. phase drives the marching ants and the
// active node's pulse; it changes only while something animates.
func renderFlow(v *runView, res *render.LabelResolver, fl flowLayout, sel string, phase, width, height int) []string {
	if v == nil || len(v.model.Operations) == 0 {
		return []string{styleFaint.Render("Nothing to show yet.")}
	}
	m := v.model
	out := typeBar(v.topBar, res, width)
	activeDest := ""
	if op, ok := render.ActiveOperation(m); ok && !terminalStatus(m.Status) {
		activeDest = op.Destination
	}
	for _, lane := range fl.lanes {
		if len(out) >= height {
			break
		}
		out = append(out, styleFaint.Render("── "+lane.title+" "+strings.Repeat("─", max(0, width-5-ansi.StringWidth(lane.title)))))
		for r := 0; r < lane.rows && len(out) < height; r++ {
			var b strings.Builder
			if lane.first > 0 {
				if r == 0 {
					b.WriteString(styleFaint.Render("… "))
				} else {
					b.WriteString("  ")
				}
			}
			for c, col := range lane.cols {
				if c > 0 {
					b.WriteString(flowEdge(lane, c, r, len(col), phase))
				}
				w := lane.widths[c]
				if r >= len(col) {
					if r == len(col) && lane.more[c] > 0 {
						b.WriteString(fit(styleFaint.Render(fmt.Sprintf("  +%d more", lane.more[c])), w))
					} else {
						b.WriteString(strings.Repeat(" ", w))
					}
					continue
				}
				pid := col[r]
				text := fit(nodeText(m, v, res, pid), w)
				switch {
				case pid == sel:
					text = styleSelected.Render(text)
				case pid == activeDest && r == 0 && lane.chain[c]:
					if phase%2 == 0 {
						text = styleActive.Render(text)
					} else {
						text = styleTitle.Render(text)
					}
				}
				b.WriteString(text)
			}
			out = append(out, clip(b.String(), width))
		}
	}
	if len(out) > height {
		out = out[:height]
	}
	return out
}

// flowEdge is the 4-cell connector before column c on row r.
func flowEdge(lane flowLane, c, r, n, phase int) string {
	if r == 0 {
		if !lane.chain[c] && n == 0 {
			return "    "
		}
		if c == lane.animCol {
			ants := [...]string{"━╍", "╍━"}
			return " " + styleActive.Render(ants[phase%2]+"▶")
		}
		if lane.chain[c] {
			return " ──▶"
		}
		return " ╶─▶"
	}
	if r >= n {
		return "    "
	}
	if r == n-1 {
		return "  └▶"
	}
	return "  ├▶"
}

func terminalStatus(s string) bool {
	switch s {
	case "success", "error", "needs_clarification", "interrupted":
		return true
	}
	return false
}
