package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
)

// The flow graph: a lane per live stack, each the stack's call tree laid
// out left to right. Column 0 is the stack's root (the human, or an
// interrupt); each node's callees sit in the next column, the first on the
// node's own row and the rest below it, joined to their caller by a bracket
// (├▶ └▶) so every edge starts at the caller that made the call. Among
// siblings the one on the open call chain comes first, so the chain runs
// straight along the top of its subtree; the others follow newest first.

const (
	flowEdgeW   = 4  // cells between two columns
	flowMinCol  = 10 // narrowest column before columns are dropped
	flowNarrow  = 4  // narrowest column whose nodes are that short
	flowMaxCol  = 30 // widest column
	flowTopRows = 2  // rows of the type bar
)

// Connectors in the 4-cell gap before a node's column.
const (
	gapNone     = iota
	gapStraight // " ──▶" the only child, on its caller's row
	gapTee      // " ─┬▶" the first of several children
	gapBranch   // "  ├▶" a later child with more below
	gapLast     // "  └▶" the last child
	gapPass     // "  │ " the bracket passing a subtree's rows
)

// flowCell is one drawn node.
type flowCell struct {
	key, pid string
	lane     int
	row, col int // lane row, shown column
	parent   int // cell index of the caller, -1 when not drawn
	child    int // cell index of the first callee drawn, -1 for none
	// calls from the caller; calls ≥ 0 only for tool nodes (×N), and
	// failed those that failed (✗N)
	calls, failed int
	// text is the node as drawn in its column; full its whole text, for
	// the status line.
	text, full string
}

// flowLane is one laid-out lane.
type flowLane struct {
	stack   string
	title   string
	first   int // depth of the first column shown (shallower ones collapsed)
	widths  []int
	rows    int
	more    int     // nodes not drawn for want of rows
	grid    [][]int // [row][col] cell index, -1 for none
	gaps    [][]int // [row][col] connector before the column
	animKey string  // node whose incoming edge marches, if any
}

// flowLayout is the flow view laid out for a size: what is drawn and the
// selectable nodes in reading order (lane by lane, row by row).
type flowLayout struct {
	lanes []flowLane
	cells []flowCell
	nodes []string // node keys, in cell order
}

// cellOf finds a key's cell.
func (fl flowLayout) cellOf(key string) int {
	for i, c := range fl.cells {
		if c.key == key {
			return i
		}
	}
	return -1
}

// placed is a tree node placed on a lane row at a depth.
type placed struct {
	node, row, depth, parent int // parent: index into the placed list
	gap                      int
}

