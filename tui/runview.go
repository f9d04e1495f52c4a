package tui

import (
	"strings"
	"time"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// runView is everything the console keeps about the run on screen: the
// InteractionModel and small incremental indexes over it. Applying an event
// is O(1) amortised, like render.Model.Apply.
type runView struct {
	id            string
	task          string
	effort        string
	continuesFrom string
	startedAt     time.Time
	model         *render.Model

	// flow index: per stack, its call tree.
	lanes    map[string]*lane
	laneList []string       // stack ids in push order
	lastCall map[string]int // participant id → index of its latest call op
	// toolCalls maps an open tool call (caller, call id, tool) to its call
	// op and the flow node it counts on, so its return can be counted too.
	toolCalls map[string]toolCallRef
	// seqCols are the sequence view's columns in order of first
	// appearance: "human", then role names, "interrupt", and "tools" last.
	seqCols  []string
	seqIndex map[string]int
	applied  int   // operations indexed so far
	lastSeq  int64 // log line of the last persisted event applied

	stream    stream
	inquiries []inquiry
	card      *event.RunStatusPayload // the terminal status, once the run ended
	paused    *event.RunStatusPayload // paused or suspended, while it lasts
	planDirty int                     // bumps on each write_plan result

	use usage // what the model calls used, for the meters

	// notes are what the run told the operator about its setup (the
	// endpoint writes tool calls as text), shown among the notes (N).
	notes []string

	// The Log screen's lines, and the roles they name in order.
	log         []logLine
	logRoles    map[string]bool
	logRoleList []string

	// topBar caches render.TopBar (O(participants)) for the frame; refresh
	// recomputes it once per batch of events, not per event or per frame.
	topBar        []render.TypeSlot
	topBarVersion int64
}

// refresh recomputes the cached derivations after a batch of events.
func (v *runView) refresh() {
	if v == nil || (v.topBar != nil && v.topBarVersion == v.model.Version) {
		return
	}
	v.topBar, v.topBarVersion = render.TopBar(v.model), v.model.Version
}

// lane is one stack's call tree, built as calls arrive: the stack's root,
// then each participant under the participant that called it. A role
// instance or a human answerer has one node; a tool has a node under each
// caller (its key is the caller's key, a NUL, and the tool's id), counting
// that caller's calls.
type lane struct {
	nodes []flowNode
	byKey map[string]int
}

// flowNode is one node of a lane's call tree.
type flowNode struct {
	key, pid string
	parent   int   // index of the parent node, -1 for the root
	children []int // in order of first call
	calls    int   // calls from the parent into this node
	last     int   // index of the latest of those calls
	// ops are those calls' operation indices, oldest first (the inspector
	// lists a tool node's calls); failed counts the ones that failed.
	ops    []int
	failed int
}

// toolCallRef is an open tool call: its op and its node.
type toolCallRef struct {
	op   int
	lane *lane
	node int
}

func toolCallKey(caller, callID, tool string) string { return caller + "\x00" + callID + "\x00" + tool }

// flowPID is the participant a flow node key stands for.
func flowPID(key string) string {
	if i := strings.LastIndexByte(key, 0); i >= 0 {
		return key[i+1:]
	}
	return key
}

// flowKey is the node key of a call's destination.
func flowKey(m *render.Model, source, dest string) string {
	if p, ok := m.Participant(dest); ok && p.Kind == render.KindTool {
		return source + "\x00" + dest
	}
	return dest
}

func (l *lane) node(key, pid string, parent int) int {
	if i, ok := l.byKey[key]; ok {
		return i
	}
	i := len(l.nodes)
	l.nodes = append(l.nodes, flowNode{key: key, pid: pid, parent: parent, last: -1})
	l.byKey[key] = i
	if parent >= 0 {
		l.nodes[parent].children = append(l.nodes[parent].children, i)
	}
	return i
}

// addCall takes in the call at operation index oi and returns its node.
func (l *lane) addCall(m *render.Model, root string, oi int) int {
	op := m.Operations[oi]
	r := l.node(root, root, -1)
	parent, ok := l.byKey[op.Source]
	if !ok {
		parent = r
	}
	c := l.node(flowKey(m, op.Source, op.Destination), op.Destination, parent)
	l.nodes[c].calls++
	l.nodes[c].last = oi
	if op.Tool != "" {
		l.nodes[c].ops = append(l.nodes[c].ops, oi)
	}
	return c
}

// nodeCall is the latest call a flow node stands for: a tool node's
// latest call from its own caller, another node's latest call.
func (v *runView) nodeCall(key string) (int, bool) {
	if n := v.flowNode(key); n != nil && n.last >= 0 && strings.IndexByte(key, 0) >= 0 {
		return n.last, true
	}
	i, ok := v.lastCall[flowPID(key)]
	return i, ok
}

// flowNode finds the node of a key in the lanes.
func (v *runView) flowNode(key string) *flowNode {
	for _, id := range v.laneList {
		l := v.lanes[id]
		if i, ok := l.byKey[key]; ok {
			return &l.nodes[i]
		}
	}
	return nil
}

// inquiry is one operator interrupt and its answer.
type inquiry struct {
	kind     string // inquiry | plan_modification
	message  string
	answer   string
	answered bool
	dropped  string
	// sent marks an inquiry this console sent whose event has not come
	// yet: the run takes it at its next safe point, and a question that
	// is open holds that point off.
	sent bool
}

// addInquiry adds an inquiry the log reports, taking over the one this
// console sent with the same kind and message.
func (v *runView) addInquiry(q inquiry) {
	for i := range v.inquiries {
		if p := &v.inquiries[i]; p.sent && p.kind == q.kind && p.message == q.message {
			*p = q
			return
		}
	}
	v.inquiries = append(v.inquiries, q)
}

func newRunView(id string) *runView {
	return &runView{
		id: id, model: render.NewModel(),
		lanes: map[string]*lane{}, lastCall: map[string]int{}, seqIndex: map[string]int{}, toolCalls: map[string]toolCallRef{},
	}
}

// apply folds one event into the view.
func (v *runView) apply(e event.Event) {
	switch e.Type {
	case event.LLMDelta:
		var p event.LLMDeltaPayload
		if e.Decode(&p) == nil && p.Content != "" {
			if v.stream.roleID != p.RoleID {
				v.stream = stream{roleID: p.RoleID}
			}
			v.stream.add(p.Content)
		}
		return
	case event.RunStarted:
		var p event.RunStartedPayload
		if e.Decode(&p) == nil {
			v.id, v.task, v.effort, v.continuesFrom, v.startedAt = p.RunID, p.Task, p.Effort, p.ContinuesFrom, e.Timestamp
			v.use.model = p.Model
		}
	case event.EffortSet:
		var p event.EffortSetPayload
		if e.Decode(&p) == nil {
			v.effort = p.Effort
		}
	case event.LLMCallStart:
		var p event.LLMCallStartPayload
		if e.Decode(&p) == nil {
			v.stream = stream{roleID: p.RoleID}
			v.use.active = p.RoleID
		}
	case event.LLMCall:
		// Only the usage: the bodies (a whole conversation at log level
		// full) are not decoded for the meters.
		var p callUsage
		if e.Decode(&p) == nil {
			v.use.addCall(p)
		}
	case event.ContextCompacted:
		var p event.ContextCompactedPayload
		if e.Decode(&p) == nil && p.ContextWindow > 0 {
			v.use.window = p.ContextWindow
		}
	case event.RunStatus:
		var p event.RunStatusPayload
		if e.Decode(&p) == nil {
			switch {
			case store.Terminal(p.Status):
				v.card, v.paused = &p, nil
			case p.Status == store.StatusPaused || p.Status == store.StatusSuspended:
				v.paused = &p
			default:
				v.paused = nil
			}
		}
	case event.Interrupt:
		var p event.InterruptPayload
		if e.Decode(&p) == nil && p.Trigger == "inquiry" {
			v.addInquiry(inquiry{kind: "inquiry", message: p.Message})
		}
	case event.InterruptResolved:
		var p event.InterruptResolvedPayload
		if e.Decode(&p) == nil && p.Trigger == "inquiry" {
			for i := len(v.inquiries) - 1; i >= 0; i-- {
				if v.inquiries[i].kind == "inquiry" && !v.inquiries[i].answered && v.inquiries[i].dropped == "" && !v.inquiries[i].sent {
					v.inquiries[i].answer, v.inquiries[i].answered = p.Summary, true
					break
				}
			}
		}
	case event.InquiryDropped:
		var p event.InquiryDroppedPayload
		if e.Decode(&p) == nil {
			v.addInquiry(inquiry{kind: "inquiry", message: p.Message, dropped: p.Reason})
		}
	case event.PlanModification:
		var p event.PlanModificationPayload
		if e.Decode(&p) == nil {
			v.addInquiry(inquiry{kind: "plan_modification", message: p.Message})
		}
	case event.ToolResult:
		var p event.ToolResultPayload
		if e.Decode(&p) == nil && p.Tool == "write_plan" {
			v.planDirty++
		}
	case event.TextToolCalls:
		var p event.TextToolCallsPayload
		if e.Decode(&p) == nil {
			v.notes = append(v.notes, render.SanitizeLine(p.Message))
		}
	}
	if e.Ephemeral {
		return
	}
	v.lastSeq = e.Seq
	v.model.Apply(e)
	v.index()
	v.addLog(e)
}

// index takes in the operations Apply added.
func (v *runView) index() {
	m := v.model
	for ; v.applied < len(m.Operations); v.applied++ {
		op := m.Operations[v.applied]
		for _, pid := range []string{op.Source, op.Destination} {
			p, ok := m.Participant(pid)
			if !ok {
				continue
			}
			col := p.Role
			if p.Kind == render.KindTool {
				col = "tools"
			}
			if _, ok := v.seqIndex[col]; !ok {
				v.seqIndex[col] = len(v.seqCols)
				v.seqCols = append(v.seqCols, col)
			}
		}
		if op.Kind == render.OpReturn && op.Tool != "" {
			v.countReturn(op)
		}
		if op.Kind != render.OpCall {
			continue
		}
		v.lastCall[op.Destination] = v.applied
		l := v.lanes[op.Stack]
		if l == nil {
			l = &lane{byKey: map[string]int{}}
			v.lanes[op.Stack] = l
			v.laneList = append(v.laneList, op.Stack)
		}
		root := op.Source
		if st, ok := m.StackByID(op.Stack); ok {
			root = st.Root
		}
		node := l.addCall(m, root, v.applied)
		if op.Tool != "" {
			v.toolCalls[toolCallKey(op.Source, op.CallID, op.Tool)] = toolCallRef{op: v.applied, lane: l, node: node}
		}
	}
	// Keep "tools" as the last column.
	if i, ok := v.seqIndex["tools"]; ok && i != len(v.seqCols)-1 {
		v.seqCols = append(append(v.seqCols[:i:i], v.seqCols[i+1:]...), "tools")
		for j, c := range v.seqCols {
			v.seqIndex[c] = j
		}
	}
}

// countReturn counts a failed tool return on its call's node.
func (v *runView) countReturn(ret render.Operation) {
	key := toolCallKey(ret.Destination, ret.CallID, ret.Tool)
	ref, ok := v.toolCalls[key]
	if !ok {
		return
	}
	delete(v.toolCalls, key)
	if render.OutcomeVerdict(ret.Outcome, ret.ErrorKind, ret.OutcomeDetail).Failed() {
		ref.lane.nodes[ref.node].failed++
	}
}

// status is the run's status word.
func (v *runView) status() string {
	if v == nil || v.model.Status == "" {
		return "idle"
	}
	if v.paused != nil {
		return v.paused.Status
	}
	return v.model.Status
}

func (v *runView) live() bool {
	return v != nil && v.id != "" && !store.Terminal(v.model.Status) && v.card == nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
