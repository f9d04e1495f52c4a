package render

import (
	jsonv2 "github.com/go-json-experiment/json"
	"strconv"
	"strings"
	"time"

	"github.com/guildhall/guildhall/runner/event"
)

// Participant ids the model invents. Role participants use the runner's
// instance id ("coder-1-4"), which never contains a colon.
const (
	humanID        = "human"
	mainStackID    = "main"
	toolIDPrefix   = "tool:"
	askerPrefix    = "human:asker:"
	answererPrefix = "human:answerer:"
	interruptPfx   = "interrupt:"
)

// controlTools are the tools whose calls the model draws through other
// events: agent is the role_start/role_finished pair, ask_human the
// ask_human/human_answer pair, and finish the role_finished return.
func controlTool(name string) bool {
	return name == "agent" || name == "ask_human" || name == "finish"
}

// terminalStatus reports whether a run status ends the run.
func terminalStatus(s string) bool {
	switch s {
	case "success", "error", "needs_clarification", "interrupted":
		return true
	}
	return false
}

// llmCallFields is the part of an llm_call payload the model reads; the
// sent and received bodies are never decoded into the model.
type llmCallFields struct {
	Role      string      `json:"role"`
	RoleID    string      `json:"roleId"`
	Usage     event.Usage `json:"usage"`
	ElapsedMs int64       `json:"elapsedMs"`
}

// providerFailureFields is the part of a provider_failure the model reads:
// never the body.
type providerFailureFields struct {
	RoleID   string `json:"roleId"`
	Category string `json:"category"`
}

