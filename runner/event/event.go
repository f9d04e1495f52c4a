// Package event defines the run log's vocabulary: the event envelope written
// to log.jsonl, the event types, and the payload of each type.
//
// The log is the single source of truth of a run. Every view (the TUI, the
// browser, --json, the thread, history) is a derivation of these events, so
// the payload shapes are a contract: they follow the original system's
// docs/reference.md "Log events" so that its tooling reads our logs.
package event

import (
	"cmp"
	"encoding/json"
	"time"
)

// Type names an event kind. The string is what log.jsonl carries.
type Type string

// Event types of the original system.
const (
	RoleStart             Type = "role_start"
	RoleFinished          Type = "role_finished"
	AgentCall             Type = "agent_call"
	EffortSet             Type = "effort_set"
	LLMCallStart          Type = "llm_call_start"
	LLMCall               Type = "llm_call"
	ToolCall              Type = "tool_call"
	ToolResult            Type = "tool_result"
	Interrupt             Type = "interrupt"
	InterruptResolved     Type = "interrupt_resolved"
	OperatorNotice        Type = "operator_notice"
	InquiryDropped        Type = "inquiry_dropped"
	PlanModification      Type = "plan_modification"
	Observe               Type = "observe"
	Terminate             Type = "terminate"
	ContextPressure       Type = "context_pressure"
	ContextCompacted      Type = "context_compacted"
	RunResumed            Type = "run_resumed"
	DepthExceeded         Type = "depth_exceeded"
	RoleNotFound          Type = "role_not_found"
	AskHuman              Type = "ask_human"
	HumanAnswer           Type = "human_answer"
	LLMUnavailable        Type = "llm_unavailable"
	ContextBudgetExceeded Type = "context_budget_exceeded"
	ImplicitFinish        Type = "implicit_finish"
	UnknownTool           Type = "unknown_tool"
	InvalidToolCall       Type = "invalid_tool_call"
)

// Event types Guildhall adds.
const (
	// RunStarted opens every run's log.
	RunStarted Type = "run_started"
	// RunStatus records a run-level status change (finished, suspended,
	// paused, interrupted, resumed by the operator).
	RunStatus Type = "run_status"
	// ProviderFailure records one failed model request with a bounded copy
	// of the provider's body: operator diagnostics, never rendered prose.
	ProviderFailure Type = "provider_failure"
	// LLMDelta carries streamed reply text. It is published on the bus for
	// live views and never written to log.jsonl.
	LLMDelta Type = "llm_delta"
	// Egress records one attempt to reach the network from a sandboxed
	// command (through the proxy) or a web tool, and the policy's decision.
	Egress Type = "egress"
	// MCPServer records a change of an MCP server's state: ready with its
	// tools, failed to start, exited, or unresponsive. Every view shows
	// the failures as a banner.
	MCPServer Type = "mcp_server"
	// ToolCallsIgnored records the tool calls of a reply that were not run
	// because an earlier call in the same reply (finish) ended the role.
	ToolCallsIgnored Type = "tool_calls_ignored"
	// ConsoleDetached records that the terminal of the console running the
	// run went away and the run goes on headless in the same process, and
	// how to attach to it again.
	ConsoleDetached Type = "console_detached"
	// TextToolCalls records, once per run, that the endpoint returned tool
	// calls written as text in a reply's content rather than through the
	// API, whether they were run, and the usual cause.
	TextToolCalls Type = "text_tool_calls"
	// Repetition records that a role sent the same reply (the same text,
	// or the same tool calls with the same arguments) several times in a
	// row: first a corrective note, then, when it went on, the end of the
	// role with loop_detected.
	Repetition Type = "repetition"
)

// TextToolCallsPayload: a reply wrote its tool calls as text. Format is
// hermes (<tool_call>{…}</tool_call>), mistral ([TOOL_CALLS] […]), llama
// (<|python_tag|>{…} or a bare {"name", "parameters"} object) or json (a
// lone fenced {"name", "arguments"} object). Executed says the calls were
// run; otherwise the model was told to call tools through the API, and
// Problem says why they could not be run. Message is the platform's own
// sentence for the operator: what happened and the usual cause.
type TextToolCallsPayload struct {
	Role     string `json:"role"`
	RoleID   string `json:"roleId,omitempty"`
	Format   string `json:"format"`
	Executed bool   `json:"executed"`
	Problem  string `json:"problem,omitempty"`
	Message  string `json:"message"`
}