// layoutFlow lays out the flow graph of v for width × height cells. Its cost
// follows what is on screen: each lane's tree is walked only as far as its
// rows reach.
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
	active, hasActive := render.ActiveOperation(m)
	for _, sid := range stacks {
		l := v.lanes[sid]
		st, _ := m.StackByID(sid)
		lane := flowLane{stack: sid, title: laneTitle(st)}
		if l == nil || len(l.nodes) == 0 {
			continue
		}
		// The open chain: its nodes go first among their siblings.
		onChain := map[string]bool{}
		for _, op := range m.OpenCalls(sid) {
			onChain[flowKey(m, op.Source, op.Destination)] = true
		}
		if hasActive && active.Stack == sid && active.Kind == render.OpCall && render.IsAnimated(m, active) {
			lane.animKey = flowKey(m, active.Source, active.Destination)
			onChain[lane.animKey] = true
		}
		rows := max(1, per-1)
		ps := placeTree(l, onChain, rows)
		lane.more = len(l.nodes) - len(ps)
		// Columns: depths 0..maxDepth; natural widths, capped; drop the
		// shallowest columns while even the narrowest do not fit.
		depths := 0
		for _, p := range ps {
			depths = max(depths, p.depth+1)
			lane.rows = max(lane.rows, p.row+1)
		}
		// natural fits every node whole; compact fits every label whole
		// with only the figures that must show (tokens go first).
		natural := make([]int, depths)
		compact := make([]int, depths)
		for d := range natural {
			natural[d], compact[d] = flowNarrow, flowNarrow
		}
		for _, p := range ps {
			n := l.nodes[p.node]
			np := nodeInfo(m, v, res, n.pid, n.calls, n.failed)
			natural[p.depth] = max(natural[p.depth], min(flowMaxCol, ansi.StringWidth(np.String())))
			compact[p.depth] = max(compact[p.depth], min(flowMaxCol, ansi.StringWidth(np.fit(np.label, 0))))
		}
		first := 0
		for depths-first > 1 && (depths-first)*flowMinCol+(depths-first-1)*flowEdgeW+2 > width {
			first++
		}
		shown := depths - first
		widths := append([]int(nil), natural[first:]...)
		lead := 0
		if first > 0 {
			lead = 2
		}
		// Shrink the widest column, first only down to its compact width
		// (dropping token counts), then below it (cutting labels).
		floor := compact[first:]
		for pass := 0; pass < 2 && total(widths)+(shown-1)*flowEdgeW+lead > width; pass++ {
			for total(widths)+(shown-1)*flowEdgeW+lead > width {
				wi := -1
				for i := range widths {
					if widths[i] > floor[i] && (wi < 0 || widths[i] > widths[wi]) {
						wi = i
					}
				}
				if wi < 0 {
					break
				}
				widths[wi]--
			}
			floor = make([]int, shown)
			for i := range floor {
				floor[i] = min(flowMinCol, widths[i])
			}
		}
		lane.first, lane.widths = first, widths
		lane.grid = make([][]int, lane.rows)
		lane.gaps = make([][]int, lane.rows)
		for r := range lane.grid {
			lane.grid[r] = make([]int, shown)
			lane.gaps[r] = make([]int, shown)
			for c := range lane.grid[r] {
				lane.grid[r][c] = -1
			}
		}
		li := len(fl.lanes)
		cellAt := make([]int, len(ps)) // placed index → cell index
		for i, p := range ps {
			cellAt[i] = -1
			c := p.depth - first
			if c < 0 {
				continue
			}
			n := l.nodes[p.node]
			parent := -1
			if p.parent >= 0 {
				parent = cellAt[p.parent]
			}
			calls := -1
			if pp, ok := m.Participant(n.pid); ok && pp.Kind == render.KindTool {
				calls = n.calls
			}
			cellAt[i] = len(fl.cells)
			fl.cells = append(fl.cells, flowCell{key: n.key, pid: n.pid, lane: li, row: p.row, col: c, parent: parent, child: -1, calls: calls, failed: n.failed})
			if parent >= 0 && fl.cells[parent].child < 0 {
				fl.cells[parent].child = cellAt[i]
			}
			lane.grid[p.row][c] = cellAt[i]
			if c > 0 {
				lane.gaps[p.row][c] = p.gap
			}
		}
		// The bracket between a child and its next sibling passes the
		// rows of the child's subtree.
		for i, p := range ps {
			c := p.depth - first
			if c <= 0 || (p.gap != gapTee && p.gap != gapBranch) {
				continue
			}
			next := lane.rows
			for j := i + 1; j < len(ps); j++ {
				if ps[j].parent == p.parent {
					next = ps[j].row
					break
				}
			}
			for r := p.row + 1; r < next; r++ {
				lane.gaps[r][c] = gapPass
			}
		}
		fl.lanes = append(fl.lanes, lane)
	}
	for _, c := range fl.cells {
		fl.nodes = append(fl.nodes, c.key)
	}
	shortenNodes(&fl, m, v, res)
	return fl
}

// placeTree places a lane's tree on at most rows rows, depth first: a
// node's first child on its own row, each later child below the previous
// child's subtree. Children on the open chain come first, then the rest
// newest first. Nodes that do not fit are left out.
func placeTree(l *lane, onChain map[string]bool, rows int) []placed {
	ps := []placed{{node: 0, row: 0, depth: 0, parent: -1}}
	next := 1 // first free row
	var walk func(pi int)
	walk = func(pi int) {
		p := ps[pi]
		kids := orderChildren(l, l.nodes[p.node].children, onChain)
		var mine []int // placed indices of this node's children
		for k, ci := range kids {
			row := p.row
			if k > 0 {
				row = next
			}
			if row >= rows {
				break
			}
			if k > 0 {
				next++
			}
			ps = append(ps, placed{node: ci, row: row, depth: p.depth + 1, parent: pi})
			mine = append(mine, len(ps)-1)
			walk(len(ps) - 1)
		}
		for k, i := range mine {
			switch {
			case len(mine) == 1:
				ps[i].gap = gapStraight
			case k == 0:
				ps[i].gap = gapTee
			case k == len(mine)-1:
				ps[i].gap = gapLast
			default:
				ps[i].gap = gapBranch
			}
		}
	}
	walk(0)
	return ps
}

