package render

// The model's bookkeeping, apart from the handlers of each event type
// (model_apply.go): adding participants, operations and stacks with their
// change tracking, and the live frames' call chains that calls, returns
// and abandoned calls move.

import (
	"slices"
	"strconv"
	"time"
)

func (m *Model) touchP(i int) {
	if m.pVer[i] != m.Version {
		m.pVer[i] = m.Version
		m.record(entityParticipant, i)
	}
}

func (m *Model) touchO(i int) {
	if m.oVer[i] != m.Version {
		m.oVer[i] = m.Version
		m.record(entityOperation, i)
	}
}

func (m *Model) touchS(i int) {
	if m.sVer[i] != m.Version {
		m.sVer[i] = m.Version
		m.record(entityStack, i)
	}
}

func (m *Model) addParticipant(id, role string, kind ParticipantKind, roleID string) int {
	i := len(m.Participants)
	m.Participants = append(m.Participants, Participant{ID: id, Role: role, Kind: kind, RoleID: roleID})
	m.partIndex[id] = i
	m.pVer = append(m.pVer, 0)
	m.touchP(i)
	return i
}

func (m *Model) addOp(op Operation, details opDetails) int {
	i := len(m.Operations)
	op.ID = "op-" + strconv.Itoa(i+1)
	op.HasDetails = !details.empty()
	if i == cap(m.Operations) {
		// Double rather than let append grow large slices by 1.25x: the
		// element is big and a long run would copy it many times over.
		m.Operations = slices.Grow(m.Operations, max(i, 64))
		m.details = slices.Grow(m.details, max(i, 64))
		m.oVer = slices.Grow(m.oVer, max(i, 64))
	}
	m.Operations = append(m.Operations, op)
	m.details = append(m.details, details)
	m.oVer = append(m.oVer, 0)
	m.touchO(i)
	return i
}

func (m *Model) appendDetails(oi int, more string) {
	if more == "" {
		return
	}
	body := m.details[oi].markdown()
	if body != "" {
		body += "\n\n"
	}
	m.details[oi] = textDetails(body + more)
	m.Operations[oi].HasDetails = true
	m.touchO(oi)
}

func (m *Model) addStack(s Stack) int {
	i := len(m.Stacks)
	m.Stacks = append(m.Stacks, s)
	m.stackIndex[s.ID] = i
	m.sVer = append(m.sVer, 0)
	m.touchS(i)
	return i
}

func timePtr(t time.Time) *time.Time { return &t }

// settle ends an operation's transit phase.
func (m *Model) settle(oi int, ts time.Time) {
	op := &m.Operations[oi]
	if op.Lifecycle == Settled {
		return
	}
	op.Lifecycle = Settled
	op.SettledAt = timePtr(ts)
	m.touchO(oi)
}

// supersede settles a frame's lingering return leg.
func (m *Model) supersede(f *frame, ts time.Time) {
	if f.lingering >= 0 {
		m.settle(f.lingering, ts)
		f.lingering = -1
	}
}

// ensureMain creates the human and the main stack on first need, so a log
// without run_started still yields a model.
func (m *Model) ensureMain(ts time.Time) {
	if len(m.frames) > 0 || len(m.Stacks) > 0 {
		return
	}
	if _, ok := m.partIndex[humanID]; !ok {
		m.addParticipant(humanID, "human", KindHuman, "")
	}
	si := m.addStack(Stack{ID: mainStackID, Root: humanID, PushedAt: ts})
	m.frames = append(m.frames, frame{stack: si, lingering: -1, lastActivity: -1})
}

func (m *Model) top() *frame {
	if len(m.frames) == 0 {
		return nil
	}
	return &m.frames[len(m.frames)-1]
}

func (m *Model) liveFrame(stackID string) *frame {
	for i := len(m.frames) - 1; i >= 0; i-- {
		if m.Stacks[m.frames[i].stack].ID == stackID {
			return &m.frames[i]
		}
	}
	return nil
}

func (m *Model) root(f *frame) string { return m.Stacks[f.stack].Root }

// openRoleCall returns the open call into a role participant.
func (m *Model) openRoleCall(pid string) (int, bool) {
	oi, ok := m.roleCall[pid]
	if !ok || !m.Operations[oi].Open {
		return 0, false
	}
	return oi, true
}

// resolveRole finds the role participant an event names: by instance id,
// else the innermost open instance of the named role.
func (m *Model) resolveRole(roleID, role string) (string, bool) {
	if roleID != "" {
		if i, ok := m.partIndex[roleID]; ok && m.Participants[i].Kind == KindRole {
			return roleID, true
		}
	}
	for fi := len(m.frames) - 1; fi >= 0; fi-- {
		chain := m.frames[fi].chain
		for k := len(chain) - 1; k >= 0; k-- {
			dst := m.Operations[chain[k]].Destination
			p := m.Participants[m.partIndex[dst]]
			if p.Kind == KindRole && (role == "" || p.Role == role) {
				return dst, true
			}
		}
	}
	return "", false
}

