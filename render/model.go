package render

import (
	"slices"
	"time"

	"github.com/guildhall/guildhall/runner/event"
)

// ParticipantKind says what a participant is: the human, an interrupt
// pseudo-participant, a role instance or a tool.
type ParticipantKind string

// Participant kinds.
const (
	KindHuman     ParticipantKind = "human"
	KindInterrupt ParticipantKind = "interrupt"
	KindRole      ParticipantKind = "role"
	KindTool      ParticipantKind = "tool"
)

// OperationKind says what an operation does.
type OperationKind string

// Operation kinds. A call and its return hand activity between participants;
// observe and terminate are instantaneous cross-stack references that never
// change activity.
const (
	OpCall      OperationKind = "call"
	OpReturn    OperationKind = "return"
	OpObserve   OperationKind = "observe"
	OpTerminate OperationKind = "terminate"
)

// Lifecycle is an operation's transit state. A line animates while its
// operation is in flight and its stack is the active one.
type Lifecycle string

// Lifecycles.
const (
	InFlight Lifecycle = "in_flight"
	Settled  Lifecycle = "settled"
)

// Outcomes the model writes besides the role statuses (success, error,
// needs_clarification) it copies from the log.
const (
	// OutcomeInterrupted closes a call that was abandoned: a deeper call
	// still open when an ancestor finished, an interlude cut short, or a
	// tool call lost to a restart.
	OutcomeInterrupted = "interrupted"
	// OutcomeTerminated closes a call removed by a terminate operation.
	OutcomeTerminated = "terminated"
)

// Metrics are the counters of one invocation (on a call operation) or the
// sum over every invocation of a participant.
type Metrics struct {
	// Tokens is the sum of the endpoint-reported total tokens.
	Tokens int `json:"tokens"`
	// CachedPromptTokens is the reported cached subset of the prompt tokens.
	CachedPromptTokens int `json:"cachedPromptTokens"`
	// EvaluatedPromptTokens is the reported part of the prompt the server
	// computed afresh; CacheReported says an endpoint reported the split
	// for at least one of the calls summed.
	EvaluatedPromptTokens int  `json:"evaluatedPromptTokens,omitempty"`
	CacheReported         bool `json:"cacheReported,omitempty"`
	// TokensPerSecond is the generation speed of the latest reply summed
	// here (not a sum).
	TokensPerSecond float64 `json:"tokensPerSecond,omitempty"`
	// ElapsedSeconds is the model time of a role invocation (the sum of its
	// calls' elapsedMs), a tool call's reported run time, or the wait for a
	// human answer.
	ElapsedSeconds float64 `json:"elapsedSeconds"`
}

func (a *Metrics) add(b Metrics) {
	a.Tokens += b.Tokens
	a.CachedPromptTokens += b.CachedPromptTokens
	a.EvaluatedPromptTokens += b.EvaluatedPromptTokens
	a.CacheReported = a.CacheReported || b.CacheReported
	if b.TokensPerSecond > 0 {
		a.TokensPerSecond = b.TokensPerSecond
	}
	a.ElapsedSeconds += b.ElapsedSeconds
}

// Participant is one lifeline: the human, an interrupt instance, a role
// instance, or a tool. Role participants are instance-scoped (their id is the
// runner's instance id, "coder-1-4"); tools have one participant per tool
// name; every ask_human question and every inquiry gets a fresh human
// participant so a call chain never loops back to the root.
type Participant struct {
	ID   string          `json:"id"`
	Role string          `json:"role"` // role or tool name; "human" or "interrupt" for the pseudo-roles
	Kind ParticipantKind `json:"kind"`
	// RoleID is the runner's instance id, for role participants.
	RoleID string `json:"roleId,omitempty"`
	// Invocations counts the calls made into this participant.
	Invocations int `json:"invocations"`
	// Turns counts the model calls a role instance made.
	Turns int `json:"turns,omitempty"`
	// Metrics is the sum over every invocation of this participant.
	Metrics Metrics `json:"metrics"`
	// Model is the model a role instance ran on, as role_start named it
	// ("qwen-7b", or "qwen-7b (fast)" for one of the deployment's named
	// models); "" when the log does not say.
	Model string `json:"model,omitempty"`
}