// RepetitionPayload: the same reply Count times in a row. Tool and
// ArgsHash name the repeated call (the hash is recent_role_tool_calls'
// argsHash) when the reply made one; Action is "noted" (a corrective note
// was added) or "stopped" (the role finished with loop_detected).
type RepetitionPayload struct {
	Role     string `json:"role"`
	RoleID   string `json:"roleId,omitempty"`
	Count    int    `json:"count"`
	Tool     string `json:"tool,omitempty"`
	ArgsHash string `json:"argsHash,omitempty"`
	Action   string `json:"action"`
}

// ConsoleDetachedPayload: the console's process and the command that
// attaches a terminal to the run (never the token: that is only in the
// operator's discovery file).
type ConsoleDetachedPayload struct {
	PID    int    `json:"pid"`
	Attach string `json:"attach"`
}

// Event is one line of log.jsonl: {timestamp, type, payload}.
type Event struct {
	// Seq is the event's 0-based line number in the run's log. It is not
	// stored in the file; readers and the bus assign it.
	Seq       int64           `json:"-"`
	Timestamp time.Time       `json:"timestamp"`
	Type      Type            `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	// Ephemeral events (LLMDelta) are published but never persisted.
	Ephemeral bool `json:"-"`
}

// Decode unmarshals the payload into v.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Payload, v) }

// AppendJSON appends e as a log line's JSON object, byte for byte what
// json.Marshal(e) gives for a payload made by New. It exists because
// json.Marshal re-scans a RawMessage payload to validate and compact it,
// and every event is encoded for the log and again for --json output.
// Types are plain ASCII names and need no escaping.
func (e Event) AppendJSON(b []byte) []byte {
	b = append(b, `{"timestamp":"`...)
	b = e.Timestamp.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","type":"`...)
	b = append(b, e.Type...)
	b = append(b, `","payload":`...)
	if len(e.Payload) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Payload...)
	}
	return append(b, '}')
}

// New builds an event from a payload value, stamping it with t.
func New(t time.Time, typ Type, payload any) (Event, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return Event{}, err
	}
	return Event{Timestamp: t.UTC(), Type: typ, Payload: b}, nil
}

// ErrorInfo is the structured error of a result card: {kind, message?, details?}.
// Details is raw technical detail (for example a provider's error body): it is
// operator-only and never enters model history.
type ErrorInfo struct {
	Kind    string          `json:"kind"`
	Message string          `json:"message,omitempty"`
	Details json.RawMessage `json:"details,omitempty"`
}

// Card is a role's result card, the argument of finish and the result of agent.
type Card struct {
	Status    string     `json:"status"` // success | error | needs_clarification
	Summary   string     `json:"summary"`
	Artifacts []string   `json:"artifacts,omitempty"`
	Error     *ErrorInfo `json:"error,omitempty"`
}

// RunStartedPayload opens a run.
type RunStartedPayload struct {
	RunID         string `json:"runId"`
	Task          string `json:"task"`
	Effort        string `json:"effort"`
	LogLevel      string `json:"logLevel,omitempty"`
	ContinuesFrom string `json:"continuesFrom,omitempty"`
	EntryRole     string `json:"entryRole"`
	Model         string `json:"model,omitempty"`
	// WorkspaceConfig is the trust decision about the workspace's own
	// guild and deployment files, when it has any.
	WorkspaceConfig *WorkspaceConfig `json:"workspaceConfig,omitempty"`
	// WindowWarning, when set, says the model's context window is too small
	// for the guild's opening prompts, and how to fix that.
	WindowWarning string `json:"windowWarning,omitempty"`
}

// WorkspaceConfig records whether a workspace's own configuration files
// were applied (state "trusted") or not ("ignored"), who decided, and
// which files it was about.
type WorkspaceConfig struct {
	State  string   `json:"state"`
	Source string   `json:"source"`
	Files  []string `json:"files,omitempty"`
}

