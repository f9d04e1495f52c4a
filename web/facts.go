package web

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/guildhall/guildhall/runner/event"
)

// Bounds on what the run view carries.
const (
	recentEvents   = 50
	maxPayloadRaw  = 2000  // a log payload larger than this is previewed
	maxProseField  = 16000 // question text, context, answers, summaries
	maxFactsListed = 200   // questions, interrupts, plan modifications
)

// LogEntry is one log event as the API serves it: its line number, time,
// type and payload, with secrets-adjacent fields removed (model names,
// provider bodies) and large payloads replaced by a bounded preview.
type LogEntry struct {
	Seq       int64           `json:"seq"`
	Timestamp time.Time       `json:"timestamp"`
	Type      event.Type      `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// QuestionRecord is one ask_human question and its answer, if any.
type QuestionRecord struct {
	ID            string         `json:"id"`
	Role          string         `json:"role,omitempty"`
	RoleID        string         `json:"roleId,omitempty"`
	Question      string         `json:"question"`
	Context       string         `json:"context,omitempty"`
	AssistantText string         `json:"assistantText,omitempty"`
	Options       []event.Option `json:"options,omitempty"`
	AskedAt       time.Time      `json:"askedAt"`
	Answered      bool           `json:"answered"`
	Answer        string         `json:"answer,omitempty"`
	AnsweredAt    *time.Time     `json:"answeredAt,omitempty"`
	Source        string         `json:"source,omitempty"`
}

// InterruptRecord is one interrupt paired with its resolution, or an
// inquiry that was dropped for want of a handler.
type InterruptRecord struct {
	Trigger string    `json:"trigger"`
	Handler string    `json:"handler,omitempty"`
	Target  string    `json:"target,omitempty"`
	Message string    `json:"message,omitempty"` // the operator's inquiry text
	At      time.Time `json:"at"`
	// Resolved, Action, HandlerStatus, Answer and ResolvedAt come from
	// interrupt_resolved; Answer is the handler's summary (agent prose).
	Resolved      bool       `json:"resolved"`
	Action        string     `json:"action,omitempty"`
	HandlerStatus string     `json:"handlerStatus,omitempty"`
	Answer        string     `json:"answer,omitempty"`
	ResolvedAt    *time.Time `json:"resolvedAt,omitempty"`
	Dropped       string     `json:"dropped,omitempty"` // why an inquiry was dropped
}

// PlanModRecord is one operator plan modification as routed.
type PlanModRecord struct {
	Message    string    `json:"message"`
	Target     string    `json:"target"`
	TargetRole string    `json:"targetRole"`
	Aborted    []string  `json:"aborted"`
	At         time.Time `json:"at"`
}

// facts accumulates the run view's lists as events are applied.
type facts struct {
	recent     []LogEntry // ring of the last recentEvents
	next       int
	questions  []QuestionRecord
	qIndex     map[string]int
	interrupts []InterruptRecord
	open       []int // indexes of unresolved interrupts, innermost last
	planMods   []PlanModRecord
	statuses   []StatusMark
	// noAction is the final run_status's mark that the model answered
	// without doing anything; notes what the run told the operator about
	// its setup (the endpoint writes tool calls as text).
	noAction bool
	notes    []string
	meters   meterFacts
}

// meterFacts is what the model meters read, as the terminal's do
// (tui/meters.go): the model the run names, the role instance that called
// it last, each instance's conversation after its latest call, and the
// window a compaction reported.
type meterFacts struct {
	model   string
	active  string
	context map[string]int
	window  int
}

// callUsage is the part of an llm_call payload the meters read.
type callUsage struct {
	RoleID string      `json:"roleId"`
	Usage  event.Usage `json:"usage"`
	Model  string      `json:"model"`
}

func (m *meterFacts) apply(e event.Event) {
	switch e.Type {
	case event.RunStarted:
		var p event.RunStartedPayload
		if e.Decode(&p) == nil && p.Model != "" {
			m.model = p.Model
		}
	case event.LLMCallStart:
		var p event.LLMCallStartPayload
		if e.Decode(&p) == nil && p.RoleID != "" {
			m.active = p.RoleID
		}
	case event.LLMCall:
		var p callUsage
		if e.Decode(&p) != nil {
			return
		}
		if p.Model != "" {
			m.model = p.Model
		}
		if p.RoleID != "" {
			if m.context == nil {
				m.context = map[string]int{}
			}
			// The next request carries the whole conversation: this
			// prompt and the reply to it.
			m.active, m.context[p.RoleID] = p.RoleID, p.Usage.PromptTokens+p.Usage.CompletionTokens
		}
	case event.ContextCompacted:
		var p event.ContextCompactedPayload
		if e.Decode(&p) == nil && p.ContextWindow > 0 {
			m.window = p.ContextWindow
		}
	}
}

// StatusMark is one run-level status change (run_status).
type StatusMark struct {
	Status string    `json:"status"`
	At     time.Time `json:"at"`
}

func newFacts() *facts { return &facts{qIndex: map[string]int{}} }

func (f *facts) apply(e event.Event) {
	entry := LogEntry{Seq: e.Seq, Timestamp: e.Timestamp, Type: e.Type, Payload: boundedPayload(e)}
	if len(f.recent) < recentEvents {
		f.recent = append(f.recent, entry)
	} else {
		f.recent[f.next] = entry
		f.next = (f.next + 1) % recentEvents
	}
	f.meters.apply(e)
	switch e.Type {
	case event.AskHuman:
		var p event.AskHumanPayload
		if e.Decode(&p) != nil || len(f.questions) >= maxFactsListed {
			return
		}
		f.qIndex[p.ID] = len(f.questions)
		f.questions = append(f.questions, QuestionRecord{
			ID: p.ID, Role: p.Role, RoleID: p.RoleID, Question: clipText(p.Question), Context: clipText(p.Context),
			AssistantText: clipText(p.AssistantText), Options: p.Options, AskedAt: e.Timestamp,
		})
	case event.HumanAnswer:
		var p event.HumanAnswerPayload
		if e.Decode(&p) != nil {
			return
		}
		if i, ok := f.qIndex[p.ID]; ok {
			q := &f.questions[i]
			t := e.Timestamp
			q.Answered, q.Answer, q.AnsweredAt, q.Source = true, clipText(p.Answer), &t, p.Source
		}
	case event.Interrupt:
		var p event.InterruptPayload
		if e.Decode(&p) != nil || len(f.interrupts) >= maxFactsListed {
			return
		}
		f.open = append(f.open, len(f.interrupts))
		f.interrupts = append(f.interrupts, InterruptRecord{Trigger: p.Trigger, Handler: p.Handler, Target: p.Target,
			Message: clipText(p.Message), At: e.Timestamp})
	case event.InterruptResolved:
		var p event.InterruptResolvedPayload
		if e.Decode(&p) != nil || len(f.open) == 0 {
			return
		}
		i := f.open[len(f.open)-1]
		f.open = f.open[:len(f.open)-1]
		r := &f.interrupts[i]
		t := e.Timestamp
		r.Resolved, r.Action, r.HandlerStatus, r.Answer, r.ResolvedAt = true, p.Action, p.HandlerStatus, clipText(p.Summary), &t
	case event.RunResumed:
		f.open = f.open[:0] // interludes are never checkpointed
	case event.InquiryDropped:
		var p event.InquiryDroppedPayload
		if e.Decode(&p) != nil || len(f.interrupts) >= maxFactsListed {
			return
		}
		f.interrupts = append(f.interrupts, InterruptRecord{Trigger: "inquiry", Message: clipText(p.Message),
			At: e.Timestamp, Dropped: p.Reason})
	case event.RunStatus:
		var p event.RunStatusPayload
		if e.Decode(&p) != nil || len(f.statuses) >= maxFactsListed {
			return
		}
		f.statuses = append(f.statuses, StatusMark{Status: p.Status, At: e.Timestamp})
		f.noAction = p.NoAction
	case event.TextToolCalls:
		var p event.TextToolCallsPayload
		if e.Decode(&p) != nil || len(f.notes) >= maxFactsListed {
			return
		}
		f.notes = append(f.notes, clipText(p.Message))
	case event.PlanModification:
		var p event.PlanModificationPayload
		if e.Decode(&p) != nil || len(f.planMods) >= maxFactsListed {
			return
		}
		f.planMods = append(f.planMods, PlanModRecord{Message: clipText(p.Message), Target: p.Target,
			TargetRole: p.TargetRole, Aborted: p.Aborted, At: e.Timestamp})
	}
}

// recentLog returns the ring in log order.
func (f *facts) recentLog() []LogEntry {
	out := make([]LogEntry, 0, len(f.recent))
	out = append(out, f.recent[f.next:]...)
	return append(out, f.recent[:f.next]...)
}

// redactedKeys are payload keys the API never serves: the model name (a
// deployment detail) and the provider's response body (operator
// diagnostics that stay in log.jsonl).
func redact(e event.Event) json.RawMessage {
	switch e.Type {
	case event.RunStarted, event.LLMCall, event.ProviderFailure:
	default:
		return e.Payload
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(e.Payload, &m) != nil {
		return e.Payload
	}
	delete(m, "model")
	delete(m, "body")
	b, err := json.Marshal(m)
	if err != nil {
		return e.Payload
	}
	return b
}

// boundedPayload is the payload as served: redacted, and replaced by
// {truncated, bytes, preview} when larger than maxPayloadRaw.
func boundedPayload(e event.Event) json.RawMessage {
	p := redact(e)
	if len(bytes.TrimSpace(p)) == 0 {
		return json.RawMessage("null")
	}
	if len(p) <= maxPayloadRaw {
		return p
	}
	preview, _ := clip(string(p), maxPayloadRaw)
	b, _ := json.Marshal(struct {
		Truncated bool   `json:"truncated"`
		Bytes     int    `json:"bytes"`
		Preview   string `json:"preview"`
	}{true, len(p), preview})
	return b
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

func clipText(s string) string {
	out, cut := clip(s, maxProseField)
	if cut {
		out += "\n\n_(truncated)_"
	}
	return out
}