// Annotation is a machine-only note on a role invocation: context pressure,
// a compaction, a provider failure (its category only, never its body), or
// one of the executor's failure events.
type Annotation struct {
	Type            event.Type `json:"type"`
	At              time.Time  `json:"at"`
	Category        string     `json:"category,omitempty"`
	Tool            string     `json:"tool,omitempty"`
	PromptTokens    int        `json:"promptTokens,omitempty"`
	EffectiveBudget int        `json:"effectiveBudget,omitempty"`
	DroppedMessages int        `json:"droppedMessages,omitempty"`
	// Count is how many calls a tool_calls_ignored note is about.
	Count int `json:"count,omitempty"`
}

// maxAnnotations bounds the notes kept on one invocation; a provider that
// fails for an hour must not grow one operation without bound.
const maxAnnotations = 32

// Operation is one row of the timeline.
type Operation struct {
	ID   string        `json:"id"`
	Kind OperationKind `json:"kind"`
	// Stack is the id of the stack the operation belongs to. Observe and
	// terminate sit on the active stack and point into a paused one.
	Stack       string `json:"stack"`
	Source      string `json:"source"`
	Destination string `json:"destination"`
	// Depth is the call depth in its stack: 1 for a call from the stack's
	// root. A return has the depth of the call it closes.
	Depth     int        `json:"depth"`
	StartedAt time.Time  `json:"startedAt"`
	SettledAt *time.Time `json:"settledAt"`
	// Lifecycle: a call to a role is in flight until the callee starts its
	// first model turn, delegates, or returns; a call to a tool or to the
	// human until its result or answer. A return is in flight until the
	// caller acts again (its next model call or any later call or return on
	// the stack). Observe and terminate are born settled.
	Lifecycle Lifecycle `json:"lifecycle"`
	// Open is true while a call's invocation has not been closed.
	Open bool `json:"open,omitempty"`
	// ClosedBy is the id of the return or terminate that closed a call.
	ClosedBy string `json:"closedBy,omitempty"`
	// Outcome is set on returns and on calls closed without a return. A
	// role's return has the role's status, or interrupted for a role
	// stopped by a plan change or the operator (error kind interrupted); a
	// tool's has success, error (the tool failed: ErrorKind says how) or
	// failed (the tool ran a command that exited non-zero or reported
	// failing checks: OutcomeDetail says how). A call closed without a
	// return has interrupted or terminated. Views show it through
	// OutcomeVerdict.
	Outcome string `json:"outcome,omitempty"`
	// OutcomeDetail is a tool return's outcome in a few words: "exit 1",
	// "2 failed", "6 passed".
	OutcomeDetail string `json:"outcomeDetail,omitempty"`
	// ErrorKind is the machine error kind: the role card's error.kind
	// (context_handoff, loop_detected, …) or a tool result's error kind.
	ErrorKind  string `json:"errorKind,omitempty"`
	Role       string `json:"role,omitempty"` // role name of the role end of a role call/return
	Tool       string `json:"tool,omitempty"` // tool name of a tool call/return
	CallID     string `json:"callId,omitempty"`
	QuestionID string `json:"questionId,omitempty"`
	// Metrics are the invocation's counters, on call operations.
	Metrics     Metrics      `json:"metrics"`
	Annotations []Annotation `json:"annotations,omitempty"`
	// HasDetails says the operation carries a details body, fetched with
	// Model.OperationDetails.
	HasDetails bool `json:"hasDetails,omitempty"`
	// Details is the operation's Markdown body. It is empty in
	// ModelState.Operations and in envelopes (bodies can be large and would
	// otherwise ride every frame); Model.OperationDetails fills it. It is
	// the only agent-authored text in the model and must be rendered
	// through a sanitizing pipeline.
	Details string `json:"details,omitempty"`
}

// Stack is one call stack. The main stack is rooted at the human; every
// interrupt pushes a stack rooted at a fresh interrupt participant (or a
// fresh human asker for an inquiry) that pauses the stack below it until
// the interrupt is resolved.
type Stack struct {
	ID          string `json:"id"`
	Root        string `json:"root"`
	ParentStack string `json:"parentStack,omitempty"`
	// Paused is true while another stack sits on top of this one.
	Paused bool `json:"paused"`
	// Resolved is true once the stack's interrupt is resolved (or was
	// abandoned by a restart).
	Resolved      bool       `json:"resolved,omitempty"`
	Trigger       string     `json:"trigger,omitempty"`
	Handler       string     `json:"handler,omitempty"`
	Target        string     `json:"target,omitempty"`
	Action        string     `json:"action,omitempty"`
	HandlerStatus string     `json:"handlerStatus,omitempty"`
	PushedAt      time.Time  `json:"pushedAt"`
	ResolvedAt    *time.Time `json:"resolvedAt"`
}