// orderChildren puts the open chain's child first, then the rest newest
// first (by their latest call).
func orderChildren(l *lane, kids []int, onChain map[string]bool) []int {
	out := make([]int, 0, len(kids))
	for i := len(kids) - 1; i >= 0; i-- {
		if onChain[l.nodes[kids[i]].key] {
			out = append(out, kids[i])
		}
	}
	rest := make([]int, 0, len(kids))
	for _, k := range kids {
		if !onChain[l.nodes[k].key] {
			rest = append(rest, k)
		}
	}
	sort.SliceStable(rest, func(a, b int) bool { return l.nodes[rest[a]].last > l.nodes[rest[b]].last })
	return append(out, rest...)
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

// nodeParts is a node's text in parts: a glyph, the guild label, the
// figures that must show (an instance number, a tool's call count) and
// those that go first when room is short (tokens). A tool node counts the
// calls from its caller (calls); other nodes their participant's
// invocations.
type nodeParts struct {
	glyph, label string
	keep, drop   []string
}

func (n nodeParts) String() string {
	s := n.glyph + " " + n.label
	for _, f := range append(append([]string(nil), n.keep...), n.drop...) {
		s += " " + f
	}
	return s
}

// fit lays the node out in width cells with its label shortened to short
// (see shortenNodes); figures show whole or not at all.
func (n nodeParts) fit(short string, width int) string {
	s := n.glyph + " " + short
	for _, f := range n.keep {
		s += " " + f
	}
	if short == n.label {
		with := s
		for _, f := range n.drop {
			with += " " + f
		}
		if ansi.StringWidth(with) <= width {
			return with
		}
	}
	return s
}

// room is the label's room at width: all that the glyph and the kept
// figures leave, less the dropped figures when the whole label fits with
// them.
func (n nodeParts) room(width int) int {
	r := labelRoom(n.glyph, n.keep, width)
	if ansi.StringWidth(n.String()) <= width {
		return ansi.StringWidth(n.label)
	}
	return r
}

// nodeInfo is a node's parts. A tool node counts its caller's calls (×N)
// and those whose command failed (✗N); a role node's glyph is its latest
// invocation's outcome.
func nodeInfo(m *render.Model, v *runView, res *render.LabelResolver, pid string, calls, failed int) nodeParts {
	p, ok := m.Participant(pid)
	if !ok {
		return nodeParts{glyph: "?"}
	}
	label := res.ParticipantLabel(p)
	switch p.Kind {
	case render.KindTool:
		if calls < 0 {
			calls = p.Invocations
		}
		keep := []string{fmt.Sprintf("×%d", calls)}
		if failed > 0 {
			keep = append(keep, fmt.Sprintf("✗%d", failed))
		}
		return nodeParts{glyph: "⚙", label: label, keep: keep}
	case render.KindHuman, render.KindInterrupt:
		return nodeParts{glyph: "◇", label: label}
	}
	glyph := "●"
	if i, ok := v.lastCall[pid]; ok && !m.Operations[i].Open {
		if g := callVerdict(m, m.Operations[i]).Glyph; g != "" {
			glyph = g
		}
	}
	n := nodeParts{glyph: glyph, label: label}
	if p.Invocations > 1 {
		n.keep = append(n.keep, fmt.Sprintf("#%d", p.Invocations))
	}
	if p.Metrics.Tokens > 0 {
		n.drop = append(n.drop, compactTokens(p.Metrics.Tokens))
	}
	return n
}

// shortenNodes gives every drawn cell its text at its column's width,
// labels shortened so that different labels stay different.
func shortenNodes(fl *flowLayout, m *render.Model, v *runView, res *render.LabelResolver) {
	parts := make([]nodeParts, len(fl.cells))
	labels := make([]string, len(fl.cells))
	rooms := make([]int, len(fl.cells))
	for i, c := range fl.cells {
		parts[i] = nodeInfo(m, v, res, c.pid, c.calls, c.failed)
		w := fl.lanes[c.lane].widths[c.col]
		labels[i], rooms[i] = parts[i].label, parts[i].room(w)
	}
	short := shortenDistinct(labels, rooms)
	for i, c := range fl.cells {
		fl.cells[i].text = parts[i].fit(short[i], fl.lanes[c.lane].widths[c.col])
		fl.cells[i].full = parts[i].String()
	}
}

// callVerdict is how a call ended: its return's outcome, or its own when
// it was closed without one.
func callVerdict(m *render.Model, call render.Operation) render.Verdict {
	if call.Outcome != "" {
		return render.OutcomeVerdict(call.Outcome, call.ErrorKind, call.OutcomeDetail)
	}
	if call.ClosedBy != "" {
		if r, ok := m.Operation(call.ClosedBy); ok {
			return render.OutcomeVerdict(r.Outcome, r.ErrorKind, r.OutcomeDetail)
		}
	}
	return render.Verdict{}
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
func renderFlow(th theme, v *runView, res *render.LabelResolver, fl flowLayout, sel string, phase, width, height int) []string {
	if v == nil || len(v.model.Operations) == 0 {
		return []string{styleFaint.Render("Nothing to show yet.")}
	}
	m := v.model
	out := typeBar(v.topBar, res, width)
	activeKey := ""
	if op, ok := render.ActiveOperation(m); ok && !terminalStatus(m.Status) {
		activeKey = flowKey(m, op.Source, op.Destination)
	}
	for _, lane := range fl.lanes {
		if len(out) >= height {
			break
		}
		title := lane.title
		if lane.more > 0 {
			title += fmt.Sprintf(" · +%d more", lane.more)
		}
		out = append(out, styleFaint.Render("── "+title+" "+strings.Repeat("─", max(0, width-5-ansi.StringWidth(title)))))
		for r := 0; r < lane.rows && len(out) < height; r++ {
			var b strings.Builder
			if lane.first > 0 {
				if r == 0 {
					b.WriteString(styleFaint.Render("… "))
				} else {
					b.WriteString("  ")
				}
			}
			for c, w := range lane.widths {
				ci := lane.grid[r][c]
				if c > 0 {
					b.WriteString(flowEdge(th, fl, lane, ci, lane.gaps[r][c], phase))
				}
				if ci < 0 {
					b.WriteString(strings.Repeat(" ", w))
					continue
				}
				cell := fl.cells[ci]
				text := fit(cell.text, w)
				switch {
				case cell.key == sel:
					text = styleSelected.Render(text)
				case cell.key == activeKey:
					if phase%2 == 0 {
						text = th.Render(toneActive, text)
					} else {
						text = styleTitle.Render(text)
					}
				}
				b.WriteString(text)
			}
			out = append(out, clip(strings.TrimRight(b.String(), " "), width))
		}
	}
	if len(out) > height {
		out = out[:height]
	}
	return out
}

// flowEdge is the 4-cell connector before a column: into the node ci (or
// -1) on that row, of the given kind.
func flowEdge(th theme, fl flowLayout, lane flowLane, ci, gap, phase int) string {
	if ci >= 0 && fl.cells[ci].key == lane.animKey && lane.animKey != "" && (gap == gapStraight || gap == gapTee) {
		ants := [...]string{"━╍", "╍━"}
		return " " + th.Render(toneActive, ants[phase%2]+"▶")
	}
	switch gap {
	case gapStraight:
		return " ──▶"
	case gapTee:
		return " ─┬▶"
	case gapBranch:
		return "  ├▶"
	case gapLast:
		return "  └▶"
	case gapPass:
		return "  │ "
	}
	return "    "
}

func terminalStatus(s string) bool {
	switch s {
	case "success", "error", "needs_clarification", "interrupted":
		return true
	}
	return false
}
