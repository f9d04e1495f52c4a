package render

import (
	"strconv"
	"strings"
)

// ActiveOperation is the active stack's focus (Model.ActiveOperation): the
// operation whose line animates while it is in flight and whose destination
// is the active participant.
func ActiveOperation(m *Model) (Operation, bool) {
	if m.ActiveOperation == "" {
		return Operation{}, false
	}
	return m.Operation(m.ActiveOperation)
}

// ActiveParticipant is the destination of the active operation, or the
// active stack's root while that stack has no operation yet.
func ActiveParticipant(m *Model) (Participant, bool) {
	if op, ok := ActiveOperation(m); ok {
		return m.Participant(op.Destination)
	}
	if s, ok := m.StackByID(m.ActiveStack); ok {
		return m.Participant(s.Root)
	}
	return Participant{}, false
}

// IsAnimated reports whether an operation's line moves: it is in flight and
// its stack is not paused. Observe and terminate never animate.
func IsAnimated(m *Model, op Operation) bool {
	if op.Lifecycle != InFlight || op.Kind == OpObserve || op.Kind == OpTerminate {
		return false
	}
	s, ok := m.StackByID(op.Stack)
	return ok && !s.Paused
}

// NowCaption is the one-line "now" caption: what the run is doing, in the
// resolver's labels. A call in transit reads as its operation label; once
// the callee works (the call settled, or a return landed on its caller) it
// reads as that participant's working label. A tool call reads as the tool's
// own working label when the guild gives one, else as the call label. A
// finished run, or one with nothing active, has no caption. The caption
// never contains operation details.
func NowCaption(m *Model, r *LabelResolver) string {
	if terminalStatus(m.Status) {
		return ""
	}
	op, ok := ActiveOperation(m)
	if !ok {
		// A fresh interrupt stack: its root is about to act.
		p, ok := ActiveParticipant(m)
		if !ok || m.ActiveStack == mainStackID {
			return ""
		}
		if w, ok := r.WorkingLabel(p, m.ActiveStack); ok {
			return w + "…"
		}
		return ""
	}
	src, ok1 := m.Participant(op.Source)
	dst, ok2 := m.Participant(op.Destination)
	if !ok1 || !ok2 {
		return ""
	}
	if op.Kind == OpCall && dst.Kind == KindTool && op.Lifecycle == InFlight {
		if l := r.set.Tools[dst.Role].HumanWorkingLabel.pick(r.tier); l != nil {
			w, _ := r.WorkingLabel(dst, op.ID)
			return w + "…"
		}
		return r.OperationLabel(op, src, dst) + "…"
	}
	if op.Lifecycle == Settled && dst.Kind != KindHuman {
		if w, ok := r.WorkingLabel(dst, op.ID); ok {
			return w + "…"
		}
	}
	return r.OperationLabel(op, src, dst) + "…"
}

// CostSummary is the ambient cost strip's figures.
type CostSummary struct {
	Tokens       int `json:"tokens"`
	CachedTokens int `json:"cachedTokens"`
	// LatestElapsedSeconds is the elapsed time of the latest model call or
	// tool result.
	LatestElapsedSeconds float64 `json:"latestElapsedSeconds"`
	ModelCalls           int     `json:"modelCalls"`
	ToolCalls            int     `json:"toolCalls"`
	ProviderFailures     int     `json:"providerFailures"`
}

// CostStrip reads the run's summed tokens and latest elapsed off the model:
// O(1), since Apply keeps the totals.
func CostStrip(m *Model) CostSummary {
	t := m.Totals
	return CostSummary{
		Tokens: t.Tokens, CachedTokens: t.CachedPromptTokens,
		LatestElapsedSeconds: t.LatestElapsedSeconds,
		ModelCalls:           t.ModelCalls, ToolCalls: t.ToolCalls,
		ProviderFailures: t.ProviderFailures,
	}
}