// RunStatusPayload records a run status change. Status is one of running,
// success, error, needs_clarification, interrupted, suspended, paused.
type RunStatusPayload struct {
	Status string     `json:"status"`
	Reason string     `json:"reason,omitempty"`
	Card   *Card      `json:"card,omitempty"`
	Error  *ErrorInfo `json:"error,omitempty"`
	// NoAction is set on a finished run whose entry role finished with a
	// reply without tool calls and which made no tool call at all: the
	// model answered without doing anything.
	NoAction bool `json:"noAction,omitempty"`
}

// RoleStartPayload: a role instance begins.
type RoleStartPayload struct {
	Role   string `json:"role"`
	RoleID string `json:"roleId"`
	Depth  int    `json:"depth"`
	Task   string `json:"task"`
	Parent string `json:"parent,omitempty"`
	// ParentID is the parent's instance id (Guildhall's name), and
	// ParentRoleID the same under the original system's name: writers set
	// both, so the original's readers walk a Guildhall log's delegation
	// chain; readers use ParentInstance, which takes either. (Plain fields
	// rather than a custom codec: the flow model decodes every role event.)
	ParentID     string `json:"parentId,omitempty"`
	ParentRoleID string `json:"parentRoleId,omitempty"`
	// Model is the model the instance's calls ask for (the configured or
	// server-reported name; "" when neither said), and ModelRef the
	// deployment's name for it when the role picks one of its models
	// ("" for the model block).
	Model    string `json:"model,omitempty"`
	ModelRef string `json:"modelRef,omitempty"`
}

// RoleFinishedPayload: a role instance returned its card.
type RoleFinishedPayload struct {
	Role      string     `json:"role"`
	RoleID    string     `json:"roleId"`
	Depth     int        `json:"depth"`
	Status    string     `json:"status"`
	Summary   string     `json:"summary,omitempty"`
	Artifacts []string   `json:"artifacts,omitempty"`
	Error     *ErrorInfo `json:"error,omitempty"`
	Parent    string     `json:"parent,omitempty"`
	// ParentID and ParentRoleID: see RoleStartPayload.
	ParentID     string `json:"parentId,omitempty"`
	ParentRoleID string `json:"parentRoleId,omitempty"`
}

// AgentCallPayload: the parent→child edge, logged before the child runs.
type AgentCallPayload struct {
	Parent string `json:"parent"`
	// ParentID and ParentRoleID: see RoleStartPayload.
	ParentID     string `json:"parentId,omitempty"`
	ParentRoleID string `json:"parentRoleId,omitempty"`
	Child        string `json:"child"`
	Depth        int    `json:"depth"`
	Task         string `json:"task,omitempty"`
}

// ParentInstance is the parent's instance id: Guildhall's parentId, or
// the original system's parentRoleId in a log it wrote.
func (p RoleStartPayload) ParentInstance() string { return cmp.Or(p.ParentID, p.ParentRoleID) }

// ParentInstance is the parent's instance id (see RoleStartPayload's).
func (p RoleFinishedPayload) ParentInstance() string { return cmp.Or(p.ParentID, p.ParentRoleID) }

// ParentInstance is the parent's instance id (see RoleStartPayload's).
func (p AgentCallPayload) ParentInstance() string { return cmp.Or(p.ParentID, p.ParentRoleID) }

// EffortSetPayload records the run's effort tier.
type EffortSetPayload struct {
	Effort string `json:"effort"`
}

// LLMCallStartPayload marks a model request in flight.
type LLMCallStartPayload struct {
	Role   string `json:"role"`
	RoleID string `json:"roleId,omitempty"`
}

// Usage is what the endpoint reported for one call. Only reported usage is
// trusted; nothing here is estimated.
type Usage struct {
	PromptTokens       int `json:"promptTokens"`
	CompletionTokens   int `json:"completionTokens"`
	TotalTokens        int `json:"totalTokens"`
	CachedPromptTokens int `json:"cachedPromptTokens,omitempty"`
	// EvaluatedPromptTokens is the part of the prompt the server computed
	// afresh, and PromptCacheReported says the endpoint reported the split
	// (llama.cpp's timings, OpenAI's cached_tokens, Anthropic's cache
	// reads); without it neither count is known.
	EvaluatedPromptTokens int  `json:"evaluatedPromptTokens,omitempty"`
	PromptCacheReported   bool `json:"promptCacheReported,omitempty"`
	// TokensPerSecond is the reply's generation speed: the server's own
	// figure (llama.cpp's predicted_per_second), else the completion
	// tokens over the time from the first streamed text to the end.
	TokensPerSecond float64 `json:"tokensPerSecond,omitempty"`
}

