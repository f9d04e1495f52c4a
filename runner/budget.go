package runner

// Run budgets. Nothing else ends a run whose model goes round in circles:
// a scripted model that lost its place after each compaction once made
// 87,000 tool calls and a 179 MB log in 15 minutes. The budget bounds a
// run's tool calls, its tokens (prompt and completion, as the endpoint
// reports them) and its working time, across resumes. Reaching a limit ends
// the run with error kind budget_exceeded at its next safe point or before
// its next tool call, with the checkpoint kept: `guildhall resume` with a
// higher limit carries on where it stopped.

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// Budget is deployment.json's executor.budget (Guildhall addition): the
// run-level limits, each 0 for none.
type Budget struct {
	// MaxToolCalls bounds the tool calls of every role of the run
	// together (finish aside).
	MaxToolCalls int `json:"maxToolCalls"`
	// MaxTokens bounds prompt plus completion tokens over every model
	// call of the run, as the endpoint reports them.
	MaxTokens int `json:"maxTokens"`
	// MaxWallSeconds bounds the time the run has been working, summed
	// over its executions; time paused by the operator or suspended while
	// the provider is down does not count.
	MaxWallSeconds int `json:"maxWallSeconds"`
}

// DefaultMaxToolCalls is the one limit on by default: generous for a real
// task, a stop for a loop, and the same on fast and slow hardware. Time
// and tokens are off unless set: how long a healthy run takes depends on
// the machine and the model, and what tokens cost on the endpoint
// (docs/operations.md, "Budgets").
const DefaultMaxToolCalls = 2000

// BudgetErrorKind is the error kind of a run its budget ended.
const BudgetErrorKind = "budget_exceeded"

// Usage is what a run has spent, carried across resumes by the checkpoint.
type Usage struct {
	ToolCalls int   `json:"toolCalls"`
	Tokens    int   `json:"tokens"`
	WallMs    int64 `json:"wallMs"`
}

// budgetState counts a run's usage. Tool calls and tokens are counted as
// their events are logged (note); the working time is the time of earlier
// executions plus this one's since its first look, less what was held.
type budgetState struct {
	mu      sync.Mutex
	used    Usage         // WallMs: earlier executions only
	since   time.Time     // this execution's start (set at the first look)
	held    time.Duration // paused or suspended in this execution
	holding int           // nested holds in progress
	heldAt  time.Time     // when the outermost hold began
}

// note counts a logged event: a tool call (finish aside) or a model call's
// tokens.
func (b *budgetState) note(typ event.Type, payload any) {
	switch typ {
	case event.ToolCall:
		if p, ok := payload.(event.ToolCallPayload); ok && p.Tool == "finish" {
			return
		}
		b.mu.Lock()
		b.used.ToolCalls++
		b.mu.Unlock()
	case event.LLMCall:
		if p, ok := payload.(event.LLMCallPayload); ok {
			b.mu.Lock()
			b.used.Tokens += p.Usage.PromptTokens + p.Usage.CompletionTokens
			b.mu.Unlock()
		}
	}
}

// usage is the total so far, the working time up to now.
func (b *budgetState) usage(now time.Time) Usage {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.since.IsZero() {
		b.since = now
	}
	u := b.used
	held := b.held
	if b.holding > 0 {
		held += now.Sub(b.heldAt)
	}
	u.WallMs += max(now.Sub(b.since)-held, 0).Milliseconds()
	return u
}

// hold stops the working time until the returned release is called.
func (b *budgetState) hold(now func() time.Time) (release func()) {
	b.mu.Lock()
	if b.holding == 0 {
		b.heldAt = now()
	}
	b.holding++
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.holding--; b.holding == 0 {
			b.held += now().Sub(b.heldAt)
		}
	}
}

// resume starts from a checkpoint's totals.
func (b *budgetState) resume(u *Usage) {
	if u == nil {
		return
	}
	b.mu.Lock()
	b.used = *u
	b.mu.Unlock()
}

// holdWall keeps the time the run waits (paused, suspended) out of its
// working time: `defer r.holdWall()()`.
func (r *Run) holdWall() func() { return r.budget.hold(r.now) }

// budgetStop ends a run whose budget is spent. It unwinds the role stack
// like errStopped, without finishing any role, so the run stays
// resumable; conclude records it.
type budgetStop struct {
	limit string // the deployment setting: executor.budget.maxToolCalls ...
	max   int64
	used  Usage
}

func (b *budgetStop) Error() string { return "run budget spent: " + b.limit }
func (b *budgetStop) Unwrap() error { return errStopped }

// budgetPoint checks the budget at a safe point (next "") or before the
// tool call next. A finish is never held back: it ends the role. When a
// limit is reached the checkpoint is written as things are, so a resume
// goes on from here, and a *budgetStop is returned.
func (r *Run) budgetPoint(next string) error {
	if next == "finish" {
		return nil
	}
	b := r.opts.Deployment.Executor.Budget
	u := r.budget.usage(r.now())
	var stop *budgetStop
	switch {
	case b.MaxToolCalls > 0 && u.ToolCalls >= b.MaxToolCalls:
		stop = &budgetStop{limit: "executor.budget.maxToolCalls", max: int64(b.MaxToolCalls), used: u}
	case b.MaxTokens > 0 && u.Tokens >= b.MaxTokens:
		stop = &budgetStop{limit: "executor.budget.maxTokens", max: int64(b.MaxTokens), used: u}
	case b.MaxWallSeconds > 0 && u.WallMs >= int64(b.MaxWallSeconds)*1000:
		stop = &budgetStop{limit: "executor.budget.maxWallSeconds", max: int64(b.MaxWallSeconds), used: u}
	default:
		return nil
	}
	if r.handlerDepth == 0 {
		r.checkpoint()
	}
	return stop
}

