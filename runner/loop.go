package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/tools"
)

// errorCard builds a role's error card.
func errorCard(kind, message string) event.Card {
	return event.Card{Status: "error", Summary: message, Error: &event.ErrorInfo{Kind: kind, Message: message}}
}

// runFrame runs one role invocation until it finishes. It returns
// errStopped when the run must unwind without finishing (ctx cancelled).
func (r *Run) runFrame(ctx context.Context, f *Frame) (event.Card, error) {
	for {
		if f.Pending != nil {
			card, done, err := r.continueTurn(ctx, f)
			if err != nil || done {
				return card, err
			}
			continue
		}
		// The safe point: the top of a turn, between a turn's tool results
		// and the next request.
		if ctx.Err() != nil {
			return event.Card{}, errStopped
		}
		if r.handlerDepth == 0 {
			r.checkpoint()
		}
		_ = r.log.Sync()
		if err := r.budgetPoint(""); err != nil {
			return event.Card{}, err
		}
		if card, done := r.drainMarks(f); done {
			return card, nil
		}
		if card, done, err := r.loopCheckPoint(ctx, f); err != nil || done {
			return card, err
		}
		if err := r.pausePoint(ctx); err != nil {
			return event.Card{}, err
		}
		if err := r.operatorPoint(ctx, f); err != nil {
			return event.Card{}, err
		}
		if card, done := r.drainMarks(f); done {
			return card, nil
		}
		if card, done, err := r.contextPoint(ctx, f); err != nil || done {
			return card, err
		}
		resp, card, err := r.callModel(ctx, f)
		if errors.Is(err, errRejected) {
			continue
		}
		if err != nil {
			return event.Card{}, err
		}
		if resp == nil {
			return card, nil
		}
		if len(resp.ToolCalls) == 0 && resp.text.found() {
			if card, done := r.textTurn(f, resp); done {
				return card, nil
			}
			continue
		}
		f.History = append(f.History, provider.Message{
			Role: "assistant", Content: resp.Content, Reasoning: resp.Reasoning, ToolCalls: resp.ToolCalls,
		})
		if card, done := r.repetitionCheck(f, resp.Content, resp.ToolCalls); done {
			return card, nil
		}
		if len(resp.ToolCalls) == 0 {
			return r.implicitFinish(f, resp.Content), nil
		}
		f.Pending = &PendingTurn{Calls: resp.ToolCalls, AssistantText: resp.Content}
		f.TextCallUnheeded = false
	}
}

// drainMarks applies routing marks set on f by an earlier decision.
func (r *Run) drainMarks(f *Frame) (event.Card, bool) {
	marks := f.Marks
	f.Marks = nil
	for _, m := range marks {
		switch m.Kind {
		case "abort":
			msg := m.Message
			card := event.Card{Status: "error", Summary: msg, Error: m.Error}
			return card, true
		case "message":
			f.History = append(f.History, provider.Message{Role: "user", Content: m.Message})
		}
	}
	return event.Card{}, false
}

// continueTurn dispatches the pending turn's remaining tool calls. done is
// set when the role finished (finish was called).
func (r *Run) continueTurn(ctx context.Context, f *Frame) (event.Card, bool, error) {
	p := f.Pending
	for p.Next < len(p.Calls) {
		call := p.Calls[p.Next]
		var content string
		if f.aborting() {
			// An abort is pending: the rest of this turn is not run, but
			// each call still gets a result so the history stays valid.
			content = r.conversationText(tools.Fail("interrupted", "not run: this role is being stopped"))
			f.History = append(f.History, provider.Message{Role: "tool", Content: content, ToolCallID: call.ID, ToolName: call.Name})
			p.Next++
			continue
		}
		if err := r.budgetPoint(call.Name); err != nil {
			return event.Card{}, false, err
		}
		switch call.Name {
		case "finish":
			if card, ok, msg := r.parseFinish(f, call); ok {
				r.emitToolCall(f, call)
				r.emitToolResult(f, call, tools.OK(map[string]string{"status": card.Status}), 0)
				r.noteIgnored(f, p.Calls[p.Next+1:])
				f.Pending = nil
				return card, true, nil
			} else {
				content = r.finishToolMessage(f, call, msg)
			}
		case "agent":
			res, err := r.agentCall(ctx, f, call)
			if err != nil {
				return event.Card{}, false, err
			}
			content = res
		default:
			if ctx.Err() != nil {
				return event.Card{}, false, errStopped
			}
			r.markDispatch(f, call)
			content = r.dispatch(ctx, f, call, p.AssistantText)
			if err := r.sandboxTampered(); err != nil {
				return event.Card{}, false, err
			}
		}
		f.History = append(f.History, provider.Message{Role: "tool", Content: content, ToolCallID: call.ID, ToolName: call.Name})
		f.ToolCalls++
		p.Next++
		p.ChildCard, p.Started = nil, false
	}
	f.Pending = nil
	return event.Card{}, false, nil
}