// Apply folds one event into the model. Unknown event types are ignored;
// an event whose payload cannot be used is counted in Skipped. Ephemeral
// events (streamed deltas) are never in the log, so they are not applied:
// a live model and a replayed one stay identical.
func (m *Model) Apply(e event.Event) {
	if e.Ephemeral || e.Type == event.LLMDelta {
		return
	}
	m.Version++
	ts := e.Timestamp.UTC()
	ok := true
	// One case per type, alike in shape: each decodes its own payload type
	// (the only part a helper could share is decode itself).
	switch e.Type {
	case event.RunStarted:
		var p event.RunStartedPayload
		if ok = decode(e, &p); ok {
			m.runStarted(p, ts)
		}
	case event.RunStatus:
		var p event.RunStatusPayload
		if ok = decode(e, &p) && p.Status != ""; ok {
			m.runStatus(p, ts)
		}
	case event.RunResumed:
		var p event.RunResumedPayload
		if ok = decode(e, &p); ok {
			m.runResumed(ts)
		}
	case event.AgentCall:
		var p event.AgentCallPayload
		if ok = decode(e, &p); ok && p.Task != "" {
			key := p.ParentInstance()
			if key == "" {
				key = p.Parent
			}
			m.delegated[key] = p.Task
		}
	case event.RoleStart:
		var p event.RoleStartPayload
		if ok = decode(e, &p) && p.Role != ""; ok {
			m.roleStart(p, ts)
			if !m.sawRunStarted && m.Status == "" {
				m.Status = "running"
			}
		}
	case event.RoleFinished:
		var p event.RoleFinishedPayload
		if ok = decode(e, &p) && p.Role != ""; ok {
			ok = m.roleFinished(p, ts)
		}
	case event.LLMCallStart:
		var p event.LLMCallStartPayload
		if ok = decode(e, &p); ok {
			if pid, found := m.resolveRole(p.RoleID, p.Role); found {
				if oi, open := m.openRoleCall(pid); open {
					m.settle(oi, ts)
				}
			}
		}
	case event.LLMCall:
		var p llmCallFields
		if ok = decode(e, &p); ok {
			ok = m.llmCall(p, ts)
		}
	case event.ToolCall:
		var p event.ToolCallPayload
		if ok = decode(e, &p) && p.Tool != ""; ok && !controlTool(p.Tool) {
			ok = m.toolCall(p, ts)
		}
	case event.ToolResult:
		var p event.ToolResultPayload
		if ok = decode(e, &p) && p.Tool != ""; ok && !controlTool(p.Tool) {
			ok = m.toolResult(p, ts)
		}
	case event.AskHuman:
		var p event.AskHumanPayload
		if ok = decode(e, &p) && p.ID != ""; ok {
			ok = m.askHuman(p, ts)
		}
	case event.HumanAnswer:
		var p event.HumanAnswerPayload
		if ok = decode(e, &p) && p.ID != ""; ok {
			ok = m.humanAnswer(p, ts)
		}
	case event.Interrupt:
		var p event.InterruptPayload
		if ok = decode(e, &p); ok {
			m.interrupt(p, ts)
		}
	case event.InterruptResolved:
		var p event.InterruptResolvedPayload
		if ok = decode(e, &p); ok {
			ok = m.interruptResolved(p, ts)
		}
	case event.Observe:
		var p event.ObservePayload
		if ok = decode(e, &p); ok {
			ok = m.crossStack(OpObserve, p.RoleID, p.Role, p.Details, ts)
		}
	case event.Terminate:
		var p event.TerminatePayload
		if ok = decode(e, &p); ok {
			ok = m.crossStack(OpTerminate, "", p.Role, p.Details, ts)
		}
	case event.ProviderFailure:
		var p providerFailureFields
		if ok = decode(e, &p); ok {
			m.Totals.ProviderFailures++
			m.annotate(p.RoleID, "", Annotation{Type: e.Type, At: ts, Category: p.Category})
		}
	case event.ContextPressure:
		var p event.ContextPressurePayload
		if ok = decode(e, &p); ok {
			m.annotate(p.RoleID, p.Role, Annotation{Type: e.Type, At: ts, PromptTokens: p.PromptTokens, EffectiveBudget: p.EffectiveBudget})
		}
	case event.ContextCompacted:
		var p event.ContextCompactedPayload
		if ok = decode(e, &p); ok {
			m.annotate(p.RoleID, p.Role, Annotation{Type: e.Type, At: ts, PromptTokens: p.EstimatedPromptTokens, EffectiveBudget: p.ContextWindow, DroppedMessages: p.DroppedMessages})
		}
	case event.LLMUnavailable, event.ContextBudgetExceeded, event.ImplicitFinish, event.UnknownTool, event.InvalidToolCall:
		var p event.FailurePayload
		if ok = decode(e, &p); ok {
			m.annotate(p.RoleID, p.Role, Annotation{Type: e.Type, At: ts, Tool: p.Tool})
		}
	case event.TextToolCalls:
		var p event.TextToolCallsPayload
		if ok = decode(e, &p); ok {
			m.annotate(p.RoleID, p.Role, Annotation{Type: e.Type, At: ts, Category: p.Format})
		}
	case event.Repetition:
		var p event.RepetitionPayload
		if ok = decode(e, &p); ok {
			m.annotate(p.RoleID, p.Role, Annotation{Type: e.Type, At: ts, Tool: p.Tool, Count: p.Count, Category: p.Action})
		}
	case event.ToolCallsIgnored:
		var p event.ToolCallsIgnoredPayload
		if ok = decode(e, &p); ok {
			m.annotate(p.RoleID, p.Role, Annotation{Type: e.Type, At: ts, Tool: p.After, Count: p.Count})
		}
	case event.DepthExceeded:
		var p event.DepthExceededPayload
		if ok = decode(e, &p); ok {
			m.annotate("", p.Parent, Annotation{Type: e.Type, At: ts})
		}
	case event.RoleNotFound:
		var p event.RoleNotFoundPayload
		if ok = decode(e, &p); ok {
			m.annotate("", p.Parent, Annotation{Type: e.Type, At: ts})
		}
	default:
		// Unknown or display-irrelevant types (effort_set, operator_notice,
		// inquiry_dropped, plan_modification, …) leave the model as is.
	}
	if !ok {
		m.Skipped++
	}
	m.updateActive()
}

func decode(e event.Event, v any) bool {
	if len(e.Payload) == 0 {
		return false
	}
	return jsonv2.Unmarshal(e.Payload, v) == nil
}

// ---- event handlers ----

func (m *Model) runStarted(p event.RunStartedPayload, ts time.Time) {
	m.ensureMain(ts)
	m.sawRunStarted = true
	m.RunID = p.RunID
	m.Status = "running"
	m.runTask = p.Task
}

func (m *Model) runStatus(p event.RunStatusPayload, ts time.Time) {
	m.ensureMain(ts)
	m.Status = p.Status
	if !terminalStatus(p.Status) {
		return
	}
	// A finished run has nothing in flight.
	for fi := range m.frames {
		f := &m.frames[fi]
		m.supersede(f, ts)
		for _, oi := range f.chain {
			m.settle(oi, ts)
		}
	}
}