// chainPos returns the position of a call in its frame's chain.
func chainPos(f *frame, oi int) int {
	for k := len(f.chain) - 1; k >= 0; k-- {
		if f.chain[k] == oi {
			return k
		}
	}
	return -1
}

// closeAbandoned closes every call deeper than position pos (pos -1 closes
// the whole chain) without a return: the log says they are over, but not
// how.
// reachCall finds open call oi on its live stack's chain and closes the
// calls above it that were abandoned, returning the frame and the call's
// position in the chain.
func (m *Model) reachCall(oi int, ts time.Time) (*frame, int, bool) {
	f := m.liveFrame(m.Operations[oi].Stack)
	if f == nil {
		return nil, 0, false
	}
	pos := chainPos(f, oi)
	if pos < 0 {
		return nil, 0, false
	}
	m.closeAbandoned(f, pos, ts)
	return f, pos, true
}

func (m *Model) closeAbandoned(f *frame, pos int, ts time.Time) {
	for k := len(f.chain) - 1; k > pos; k-- {
		oi := f.chain[k]
		m.settle(oi, ts)
		op := &m.Operations[oi]
		op.Open = false
		if op.Outcome == "" {
			op.Outcome = OutcomeInterrupted
		}
		m.touchO(oi)
	}
	f.chain = f.chain[:pos+1]
}

// focus makes pid the innermost open participant of its frame and returns
// the frame and the depth of a call pid would make. pid is either a role
// instance with an open call or the root of the top frame.
func (m *Model) focus(pid string, ts time.Time) (*frame, int, bool) {
	if oi, ok := m.openRoleCall(pid); ok {
		f, pos, ok := m.reachCall(oi, ts)
		if !ok {
			return nil, 0, false
		}
		return f, pos + 1, true
	}
	f := m.top()
	if f != nil && m.root(f) == pid {
		m.closeAbandoned(f, -1, ts)
		return f, 0, true
	}
	return nil, 0, false
}

// newCall appends a call from the innermost participant of f.
func (m *Model) newCall(f *frame, op Operation, details opDetails, ts time.Time) int {
	m.supersede(f, ts)
	if n := len(f.chain); n > 0 {
		// The caller acts: its own call's transit is over.
		m.settle(f.chain[n-1], ts)
	}
	op.Kind = OpCall
	op.Stack = m.Stacks[f.stack].ID
	op.StartedAt = ts
	op.Lifecycle = InFlight
	op.Open = true
	op.Depth = len(f.chain) + 1
	oi := m.addOp(op, details)
	f.chain = append(f.chain, oi)
	f.lastActivity = oi
	if pi, ok := m.partIndex[op.Destination]; ok {
		m.Participants[pi].Invocations++
		m.touchP(pi)
	}
	return oi
}

// newReturn closes the innermost call of f with a return operation.
func (m *Model) newReturn(f *frame, outcome, errKind string, details opDetails, ts time.Time) int {
	m.supersede(f, ts)
	ci := f.chain[len(f.chain)-1]
	f.chain = f.chain[:len(f.chain)-1]
	m.settle(ci, ts)
	call := &m.Operations[ci]
	ret := Operation{
		Kind:        OpReturn,
		Stack:       call.Stack,
		Source:      call.Destination,
		Destination: call.Source,
		Depth:       call.Depth,
		StartedAt:   ts,
		Lifecycle:   InFlight,
		Outcome:     outcome,
		ErrorKind:   errKind,
		Role:        call.Role,
		Tool:        call.Tool,
		CallID:      call.CallID,
		QuestionID:  call.QuestionID,
	}
	ri := m.addOp(ret, details)
	call = &m.Operations[ci]
	call.Open = false
	call.ClosedBy = m.Operations[ri].ID
	m.touchO(ci)
	f.lingering = ri
	f.lastActivity = ri
	return ri
}

// popFrame resolves the top frame.
func (m *Model) popFrame(ts time.Time, action string) {
	f := m.top()
	if f == nil || len(m.frames) == 1 {
		return
	}
	m.closeAbandoned(f, -1, ts)
	m.supersede(f, ts)
	si := f.stack
	s := &m.Stacks[si]
	s.Resolved = true
	s.Paused = false
	s.ResolvedAt = timePtr(ts)
	if s.Action == "" {
		s.Action = action
	}
	m.touchS(si)
	m.frames = m.frames[:len(m.frames)-1]
	below := m.top()
	m.Stacks[below.stack].Paused = false
	m.touchS(below.stack)
}

// updateActive recomputes the active stack and operation: O(1).
func (m *Model) updateActive() {
	f := m.top()
	if f == nil {
		m.ActiveStack, m.ActiveOperation = "", ""
		return
	}
	m.ActiveStack = m.Stacks[f.stack].ID
	a := f.lastActivity
	if a >= 0 && m.Operations[a].Kind == OpCall && !m.Operations[a].Open && len(f.chain) > 0 {
		a = f.chain[len(f.chain)-1]
	}
	if a < 0 {
		m.ActiveOperation = ""
		return
	}
	m.ActiveOperation = m.Operations[a].ID
}