// noteIgnored records the calls a reply made after its finish: the role
// has ended, so they are not run, and the log says so.
func (r *Run) noteIgnored(f *Frame, rest []provider.ToolCall) {
	if len(rest) == 0 {
		return
	}
	p := event.ToolCallsIgnoredPayload{Role: f.Role, RoleID: f.RoleID, After: "finish", Count: len(rest),
		Reason: "finish ended the role; the calls after it in the same reply were not run"}
	at := map[string]int{}
	for _, c := range rest {
		i, ok := at[c.Name]
		if !ok {
			i = len(p.Tools)
			at[c.Name] = i
			p.Tools = append(p.Tools, event.ToolCount{Tool: c.Name})
		}
		p.Tools[i].Count++
	}
	r.emit(event.ToolCallsIgnored, p)
}

func (f *Frame) aborting() bool {
	for _, m := range f.Marks {
		if m.Kind == "abort" {
			return true
		}
	}
	return false
}

// parseFinish validates a finish call. On failure it returns the message
// for the model.
func (r *Run) parseFinish(f *Frame, call provider.ToolCall) (event.Card, bool, string) {
	if !r.opts.Guild.Roles[f.Role].Grants("finish") {
		return event.Card{}, false, ""
	}
	args, msg := validateArgs(r.schema("finish"), call.Arguments)
	if msg != "" {
		return event.Card{}, false, msg
	}
	var card event.Card
	if err := json.Unmarshal(args, &card); err != nil {
		return event.Card{}, false, "arguments do not match finish: " + err.Error()
	}
	return card, true, ""
}

// finishToolMessage logs a refused finish and returns its tool result.
func (r *Run) finishToolMessage(f *Frame, call provider.ToolCall, msg string) string {
	r.emitToolCall(f, call)
	var res tools.Result
	if msg == "" {
		r.emit(event.InvalidToolCall, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Tool: call.Name, Message: "role may not call finish"})
		res = tools.Fail("invalid_tool_call", "your role is not granted the finish tool")
	} else {
		res = tools.Fail(tools.KindInvalidArguments, msg)
	}
	r.emitToolResult(f, call, res, 0)
	return r.conversationText(res)
}

// agentCall runs a child role depth-first and returns its card as the tool
// result text.
func (r *Run) agentCall(ctx context.Context, f *Frame, call provider.ToolCall) (string, error) {
	p := f.Pending
	if p.ChildCard == nil {
		if ctx.Err() != nil {
			return "", errStopped
		}
		card, refused, err := r.startChild(ctx, f, call)
		if err != nil {
			return "", err
		}
		if refused != nil {
			return r.conversationText(*refused), nil
		}
		p.ChildCard = card
	}
	// The raw technical detail of an error card is operator-only: it never
	// enters the parent's history.
	card := *p.ChildCard
	if card.Error != nil {
		e := *card.Error
		e.Details = nil
		card.Error = &e
	}
	b, _ := json.Marshal(card)
	return r.truncate(string(b)), nil
}