func (m *Model) runResumed(ts time.Time) {
	m.ensureMain(ts)
	m.Resumes++
	// Interludes are never checkpointed: a restart abandons them.
	for len(m.frames) > 1 {
		m.popFrame(ts, "abandoned")
	}
	// A tool call or question in flight at the crash is redone by the
	// resumed turn; its open call is over. Resumed roles keep their calls.
	f := m.top()
	for k, oi := range f.chain {
		if m.Operations[oi].Role == "" {
			m.closeAbandoned(f, k-1, ts)
			break
		}
	}
}

func (m *Model) roleStart(p event.RoleStartPayload, ts time.Time) {
	m.ensureMain(ts)
	pid := p.RoleID
	if pid == "" {
		m.synthetic++
		pid = "role:" + p.Role + ":" + strconv.Itoa(m.synthetic)
	}
	if pi, ok := m.partIndex[pid]; ok {
		if m.Participants[pi].Kind != KindRole {
			m.Skipped++
			return
		}
		if _, open := m.openRoleCall(pid); open {
			return // a repeated start of a live instance continues it
		}
	} else {
		i := m.addParticipant(pid, p.Role, KindRole, p.RoleID)
		m.Participants[i].Model = ModelLabel(p.Model, p.ModelRef)
	}
	f := m.top()
	src := m.root(f)
	pos := -1
	// The caller is the named parent when it is open on this stack, else the
	// innermost open role; a fresh interrupt stack's first call comes from
	// its root.
	parent := p.ParentInstance()
	for k := len(f.chain) - 1; k >= 0 && parent != ""; k-- {
		if m.Operations[f.chain[k]].Destination == parent {
			pos = k
			break
		}
	}
	for k := len(f.chain) - 1; k >= 0 && pos < 0; k-- {
		if m.Operations[f.chain[k]].Role != "" {
			pos = k
		}
	}
	if pos >= 0 {
		src = m.Operations[f.chain[pos]].Destination
	}
	m.closeAbandoned(f, pos, ts)
	task := p.Task
	if t, ok := m.delegated[src]; ok {
		if task == "" {
			task = t
		}
		delete(m.delegated, src)
	} else if sp, ok := m.Participant(src); ok {
		if t, ok := m.delegated[sp.Role]; ok {
			if task == "" {
				task = t
			}
			delete(m.delegated, sp.Role)
		}
	}
	if task == "" && src == humanID {
		task = m.runTask
	}
	details := taskDetails(task)
	if f.rootDetails != "" && pos < 0 {
		details = joinBlocks(f.rootDetails, details)
		f.rootDetails = ""
	}
	oi := m.newCall(f, Operation{Source: src, Destination: pid, Role: p.Role}, textDetails(details), ts)
	m.roleCall[pid] = oi
}

func (m *Model) roleFinished(p event.RoleFinishedPayload, ts time.Time) bool {
	pid, ok := m.resolveRole(p.RoleID, p.Role)
	if !ok {
		return false
	}
	oi, open := m.openRoleCall(pid)
	if !open {
		return false
	}
	stackID := m.Operations[oi].Stack
	// A role on a paused stack finishing means the interludes above it are
	// over even if the log did not say so.
	for len(m.frames) > 1 && m.Stacks[m.top().stack].ID != stackID && len(m.top().chain) == 0 {
		m.popFrame(ts, "implicit")
	}
	f, _, ok := m.reachCall(oi, ts)
	if !ok {
		return false
	}
	status := p.Status
	if status == "" {
		status = "success"
	}
	errKind := ""
	if p.Error != nil {
		errKind = p.Error.Kind
	}
	m.newReturn(f, roleOutcome(status, errKind), errKind, textDetails(finishDetails(p)), ts)
	if !m.sawRunStarted && p.Depth == 0 && stackID == m.Stacks[0].ID {
		m.runStatus(event.RunStatusPayload{Status: runStatusOf(status, errKind)}, ts)
	}
	return true
}

// runStatusOf is the run status an entry role's card gives, as the
// original system records it (a log of its has no run_status).
func runStatusOf(status, errKind string) string {
	switch {
	case errKind == "interrupted":
		return "interrupted"
	case status == "success", status == "needs_clarification":
		return status
	}
	return "error"
}