// WireToolCall is a tool call as the model emitted it. It is written in
// the shape of the OpenAI wire and of the original system's log,
// {id, type: "function", function: {name, arguments}}, and read from that
// shape or from the flat {id, name, arguments} earlier Guildhall logs hold.
type WireToolCall struct {
	ID        string
	Name      string
	Arguments string
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// MarshalJSON writes the nested shape.
func (c WireToolCall) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function wireFunction `json:"function"`
	}{c.ID, "function", wireFunction{c.Name, c.Arguments}})
}

// UnmarshalJSON reads the nested shape or the flat one.
func (c *WireToolCall) UnmarshalJSON(b []byte) error {
	var v struct {
		ID        string        `json:"id"`
		Name      string        `json:"name"`
		Arguments string        `json:"arguments"`
		Function  *wireFunction `json:"function"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = WireToolCall{ID: v.ID, Name: v.Name, Arguments: v.Arguments}
	if f := v.Function; f != nil {
		c.Name, c.Arguments = cmp.Or(f.Name, c.Name), cmp.Or(f.Arguments, c.Arguments)
	}
	return nil
}

// WireMessage is one message as sent to the model (reasoning omitted).
type WireMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []WireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// Received is the assistant response of one call.
type Received struct {
	Content   string         `json:"content"`
	Reasoning string         `json:"reasoning,omitempty"`
	ToolCalls []WireToolCall `json:"toolCalls,omitempty"`
}

// LLMCallPayload: a successful model call. Sent is a delta: the messages added
// since this role's previous call (SentFrom is the index of the first). At log
// level "standard" Sent and Received bodies are omitted.
type LLMCallPayload struct {
	Role         string        `json:"role"`
	RoleID       string        `json:"roleId,omitempty"`
	MessageCount int           `json:"messageCount"`
	SentFrom     int           `json:"sentFrom"`
	Sent         []WireMessage `json:"sent,omitempty"`
	Received     *Received     `json:"received,omitempty"`
	Usage        Usage         `json:"usage"`
	FinishReason string        `json:"finishReason,omitempty"`
	Model        string        `json:"model,omitempty"`
	// ModelRef is the deployment's name of the model the call went to,
	// when the role runs on one of its named models ("" for the model
	// block): the console prices the call at that model's price.
	ModelRef  string `json:"modelRef,omitempty"`
	ElapsedMs int64  `json:"elapsedMs"`
}

// LLMDeltaPayload is streamed text (ephemeral, never persisted).
type LLMDeltaPayload struct {
	RoleID    string `json:"roleId"`
	Content   string `json:"content,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
}

// ToolCallPayload: a tool call about to be dispatched. Arguments is the raw
// argument string the model passed.
type ToolCallPayload struct {
	Role      string `json:"role"`
	RoleID    string `json:"roleId,omitempty"`
	Tool      string `json:"tool"`
	CallID    string `json:"callId,omitempty"`
	Arguments string `json:"arguments"`
	// AsText is set on a call the model wrote as text in its reply rather
	// than through the API: the format it used (see TextToolCallsPayload).
	AsText string `json:"asText,omitempty"`
}

// ToolResultPayload: the untruncated result of a tool call. Kind is
// "success" or an error kind; Result is the full ToolResult JSON
// ({kind:"success", data} or {kind, message, details}). At log level
// "standard" Result is omitted, except for an error and for a subprocess
// tool's result: kept whole when its command failed, and otherwise with
// each output stream cut to its head and tail (Excerpt is then set).
// Outcome is what a subprocess tool's commands did: a tool that ran
// (kind success) may have run a command that failed.
type ToolResultPayload struct {
	Role      string          `json:"role"`
	RoleID    string          `json:"roleId,omitempty"`
	Tool      string          `json:"tool"`
	CallID    string          `json:"callId,omitempty"`
	Kind      string          `json:"kind"`
	Result    json.RawMessage `json:"result,omitempty"`
	Excerpt   bool            `json:"excerpt,omitempty"`
	Outcome   *ToolOutcome    `json:"outcome,omitempty"`
	ElapsedMs int64           `json:"elapsedMs"`
}

// InterruptPayload: the active role is suspended and a handler runs.
// Trigger is loop_check, context_pressure, context_budget_exceeded or inquiry.
type InterruptPayload struct {
	Trigger string `json:"trigger"`
	Handler string `json:"handler"`
	Target  string `json:"target"`
	Message string `json:"message,omitempty"`
}

// InterruptResolvedPayload: the handler finished.
type InterruptResolvedPayload struct {
	Trigger       string `json:"trigger"`
	Handler       string `json:"handler"`
	Target        string `json:"target"`
	Action        string `json:"action"`
	HandlerStatus string `json:"handlerStatus,omitempty"`
	Summary       string `json:"summary,omitempty"`
}

// OperatorNoticePayload: a marked directive injected into the entry role.
type OperatorNoticePayload struct {
	Role    string `json:"role"`
	RoleID  string `json:"roleId"`
	Message string `json:"message"`
}

// InquiryDroppedPayload: an inquiry arrived with no handler configured.
type InquiryDroppedPayload struct {
	Message string `json:"message"`
	Reason  string `json:"reason"`
}

// PlanModificationPayload: an operator plan modification was routed.
type PlanModificationPayload struct {
	Target     string   `json:"target"`
	TargetRole string   `json:"targetRole"`
	Message    string   `json:"message"`
	Aborted    []string `json:"aborted"`
}

// ObservePayload: a read-only cross-role inspection read another instance.
type ObservePayload struct {
	Role    string `json:"role"`
	RoleID  string `json:"roleId"`
	Details string `json:"details"`
	// By is the observing instance id (Guildhall addition).
	By string `json:"by,omitempty"`
}

// TerminatePayload closes an open call on a paused stack.
type TerminatePayload struct {
	Role    string `json:"role"`
	Details string `json:"details,omitempty"`
}

// ContextPressurePayload: reported prompt size crossed the threshold.
type ContextPressurePayload struct {
	Role            string `json:"role"`
	RoleID          string `json:"roleId,omitempty"`
	PromptTokens    int    `json:"promptTokens"`
	EffectiveBudget int    `json:"effectiveBudget"`
}

// ContextCompactedPayload: the backstop compacted a conversation.
type ContextCompactedPayload struct {
	Role                      string `json:"role"`
	RoleID                    string `json:"roleId,omitempty"`
	DroppedMessages           int    `json:"droppedMessages"`
	TruncatedToolMessages     int    `json:"truncatedToolMessages"`
	StrippedReasoningMessages int    `json:"strippedReasoningMessages"`
	EstimatedPromptTokens     int    `json:"estimatedPromptTokens"`
	ContextWindow             int    `json:"contextWindow"`
}

// RunResumedPayload marks a restart boundary.
type RunResumedPayload struct {
	RunID          string   `json:"runId"`
	ResumedFrames  int      `json:"resumedFrames"`
	ResumedRoleIDs []string `json:"resumedRoleIds,omitempty"`
	// LogProblems counts unreadable log lines found on resume (a torn
	// last line after a crash).
	LogProblems int `json:"logProblems,omitempty"`
}

// DepthExceededPayload: an agent call was refused for depth.
type DepthExceededPayload struct {
	Parent string `json:"parent"`
	Child  string `json:"child"`
	Depth  int    `json:"depth"`
	Error  string `json:"error"`
}

// RoleNotFoundPayload: an unknown role was named.
type RoleNotFoundPayload struct {
	Parent   string `json:"parent,omitempty"`
	RoleName string `json:"roleName"`
}

// Option is a suggested answer to an ask_human question.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// AskHumanPayload: a question for the operator. AssistantText is the same
// turn's visible assistant text, shown when no context was given.
type AskHumanPayload struct {
	ID            string   `json:"id"`
	Role          string   `json:"role,omitempty"`
	RoleID        string   `json:"roleId,omitempty"`
	Question      string   `json:"question"`
	Context       string   `json:"context,omitempty"`
	Options       []Option `json:"options,omitempty"`
	AssistantText string   `json:"assistantText,omitempty"`
}

// HumanAnswerPayload: the operator's answer (first answer wins).
type HumanAnswerPayload struct {
	ID     string `json:"id"`
	Answer string `json:"answer"`
	// Source names the client that answered: terminal, browser, stdin, queue.
	Source string `json:"source,omitempty"`
}

// FailurePayload carries the role and the detail of the failure events
// (llm_unavailable, context_budget_exceeded, implicit_finish, unknown_tool,
// invalid_tool_call). An implicit_finish also says which status the role
// finished with, and the error kind when it is not success.
type FailurePayload struct {
	Role    string `json:"role"`
	RoleID  string `json:"roleId,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Message string `json:"message,omitempty"`
	Status  string `json:"status,omitempty"`
	Kind    string `json:"kind,omitempty"`
}

// ProviderFailurePayload records one failed provider request. Body is a
// bounded copy of the provider's response body: diagnostic data for the
// operator, never rendered as prose, never in model history or meta.json.
type ProviderFailurePayload struct {
	RoleID     string `json:"roleId,omitempty"`
	Category   string `json:"category"` // auth, rate_limit, server, timeout, cut_stream, malformed, context_length, network
	StatusCode int    `json:"statusCode,omitempty"`
	Attempt    int    `json:"attempt"`
	Retrying   bool   `json:"retrying"`
	Body       string `json:"body,omitempty"`
	// Message is the failure's own message: the server's error message
	// (from the body) or this machine's (connection refused), or why a
	// reply was unusable. At most MaxFailureMessage characters; views
	// sanitise it like every outside string.
	Message string `json:"message,omitempty"`
}

// MaxFailureMessage caps ProviderFailurePayload.Message.
const MaxFailureMessage = 300

// ToolCallsIgnoredPayload lists the calls of one reply that were not run,
// in order, and why.
type ToolCallsIgnoredPayload struct {
	Role   string `json:"role"`
	RoleID string `json:"roleId,omitempty"`
	// After is the call that ended the turn ("finish").
	After string `json:"after"`
	// Count is how many calls were not run; Tools counts them per tool, in
	// order of first appearance.
	Count  int         `json:"count"`
	Tools  []ToolCount `json:"tools"`
	Reason string      `json:"reason"`
}

// ToolCount is how many calls one tool got.
type ToolCount struct {
	Tool  string `json:"tool"`
	Count int    `json:"count"`
}

// EgressPayload is one egress attempt: the host and port asked for, whether
// the sandbox's network policy allowed it (and by which pattern), and the
// client: "proxy" for a sandboxed command, or the web tool's name. Role and
// RoleID name the role whose tool call made the attempt, when known. The
// first six fields are egress.Decision's, written again rather than
// embedded: the log's vocabulary imports only the standard library.
type EgressPayload struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule,omitempty"`
	Via     string `json:"via"`
	Reason  string `json:"reason,omitempty"`
	Role    string `json:"role,omitempty"`
	RoleID  string `json:"roleId,omitempty"`
}

// MCPServerPayload is a change of an MCP server's state. State is one of
// ready, failed (not started again in the run), exited and unresponsive
// (both started again at the next use). Message is Guildhall's sentence;
// anything the server said in it (its stderr, an error) was cleaned and
// cut, but it is still the server's text: views sanitize it as any other.
// A ready server's event counts its tools, lists those it offered that
// were left out (Skipped, each with why) and the granted tools it does
// not offer (Missing). Role and RoleID name the role whose work started
// or used the server, when known.
type MCPServerPayload struct {
	Server  string   `json:"server"`
	State   string   `json:"state"`
	Message string   `json:"message,omitempty"`
	Tools   int      `json:"tools,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
	Missing []string `json:"missing,omitempty"`
	Role    string   `json:"role,omitempty"`
	RoleID  string   `json:"roleId,omitempty"`
}