// startChild validates an agent call and runs the child. It returns either
// the child's card, a refusal result, or the error that unwinds the run
// (errStopped, or the endpoint's errEndpoint and errHalted).
func (r *Run) startChild(ctx context.Context, f *Frame, call provider.ToolCall) (*event.Card, *tools.Result, error) {
	r.emitToolCall(f, call)
	if res := r.checkGrant(f, call.Name); res != nil {
		r.emitToolResult(f, call, *res, 0)
		return nil, res, nil
	}
	args, msg := validateArgs(r.schema("agent"), call.Arguments)
	if msg != "" {
		res := tools.Fail(tools.KindInvalidArguments, msg)
		r.emitToolResult(f, call, res, 0)
		return nil, &res, nil
	}
	var a struct{ Role, Task string }
	_ = json.Unmarshal(args, &a)
	if r.opts.Guild.Roles[a.Role] == nil {
		r.emit(event.RoleNotFound, event.RoleNotFoundPayload{Parent: f.Role, RoleName: a.Role})
		res := tools.Fail("role_not_found", fmt.Sprintf("there is no role %q; roles are %s", a.Role, strings.Join(r.opts.Guild.RoleNames(), ", ")))
		r.emitToolResult(f, call, res, 0)
		return nil, &res, nil
	}
	if f.Depth+1 > r.opts.Deployment.Executor.MaxAgentDepth {
		msg := fmt.Sprintf("delegating to %q would exceed the maximum agent depth of %d; do the work yourself or finish", a.Role, r.opts.Deployment.Executor.MaxAgentDepth)
		r.emit(event.DepthExceeded, event.DepthExceededPayload{Parent: f.Role, Child: a.Role, Depth: f.Depth + 1, Error: msg})
		res := tools.Fail("depth_exceeded", msg)
		r.emitToolResult(f, call, res, 0)
		return nil, &res, nil
	}
	child := r.newFrame(a.Role, a.Task, f)
	role := r.opts.Guild.Roles[a.Role]
	child.History = []provider.Message{{Role: "system", Content: role.Prompt}, {Role: "user", Content: a.Task}}
	child.TaskIndex = 1
	r.stack = append(r.stack, child)
	f.Pending.Child = &ChildRef{Role: child.Role, RoleID: child.RoleID, Depth: child.Depth}
	// Checkpoint before the child's first event, so a crash never leaves a
	// logged role_start that the checkpoint does not know.
	if r.handlerDepth == 0 {
		r.checkpoint()
	}
	r.emit(event.AgentCall, event.AgentCallPayload{Parent: f.Role, ParentID: f.RoleID, ParentRoleID: f.RoleID, Child: a.Role, Depth: child.Depth, Task: a.Task})
	r.emitRoleStart(child)
	start := time.Now()
	card, err := r.runFrame(ctx, child)
	if err != nil {
		return nil, nil, err
	}
	// Record the card on the waiting turn before the checkpoint that
	// role_finished writes, so a resume delivers it rather than re-running
	// the child.
	f.Pending.ChildCard = &card
	r.finishFrame(child, card)
	r.emitToolResult(f, call, tools.OK(card), time.Since(start))
	return &card, nil, nil
}

// checkGrant refuses tools the guild does not declare or the role was not
// granted.
func (r *Run) checkGrant(f *Frame, name string) *tools.Result {
	if _, declared := r.opts.Guild.Manifests[name]; !declared {
		r.emit(event.UnknownTool, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Tool: name, Message: "no manifest declares this tool"})
		res := tools.Fail("unknown_tool", fmt.Sprintf("there is no tool named %q; use only the tools you were given", name))
		return &res
	}
	if !r.opts.Guild.Roles[f.Role].Grants(name) {
		r.emit(event.InvalidToolCall, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Tool: name, Message: "role is not granted this tool"})
		res := tools.Fail("invalid_tool_call", fmt.Sprintf("your role may not call %q; use only the tools you were given", name))
		return &res
	}
	return nil
}

func (r *Run) schema(name string) *jsonschema.Resolved {
	if s, ok := r.schemas[name]; ok {
		return s
	}
	m := r.opts.Guild.Manifests[name]
	s, err := compileSchema(m.Parameters)
	if err != nil {
		s = nil
	}
	r.schemas[name] = s
	return s
}

// dispatch runs one ordinary tool call and returns the conversation text of
// its result.
func (r *Run) dispatch(ctx context.Context, f *Frame, call provider.ToolCall, assistantText string) string {
	r.emitToolCall(f, call)
	start := time.Now()
	if call.Name == "git_init" {
		r.stopConfinedMCP()
	}
	res := r.invoke(ctx, f, call, assistantText)
	r.emitToolResult(f, call, res, time.Since(start))
	r.dropStaleMCP()
	return r.conversationText(res)
}

func (r *Run) invoke(ctx context.Context, f *Frame, call provider.ToolCall, assistantText string) tools.Result {
	if _, _, ok := parseMCPName(call.Name); ok {
		return r.invokeMCP(ctx, f, call.Name, call.Arguments)
	}
	if res := r.checkGrant(f, call.Name); res != nil {
		return *res
	}
	s := r.schema(call.Name)
	if s == nil {
		return tools.Fail(tools.KindInvalidArguments, "the tool's parameter schema is invalid; it cannot be called")
	}
	args, msg := validateArgs(s, call.Arguments)
	if msg != "" {
		return tools.Fail(tools.KindInvalidArguments, msg)
	}
	if res, ok := r.internalTool(ctx, f, call.Name, args); ok {
		return res
	}
	impl, ok := r.opts.Tools[call.Name]
	if !ok {
		return tools.Fail(tools.KindUnavailable, fmt.Sprintf("tool %q is declared but this Guildhall build does not implement it", call.Name))
	}
	ceiling := time.Duration(r.opts.Deployment.Executor.DefaultToolTimeoutSeconds) * time.Second
	env := r.toolEnv(f, assistantText, ceiling)
	// ask_human waits for a person, not a process: no tool timeout.
	tctx, cancel := ctx, context.CancelFunc(func() {})
	if call.Name != "ask_human" {
		tctx, cancel = context.WithTimeout(ctx, ceiling+5*time.Second)
	}
	defer cancel()
	res := impl.Call(tctx, env, args)
	if errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil && res.Kind != tools.KindTimeout {
		res = tools.Fail(tools.KindTimeout, fmt.Sprintf("%s did not finish within %s", call.Name, ceiling))
	}
	return res
}