func (m *Model) llmCall(p llmCallFields, ts time.Time) bool {
	pid, ok := m.resolveRole(p.RoleID, p.Role)
	if !ok {
		return false
	}
	total := p.Usage.TotalTokens
	if total == 0 {
		total = p.Usage.PromptTokens + p.Usage.CompletionTokens
	}
	d := Metrics{Tokens: total, CachedPromptTokens: p.Usage.CachedPromptTokens, ElapsedSeconds: float64(p.ElapsedMs) / 1000,
		EvaluatedPromptTokens: p.Usage.EvaluatedPromptTokens, CacheReported: p.Usage.PromptCacheReported, TokensPerSecond: p.Usage.TokensPerSecond}
	m.Totals.Tokens += d.Tokens
	m.Totals.CachedPromptTokens += d.CachedPromptTokens
	m.Totals.EvaluatedPromptTokens += d.EvaluatedPromptTokens
	m.Totals.CacheReported = m.Totals.CacheReported || d.CacheReported
	m.Totals.LatestTokensPerSecond = d.TokensPerSecond
	m.Totals.ModelCalls++
	m.Totals.LatestElapsedSeconds = d.ElapsedSeconds
	pi := m.partIndex[pid]
	m.Participants[pi].Turns++
	m.Participants[pi].Metrics.add(d)
	m.touchP(pi)
	oi, open := m.openRoleCall(pid)
	if !open {
		return true
	}
	m.settle(oi, ts)
	m.Operations[oi].Metrics.add(d)
	m.touchO(oi)
	// The caller acting again settles a return leg addressed to it.
	if f := m.liveFrame(m.Operations[oi].Stack); f != nil && f.lingering >= 0 && m.Operations[f.lingering].Destination == pid {
		m.supersede(f, ts)
	}
	return true
}

// caller resolves the participant a tool call or question comes from.
func (m *Model) caller(roleID, role string) (string, bool) {
	if roleID != "" || role != "" {
		return m.resolveRole(roleID, role)
	}
	return m.resolveRole("", "")
}

func (m *Model) toolCall(p event.ToolCallPayload, ts time.Time) bool {
	src, ok := m.caller(p.RoleID, p.Role)
	if !ok {
		return false
	}
	f, _, ok := m.focus(src, ts)
	if !ok {
		return false
	}
	tid := toolIDPrefix + p.Tool
	if _, exists := m.partIndex[tid]; !exists {
		m.addParticipant(tid, p.Tool, KindTool, "")
	}
	oi := m.newCall(f, Operation{Source: src, Destination: tid, Tool: p.Tool, CallID: p.CallID}, argumentsDetails(p.Arguments), ts)
	m.toolCalls[src+"\x00"+p.CallID+"\x00"+p.Tool] = oi
	m.Totals.ToolCalls++
	return true
}

func (m *Model) toolResult(p event.ToolResultPayload, ts time.Time) bool {
	src, ok := m.caller(p.RoleID, p.Role)
	if !ok {
		return false
	}
	key := src + "\x00" + p.CallID + "\x00" + p.Tool
	oi, ok := m.toolCalls[key]
	if !ok || !m.Operations[oi].Open {
		return false
	}
	delete(m.toolCalls, key)
	f, _, ok := m.reachCall(oi, ts)
	if !ok {
		return false
	}
	d := Metrics{ElapsedSeconds: float64(p.ElapsedMs) / 1000}
	m.Operations[oi].Metrics.add(d)
	if pi, ok := m.partIndex[m.Operations[oi].Destination]; ok {
		m.Participants[pi].Metrics.add(d)
		m.touchP(pi)
	}
	m.Totals.LatestElapsedSeconds = d.ElapsedSeconds
	outcome, errKind, detail := toolOutcome(p)
	ri := m.newReturn(f, outcome, errKind, toolResultDetails(p), ts)
	m.Operations[ri].OutcomeDetail = detail
	return true
}

func (m *Model) askHuman(p event.AskHumanPayload, ts time.Time) bool {
	if oi, dup := m.questions[p.ID]; dup && m.Operations[oi].Open {
		return true // the same question again
	}
	src, ok := m.caller(p.RoleID, p.Role)
	if !ok {
		return false
	}
	f, _, ok := m.focus(src, ts)
	if !ok {
		return false
	}
	m.answerers++
	aid := answererPrefix + strconv.Itoa(m.answerers)
	m.addParticipant(aid, "human", KindHuman, "")
	oi := m.newCall(f, Operation{Source: src, Destination: aid, QuestionID: p.ID}, textDetails(questionDetails(p)), ts)
	m.questions[p.ID] = oi
	return true
}

