package render

import (
	"slices"
	"sort"
)

// The entity-diff envelope carries the model to a client that already holds
// an older version of it. GET /api/runs/:id/flow?since=V answers with one of
// two JSON shapes:
//
// A snapshot, when the client has nothing (since=0), is ahead of the server
// (a restarted server), is older than the retained change journal, or would
// need more than maxDelta changed entities:
//
//	{"kind": "snapshot",
//	 "version": 42,
//	 "model": {"version": 42, "runId": "run-…", "status": "running",
//	           "participants": [Participant…], "operations": [Operation…],
//	           "stacks": [Stack…], "activeStack": "main",
//	           "activeOperation": "op-17", "totals": {…},
//	           "resumes": 0, "skipped": 0}}
//
// A delta otherwise:
//
//	{"kind": "delta",
//	 "from": 40, "version": 42,
//	 "participants": [Participant…],   // changed or new since "from"
//	 "operations": [Operation…],       // changed or new, in timeline order
//	 "stacks": [Stack…],               // changed or new
//	 "runId": "run-…", "status": "running",
//	 "activeStack": "main", "activeOperation": "op-17",
//	 "totals": {…}, "resumes": 0, "skipped": 0}
//
// The client merge is an upsert by id: replace an entity whose id it holds,
// append one it does not. Entities are whole (never partial), lists are in
// model order, so appending new operations keeps the timeline ordered. The
// scalar fields replace the client's. An empty list key may be omitted.
// Neither shape carries operation details: the inspector fetches one body
// with ?operation=ID (Model.OperationDetails).

// Envelope is one answer of the flow endpoint. See the comment above for
// its JSON.
type Envelope struct {
	Kind    string      `json:"kind"` // "snapshot" or "delta"
	From    int64       `json:"from,omitempty"`
	Version int64       `json:"version"`
	Model   *ModelState `json:"model,omitempty"`

	Participants []Participant `json:"participants,omitempty"`
	Operations   []Operation   `json:"operations,omitempty"`
	Stacks       []Stack       `json:"stacks,omitempty"`

	// ModelState's scalars again, omitted when empty and Totals a pointer:
	// a snapshot carries them in Model, so there they are absent.
	RunID           string  `json:"runId,omitempty"`
	Status          string  `json:"status,omitempty"`
	ActiveStack     string  `json:"activeStack,omitempty"`
	ActiveOperation string  `json:"activeOperation,omitempty"`
	Totals          *Totals `json:"totals,omitempty"`
	Resumes         int     `json:"resumes,omitempty"`
	Skipped         int     `json:"skipped,omitempty"`
}

// Envelope kinds.
const (
	EnvelopeSnapshot = "snapshot"
	EnvelopeDelta    = "delta"
)

type entityKind uint8

const (
	entityParticipant entityKind = iota
	entityOperation
	entityStack
)

// change is one journal entry: entity idx of kind changed at version v.
// An entity is journaled at most once per version.
type change struct {
	v    int64
	idx  int32
	kind entityKind
}

// journalCap bounds the change journal. Past it the oldest half is dropped
// (amortised O(1)); clients older than the horizon get a snapshot.
const journalCap = 1 << 17

func (m *Model) record(k entityKind, i int) {
	if len(m.journal) == cap(m.journal) {
		m.journal = slices.Grow(m.journal, max(len(m.journal), 256))
	}
	m.journal = append(m.journal, change{v: m.Version, idx: int32(i), kind: k})
	if len(m.journal) <= m.journalCap {
		return
	}
	// Drop the oldest half, cutting on a version boundary so every retained
	// version is complete.
	k0 := len(m.journal) / 2
	for k0 < len(m.journal) && m.journal[k0].v == m.journal[k0-1].v {
		k0++
	}
	m.horizon = m.journal[k0-1].v
	n := copy(m.journal, m.journal[k0:])
	m.journal = m.journal[:n]
}

// Since returns what a client holding version must apply to reach the
// current version: a delta of the entities changed after it, or a full
// snapshot (see the envelope comment). maxDelta <= 0 means no bound on the
// delta's size. The cost of a delta follows the number of changes since
// version, never the length of the run. The envelope shares no mutable
// state with the model, so it may be encoded after the lock is released.
func (m *Model) Since(version int64, maxDelta int) Envelope {
	if version <= 0 || version > m.Version || version < m.horizon {
		return m.snapshot()
	}
	j := m.journal
	start := sort.Search(len(j), func(i int) bool { return j[i].v > version })
	var ps, ops, ss []int
	for _, c := range j[start:] {
		switch c.kind {
		case entityParticipant:
			ps = append(ps, int(c.idx))
		case entityOperation:
			ops = append(ops, int(c.idx))
		case entityStack:
			ss = append(ss, int(c.idx))
		}
	}
	ps, ops, ss = uniqueSorted(ps), uniqueSorted(ops), uniqueSorted(ss)
	if maxDelta > 0 && len(ps)+len(ops)+len(ss) > maxDelta {
		return m.snapshot()
	}
	env := m.scalars(EnvelopeDelta)
	env.From = version
	for _, i := range ps {
		env.Participants = append(env.Participants, m.Participants[i])
	}
	for _, i := range ops {
		env.Operations = append(env.Operations, m.Operations[i])
	}
	for _, i := range ss {
		env.Stacks = append(env.Stacks, m.Stacks[i])
	}
	return env
}

func (m *Model) snapshot() Envelope {
	s := m.State()
	return Envelope{Kind: EnvelopeSnapshot, Version: m.Version, Model: &s}
}

func (m *Model) scalars(kind string) Envelope {
	t := m.Totals
	return Envelope{
		Kind: kind, Version: m.Version,
		RunID: m.RunID, Status: m.Status,
		ActiveStack: m.ActiveStack, ActiveOperation: m.ActiveOperation,
		Totals: &t, Resumes: m.Resumes, Skipped: m.Skipped,
	}
}

func uniqueSorted(xs []int) []int {
	if len(xs) < 2 {
		return xs
	}
	sort.Ints(xs)
	out := xs[:1]
	for _, x := range xs[1:] {
		if x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	return out
}

// Merge applies an envelope to a state the way a client does (upsert by id,
// scalars replaced) and returns the result. It is the reference for the
// browser's merge and what the tests check deltas against.
func Merge(s ModelState, env Envelope) ModelState {
	if env.Kind == EnvelopeSnapshot && env.Model != nil {
		return *env.Model
	}
	out := s
	out.Participants = upsert(s.Participants, env.Participants, func(p Participant) string { return p.ID })
	out.Operations = upsert(s.Operations, env.Operations, func(o Operation) string { return o.ID })
	out.Stacks = upsert(s.Stacks, env.Stacks, func(st Stack) string { return st.ID })
	out.Version = env.Version
	out.RunID = env.RunID
	out.Status = env.Status
	out.ActiveStack = env.ActiveStack
	out.ActiveOperation = env.ActiveOperation
	if env.Totals != nil {
		out.Totals = *env.Totals
	}
	out.Resumes = env.Resumes
	out.Skipped = env.Skipped
	return out
}

func upsert[T any](base, changed []T, id func(T) string) []T {
	out := append([]T(nil), base...)
	if out == nil {
		out = []T{}
	}
	at := make(map[string]int, len(out))
	for i, v := range out {
		at[id(v)] = i
	}
	for _, v := range changed {
		if i, ok := at[id(v)]; ok {
			out[i] = v
			continue
		}
		at[id(v)] = len(out)
		out = append(out, v)
	}
	return out
}