// budgetFlags are the run flags that set each limit.
var budgetFlags = map[string]string{
	"executor.budget.maxToolCalls":   "--max-tool-calls",
	"executor.budget.maxTokens":      "--max-tokens",
	"executor.budget.maxWallSeconds": "--max-wall",
}

// message says which limit was reached, with the figure, where the limit
// came from, and how to go on.
func (b *budgetStop) message(runID string, d *Deployment) string {
	var spent, limit, higher string
	switch b.limit {
	case "executor.budget.maxToolCalls":
		spent = fmt.Sprintf("made %d tool calls", b.used.ToolCalls)
		limit = fmt.Sprintf("%d tool calls", b.max)
		higher = fmt.Sprintf("--max-tool-calls %d", 2*b.max)
	case "executor.budget.maxTokens":
		spent = fmt.Sprintf("used %d tokens (prompt and completion, as the endpoint reported them)", b.used.Tokens)
		limit = fmt.Sprintf("%d tokens", b.max)
		higher = fmt.Sprintf("--max-tokens %d", 2*b.max)
	default:
		wall := (time.Duration(b.used.WallMs) * time.Millisecond).Round(time.Second)
		spent = fmt.Sprintf("has been working for %s", wall)
		limit = (time.Duration(b.max) * time.Second).String()
		higher = "--max-wall " + (2 * time.Duration(b.max) * time.Second).String()
	}
	from := "the built-in default"
	if o := d.Origin(b.limit); o != "" {
		from = o
		if o != budgetFlags[b.limit] {
			from = b.limit + " in " + o
		}
	}
	return fmt.Sprintf("The run's budget is spent: it %s, and its limit is %s (%s). It stopped there, resumable: `guildhall resume %s %s` carries on with a higher limit.",
		spent, limit, from, runID, higher)
}

// concludeBudget records a run its budget ended: status error with kind
// budget_exceeded in meta.json and the log's run_status, the figures in
// the error's detail, and the checkpoint kept for a resume.
func (r *Run) concludeBudget(b *budgetStop) (Outcome, error) {
	card := errorCard(BudgetErrorKind, b.message(r.id, r.opts.Deployment))
	card.Error.Details, _ = json.Marshal(map[string]any{
		"limit": b.limit, "max": b.max,
		"toolCalls": b.used.ToolCalls, "tokens": b.used.Tokens, "wallSeconds": b.used.WallMs / 1000,
	})
	r.metaMu.Lock()
	end := r.now().UTC()
	r.meta.Status = store.StatusError
	r.meta.EndedAt = &end
	r.meta.Result = metaResult(card)
	r.meta.Error = r.meta.Result.Error
	r.metaMu.Unlock()
	r.concluded.Store(true)
	r.emit(event.RunStatus, event.RunStatusPayload{Status: store.StatusError, Card: &card,
		Reason: "the run's budget is spent; it is resumable from its checkpoint with a higher limit"})
	_ = r.log.Sync()
	if err := r.saveMeta(); err != nil {
		return Outcome{RunID: r.id}, err
	}
	return Outcome{RunID: r.id, Status: store.StatusError, Card: &card}, r.logErr
}

// asBudgetStop finds a budget stop in the error a run unwound with.
func asBudgetStop(err error) (*budgetStop, bool) {
	var b *budgetStop
	return b, errors.As(err, &b)
}

// BudgetStopped reports whether a run ended because its budget was spent,
// and so may be resumed although its status is error.
func BudgetStopped(m *store.Meta) bool {
	return m != nil && m.Status == store.StatusError && m.Error != nil && m.Error.Kind == BudgetErrorKind
}

// reopenBudgetStopped clears the outcome a budget stop recorded, as the
// run goes on.
func reopenBudgetStopped(m *store.Meta) {
	if BudgetStopped(m) {
		m.EndedAt, m.Result, m.Error = nil, nil, nil
	}
}

// checkBudgetValues refuses negative limits.
func checkBudgetValues(c *checker, at func(path ...string) int64, b Budget) {
	for _, l := range []struct {
		name  string
		value int
	}{{"maxToolCalls", b.MaxToolCalls}, {"maxTokens", b.MaxTokens}, {"maxWallSeconds", b.MaxWallSeconds}} {
		if l.value < 0 {
			c.errorf(at("executor", "budget", l.name), "executor.budget.%s must be 0 (no limit) or a positive number", l.name)
		}
	}
}

// budgetDefault is the deployment's budget when nothing sets one.
func budgetDefault() Budget {
	return Budget{MaxToolCalls: DefaultMaxToolCalls}
}