func (m *Model) humanAnswer(p event.HumanAnswerPayload, ts time.Time) bool {
	oi, ok := m.questions[p.ID]
	if !ok || !m.Operations[oi].Open {
		return false // unknown question, or a later answer: the first wins
	}
	f, _, ok := m.reachCall(oi, ts)
	if !ok {
		return false
	}
	d := Metrics{ElapsedSeconds: ts.Sub(m.Operations[oi].StartedAt).Seconds()}
	m.Operations[oi].Metrics.add(d)
	m.newReturn(f, "success", "", textDetails(answerDetails(p)), ts)
	return true
}

func (m *Model) interrupt(p event.InterruptPayload, ts time.Time) {
	m.ensureMain(ts)
	below := m.top()
	m.interrupts++
	n := strconv.Itoa(m.interrupts)
	var rootID, rootDetails string
	if p.Trigger == "inquiry" {
		m.askers++
		rootID = askerPrefix + strconv.Itoa(m.askers)
		m.addParticipant(rootID, "human", KindHuman, "")
		rootDetails = inquiryDetails(p.Message)
	} else {
		rootID = interruptPfx + n
		m.addParticipant(rootID, "interrupt", KindInterrupt, "")
		rootDetails = interruptDetails(p.Message)
	}
	pi := m.partIndex[rootID]
	m.Participants[pi].Invocations++
	parent := m.Stacks[below.stack].ID
	m.Stacks[below.stack].Paused = true
	m.touchS(below.stack)
	si := m.addStack(Stack{
		ID: "interrupt-" + n, Root: rootID, ParentStack: parent,
		Trigger: p.Trigger, Handler: p.Handler, Target: p.Target, PushedAt: ts,
	})
	m.frames = append(m.frames, frame{stack: si, lingering: -1, lastActivity: -1, rootDetails: rootDetails})
}

func (m *Model) interruptResolved(p event.InterruptResolvedPayload, ts time.Time) bool {
	if len(m.frames) < 2 {
		return false
	}
	f := m.top()
	s := &m.Stacks[f.stack]
	s.Action = p.Action
	s.HandlerStatus = p.HandlerStatus
	if s.Trigger == "" {
		s.Trigger = p.Trigger
	}
	if ri := f.lastActivity; ri >= 0 && m.Operations[ri].Kind == OpReturn {
		m.appendDetails(ri, resolutionDetails(p, m.details[ri].markdown()))
	}
	m.popFrame(ts, p.Action)
	return true
}

// crossStack draws an observe or terminate from the active stack's focus
// into the matching open participant of a paused stack.
func (m *Model) crossStack(kind OperationKind, roleID, role, details string, ts time.Time) bool {
	if len(m.frames) < 2 || (roleID == "" && role == "") {
		return false
	}
	f := m.top()
	src := m.root(f)
	if n := len(f.chain); n > 0 {
		src = m.Operations[f.chain[n-1]].Destination
	}
	for fi := len(m.frames) - 2; fi >= 0; fi-- {
		pf := &m.frames[fi]
		for k := len(pf.chain) - 1; k >= 0; k-- {
			ci := pf.chain[k]
			dst := m.Operations[ci].Destination
			p := m.Participants[m.partIndex[dst]]
			if p.Kind != KindRole || (roleID != "" && dst != roleID) || (roleID == "" && p.Role != role) {
				continue
			}
			oi := m.addOp(Operation{
				Kind: kind, Stack: m.Stacks[f.stack].ID, Source: src, Destination: dst,
				StartedAt: ts, SettledAt: timePtr(ts), Lifecycle: Settled, Role: p.Role,
			}, textDetails(plainDetails(details)))
			if kind == OpTerminate {
				m.closeAbandoned(pf, k, ts)
				m.settle(ci, ts)
				c := &m.Operations[ci]
				c.Open = false
				c.Outcome = OutcomeTerminated
				c.ClosedBy = m.Operations[oi].ID
				m.touchO(ci)
				pf.chain = pf.chain[:k]
			}
			return true
		}
	}
	return false
}

// annotate notes a machine fact on a role's current invocation.
func (m *Model) annotate(roleID, role string, a Annotation) {
	if roleID == "" && role == "" {
		return
	}
	pid, ok := m.resolveRole(roleID, role)
	if !ok {
		return
	}
	oi, ok := m.roleCall[pid]
	if !ok {
		return
	}
	op := &m.Operations[oi]
	if len(op.Annotations) >= maxAnnotations {
		return
	}
	op.Annotations = append(op.Annotations, a)
	m.touchO(oi)
}

func joinBlocks(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return b.String()
}