// Totals are run-wide counters kept while applying events.
type Totals struct {
	Tokens             int `json:"tokens"`
	CachedPromptTokens int `json:"cachedPromptTokens"`
	// EvaluatedPromptTokens and CacheReported: see Metrics.
	EvaluatedPromptTokens int  `json:"evaluatedPromptTokens,omitempty"`
	CacheReported         bool `json:"cacheReported,omitempty"`
	// LatestTokensPerSecond is the generation speed of the latest reply
	// (0 when unknown).
	LatestTokensPerSecond float64 `json:"latestTokensPerSecond,omitempty"`
	ModelCalls            int     `json:"modelCalls"`
	ToolCalls             int     `json:"toolCalls"`
	ProviderFailures      int     `json:"providerFailures,omitempty"`
	// LatestElapsedSeconds is the elapsed time of the most recent model call
	// or tool result.
	LatestElapsedSeconds float64 `json:"latestElapsedSeconds"`
}

// ModelState is the serialisable part of the model: what a snapshot carries
// and what views read. Operations and Participants are in chronological
// order of first appearance; an operation's index is its sequence-view row.
type ModelState struct {
	// Version is the number of events applied (ephemeral events excluded).
	Version      int64         `json:"version"`
	RunID        string        `json:"runId,omitempty"`
	Status       string        `json:"status"`
	Participants []Participant `json:"participants"`
	Operations   []Operation   `json:"operations"`
	Stacks       []Stack       `json:"stacks"`
	// ActiveStack is the stack that holds the run's activity: the newest
	// unresolved stack.
	ActiveStack string `json:"activeStack,omitempty"`
	// ActiveOperation is the active stack's focus: its latest call or
	// return, or its innermost open call when that latest call was closed by
	// a terminate. Empty for a fresh stack with no operations yet.
	ActiveOperation string `json:"activeOperation,omitempty"`
	Totals          Totals `json:"totals"`
	// Resumes counts run_resumed markers.
	Resumes int `json:"resumes,omitempty"`
	// Skipped counts events whose payload could not be used (undecodable,
	// or naming nothing the model knows). They are data, not failures.
	Skipped int `json:"skipped,omitempty"`
}

// Model is the InteractionModel: the run's participants, operations and
// stacks, built incrementally from the log. Apply is O(1) amortised per
// event and the model is a pure function of the events applied, so a live
// run and its replay from log.jsonl give identical models.
//
// The exported ModelState fields are read-only for callers. A Model is not
// safe for concurrent use: guard Apply and every read with one lock.
type Model struct {
	ModelState

	partIndex  map[string]int
	stackIndex map[string]int
	details    []opDetails // parallel to Operations

	frames    []frame        // live stacks, innermost last
	roleCall  map[string]int // role participant id -> its latest call op
	toolCalls map[string]int // caller id + call id -> open tool call op
	questions map[string]int // ask_human id -> call op
	delegated map[string]string
	runTask   string
	// sawRunStarted is set by run_started: Guildhall's logs open with it, the
	// original system's do not, and then the entry role's start and
	// finish are the run's.
	sawRunStarted bool

	interrupts, askers, answerers, synthetic int

	// Change tracking for the envelope: the version at which each entity
	// last changed, and a journal of (version, entity) changes.
	pVer, oVer, sVer []int64
	journal          []change
	journalCap       int
	horizon          int64
}

// frame is a live stack's working state.
type frame struct {
	stack        int   // index into Stacks
	chain        []int // open call operations, innermost last
	lingering    int   // in-flight return, or -1
	lastActivity int   // latest call or return, or -1
	rootDetails  string
}