// String formats the strip for the terminal:
// "12.3k tokens · 4.1k cached · last 3.2s".
func (c CostSummary) String() string {
	parts := []string{compact(c.Tokens) + " tokens"}
	if c.CachedTokens > 0 {
		parts = append(parts, compact(c.CachedTokens)+" cached")
	}
	if c.LatestElapsedSeconds > 0 {
		parts = append(parts, "last "+duration(c.LatestElapsedSeconds))
	}
	if c.ProviderFailures > 0 {
		parts = append(parts, strconv.Itoa(c.ProviderFailures)+" provider failures")
	}
	return strings.Join(parts, " · ")
}

// compact formats a count: 999, 12.3k, 4.56M.
func compact(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 1_000_000:
		return trimZero(strconv.FormatFloat(float64(n)/1000, 'f', 1, 64)) + "k"
	default:
		return trimZero(strconv.FormatFloat(float64(n)/1_000_000, 'f', 2, 64)) + "M"
	}
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// duration formats seconds: 0.4s, 3.2s, 2m05s, 1h02m.
func duration(sec float64) string {
	switch {
	case sec < 60:
		return strconv.FormatFloat(sec, 'f', 1, 64) + "s"
	case sec < 3600:
		s := int(sec)
		return strconv.Itoa(s/60) + "m" + pad2(s%60) + "s"
	default:
		s := int(sec)
		return strconv.Itoa(s/3600) + "h" + pad2(s%3600/60) + "m"
	}
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// RoleNode is one role instance in the delegation tree.
type RoleNode struct {
	ID        string     `json:"id"`
	Role      string     `json:"role"`
	Stack     string     `json:"stack"`
	Open      bool       `json:"open"`
	Outcome   string     `json:"outcome,omitempty"`
	ErrorKind string     `json:"errorKind,omitempty"`
	Metrics   Metrics    `json:"metrics"`
	Children  []RoleNode `json:"children,omitempty"`
}

// RoleTree is the run's role instances as a delegation tree, in start
// order. Roots are the instances called by a stack root (the entry role,
// interrupt handlers). O(operations).
func RoleTree(m *Model) []RoleNode {
	type node struct {
		RoleNode
		kids []int
	}
	var nodes []node
	at := map[string]int{}
	var roots []int
	for _, op := range m.Operations {
		if op.Kind != OpCall || op.Role == "" {
			continue
		}
		if _, seen := at[op.Destination]; seen {
			continue
		}
		n := node{RoleNode: RoleNode{ID: op.Destination, Role: op.Role, Stack: op.Stack, Open: op.Open, Outcome: op.Outcome, Metrics: op.Metrics}}
		if ret, ok := m.Operation(op.ClosedBy); ok {
			n.Outcome, n.ErrorKind = ret.Outcome, ret.ErrorKind
		}
		i := len(nodes)
		nodes = append(nodes, n)
		at[op.Destination] = i
		if pi, ok := at[op.Source]; ok {
			nodes[pi].kids = append(nodes[pi].kids, i)
		} else {
			roots = append(roots, i)
		}
	}
	var build func(i int) RoleNode
	build = func(i int) RoleNode {
		rn := nodes[i].RoleNode
		for _, k := range nodes[i].kids {
			rn.Children = append(rn.Children, build(k))
		}
		return rn
	}
	out := make([]RoleNode, 0, len(roots))
	for _, i := range roots {
		out = append(out, build(i))
	}
	return out
}

// TypeSlot aggregates every participant of one role or tool name: the flow
// view's top bar.
type TypeSlot struct {
	Kind ParticipantKind `json:"kind"`
	Role string          `json:"role"`
	// Instances counts the participants (role instances; 1 for a tool).
	Instances int `json:"instances"`
	// Invocations counts the calls into them.
	Invocations int     `json:"invocations"`
	Metrics     Metrics `json:"metrics"`
}

// TopBar lists every role and tool that has run, in order of first
// appearance, with counts and summed metrics. O(participants).
func TopBar(m *Model) []TypeSlot {
	var out []TypeSlot
	at := map[string]int{}
	for _, p := range m.Participants {
		if p.Kind != KindRole && p.Kind != KindTool {
			continue
		}
		key := string(p.Kind) + "\x00" + p.Role
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, TypeSlot{Kind: p.Kind, Role: p.Role})
		}
		out[i].Instances++
		out[i].Invocations += p.Invocations
		out[i].Metrics.add(p.Metrics)
	}
	return out
}