// internalTool runs the tools implemented by the executor itself (besides
// agent and finish). ok is false for every other tool.
func (r *Run) internalTool(ctx context.Context, f *Frame, name string, args json.RawMessage) (tools.Result, bool) {
	if h, ok := r.internalTools()[name]; ok {
		return h(ctx, f, args), true
	}
	return tools.Result{}, false
}

func (r *Run) toolEnv(f *Frame, assistantText string, ceiling time.Duration) *tools.Env {
	env := &tools.Env{
		Workspace: r.wsTool, RunID: r.id, RunsDir: r.ws.Runs(), Role: f.Role, RoleID: f.RoleID,
		TimeoutCeiling: ceiling, Meta: (*runMeta)(r), PassEnv: r.opts.Deployment.Executor.PassEnv, Environ: r.opts.Environ,
		Egress: r.opts.Deployment.EgressPolicy(), OnEgress: r.egressReporter(f),
		Sandbox: r.sb,
	}
	if r.opts.WebSearch != nil {
		env.WebSearch = *r.opts.WebSearch
	}
	if r.undo != nil {
		env.Undo = r.undo
	}
	if !r.opts.NoInput {
		env.Asker = &asker{r: r, f: f, assistantText: assistantText}
	}
	return env
}

// emitToolCall logs a call about to be dispatched, marked when the model
// wrote it as text.
func (r *Run) emitToolCall(f *Frame, call provider.ToolCall) {
	r.acted = true
	p := event.ToolCallPayload{Role: f.Role, RoleID: f.RoleID, Tool: call.Name, CallID: call.ID, Arguments: call.Arguments}
	if f.Pending != nil {
		p.AsText = f.Pending.AsText
	}
	r.emit(event.ToolCall, p)
}

// conversationText is a result as the model sees it: JSON, truncated to
// contextPolicy.maxToolOutputChars with a marker. The log keeps it whole.
func (r *Run) conversationText(res tools.Result) string {
	b, err := json.Marshal(res)
	if err != nil {
		return `{"kind":"error","message":"result could not be encoded"}`
	}
	return r.truncate(string(b))
}

func (r *Run) truncate(s string) string {
	limit := r.opts.Deployment.ContextPolicy.MaxToolOutputChars
	runes := []rune(s)
	if limit <= 0 || len(runes) <= limit {
		return s
	}
	return string(runes[:limit]) + fmt.Sprintf("\n[truncated: showing %d of %d characters; the full result is in the run log]", limit, len(runes))
}

// asker routes ask_human through the run's broker, logging the question and
// the answer.
type asker struct {
	r             *Run
	f             *Frame
	assistantText string
}

func (a *asker) Ask(ctx context.Context, q tools.Question) (string, error) {
	p := event.AskHumanPayload{Role: a.f.Role, RoleID: a.f.RoleID, Question: q.Question, Context: q.Context, AssistantText: a.assistantText}
	for _, o := range q.Options {
		p.Options = append(p.Options, event.Option{Label: o.Label, Description: o.Description})
	}
	question := a.r.opts.Broker.open(a.r.id, p)
	a.r.emit(event.AskHuman, question.AskHumanPayload)
	_ = a.r.log.Sync()
	if a.r.opts.Park && !a.r.writerStarted {
		a.r.opts.Broker.withdraw(question.ID)
		parked := question.AskHumanPayload
		a.r.parked = &parked
		a.r.Stop()
		return "", errors.New("the run is parked until the operator answers")
	}
	answer, err := a.r.opts.Broker.wait(ctx, question)
	if err != nil {
		return "", fmt.Errorf("no answer: %w", err)
	}
	a.r.emit(event.HumanAnswer, event.HumanAnswerPayload{ID: question.ID, Answer: answer.text, Source: answer.source})
	return answer.text, nil
}

// runMeta gives the git tools the run's base commit.
type runMeta Run

func (m *runMeta) GitBase() string {
	r := (*Run)(m)
	r.metaMu.Lock()
	defer r.metaMu.Unlock()
	return r.meta.GitBase
}

func (m *runMeta) SetGitBase(commit string) error {
	r := (*Run)(m)
	r.metaMu.Lock()
	r.meta.GitBase = commit
	r.metaMu.Unlock()
	return r.saveMeta()
}