// NewModel returns an empty model.
// Reserve makes room for the operations of n more events, so a replay of
// a log whose length is known (store.CountLogLines) does not regrow the
// operation table as it goes: its elements are large, and each regrowth
// copies them all while the collector scans them.
func (m *Model) Reserve(n int) {
	n = min(n, 1<<18) // a hint: a planted log of blank lines must not reserve for them
	ops := n/2 + 64   // an event adds at most one operation; a run adds about one per two
	m.Operations = slices.Grow(m.Operations, ops)
	m.details = slices.Grow(m.details, ops)
	m.oVer = slices.Grow(m.oVer, ops)
	// Each event journals a change or two; the journal is bounded.
	if extra := min(2*n, m.journalCap+1) - len(m.journal); extra > 0 {
		m.journal = slices.Grow(m.journal, extra)
	}
}

func NewModel() *Model {
	return &Model{
		ModelState: ModelState{Status: "", Participants: []Participant{}, Operations: []Operation{}, Stacks: []Stack{}},
		partIndex:  map[string]int{},
		stackIndex: map[string]int{},
		roleCall:   map[string]int{},
		toolCalls:  map[string]int{},
		questions:  map[string]int{},
		delegated:  map[string]string{},
		journalCap: journalCap,
	}
}

// State returns a copy of the model's serialisable state that later Apply
// calls do not modify.
func (m *Model) State() ModelState {
	s := m.ModelState
	// Empty lists stay lists: a client merging deltas into [] must see
	// the same state as one given this snapshot.
	s.Participants = append(make([]Participant, 0, len(m.Participants)), m.Participants...)
	s.Operations = append(make([]Operation, 0, len(m.Operations)), m.Operations...)
	s.Stacks = append(make([]Stack, 0, len(m.Stacks)), m.Stacks...)
	return s
}

// Participant returns the participant with the given id.
func (m *Model) Participant(id string) (Participant, bool) {
	i, ok := m.partIndex[id]
	if !ok {
		return Participant{}, false
	}
	return m.Participants[i], true
}

// Operation returns the operation with the given id, without its details.
func (m *Model) Operation(id string) (Operation, bool) {
	i, ok := m.operationAt(id)
	if !ok {
		return Operation{}, false
	}
	return m.Operations[i], true
}

// operationAt is the index of the operation with the given id.
func (m *Model) operationAt(id string) (int, bool) {
	i, ok := opIndex(id, len(m.Operations))
	return i, ok && m.Operations[i].ID == id
}

// OperationDetails returns the operation with the given id with its Details
// Markdown filled in: the body the inspector shows and GET
// /api/runs/:id/flow?operation=ID serves.
func (m *Model) OperationDetails(id string) (Operation, bool) {
	i, ok := m.operationAt(id)
	if !ok {
		return Operation{}, false
	}
	op := m.Operations[i]
	op.Details = m.details[i].markdown()
	return op, true
}

// StackByID returns the stack with the given id.
func (m *Model) StackByID(id string) (Stack, bool) {
	i, ok := m.stackIndex[id]
	if !ok {
		return Stack{}, false
	}
	return m.Stacks[i], true
}

// OpenCalls returns a live stack's open call chain, outermost first: the
// calls a flow-view row lays out by depth. A resolved stack has none.
func (m *Model) OpenCalls(stackID string) []Operation {
	f := m.liveFrame(stackID)
	if f == nil {
		return nil
	}
	out := make([]Operation, len(f.chain))
	for i, oi := range f.chain {
		out[i] = m.Operations[oi]
	}
	return out
}

// opIndex parses an operation id "op-N" into its index N-1.
func opIndex(id string, n int) (int, bool) {
	if len(id) < 4 || id[:3] != "op-" {
		return 0, false
	}
	v := 0
	for _, c := range id[3:] {
		if c < '0' || c > '9' || v > n {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	if v < 1 || v > n {
		return 0, false
	}
	return v - 1, true
}

// OperationPayload is the raw JSON a tool call's arguments or a tool
// result carried, for a view that shows it as text rather than as the
// Details Markdown; kind is "arguments" or "result". ok is false for every
// other operation, and for a payload too large to have been kept raw (its
// Details hold the capped JSON).
func (m *Model) OperationPayload(id string) (raw, kind string, ok bool) {
	i, found := m.operationAt(id)
	if !found {
		return "", "", false
	}
	switch d := m.details[i]; d.kind {
	case detailsArguments:
		return d.text, "arguments", true
	case detailsResult:
		return d.text, "result", true
	}
	return "", "", false
}
