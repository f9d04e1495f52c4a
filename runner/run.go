// Package runner is the executor: it loads a guild and a deployment, runs
// the entry role against a model provider, dispatches tool calls (agent and
// finish included), and records everything in the run's log, meta.json and
// checkpoint. It knows no screen: clients subscribe to its event bus and
// answer through its question broker.
package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// Effort tiers.
var efforts = []string{"quick", "standard", "thorough"}

// ValidEffort reports whether e is an effort tier.
func ValidEffort(e string) bool { return contains(efforts, e) }

// EffortDirective is the exact system text the entry role gets.
func EffortDirective(tier string) string {
	return "Quality level: " + tier + " (one of quick, standard, thorough — quick is fastest and most direct; thorough is slowest and most careful)."
}

// PriorResultHeader is the fixed header of a continuation's reference turn.
func PriorResultHeader(status string) string {
	return "[Prior run result — status: " + status + "]"
}

// Log levels.
const (
	LogFull     = "full"
	LogStandard = "standard"
)

// Options describe one run.
type Options struct {
	Workspace string // absolute workspace directory
	// Sealer seals the records this run writes and checks those it reads
	// (store.Sealer); without one every record is foreign.
	Sealer *store.Sealer
	// Redactor removes the process's secret values (provider keys) from
	// every event, meta.json and the checkpoint; nil redacts nothing.
	Redactor *store.Redactor
	// WorkspaceConfig is the trust decision about the workspace's own
	// configuration, recorded in run_started.
	WorkspaceConfig *event.WorkspaceConfig
	Guild           *Guild
	Deployment      *Deployment
	Provider        provider.Provider
	// Models are the endpoints of the deployment's named models, by name
	// (a guild's role picks one with "model"), and ModelHealth their
	// health, shared across a session's runs (nil: the run keeps its own).
	Models      map[string]ModelEndpoint
	ModelHealth map[string]*Health
	Tools       tools.Registry

	Task          string
	Effort        string
	LogLevel      string
	ContinuesFrom string
	// Briefing is extra platform context for the entry role (the queue's
	// "what ran while you waited").
	Briefing string

	Bus    *Bus
	Broker *Broker
	// NoInput answers ask_human with a "no operator available" tool error.
	NoInput bool
	// Health is shared provider health (a session's); nil means the run
	// keeps its own.
	Health *Health
	// Park ends the run needs_clarification when it asks a question before
	// any role holding a write-capable tool has started (queued runs), so
	// one question never blocks the whole queue.
	Park bool
	// Now is the clock (tests pin it).
	Now func() time.Time
	// WebSearch is web_search's endpoint and key; nil means resolved from
	// the deployment and the environment when the run starts.
	WebSearch *tools.WebSearchConfig
	// Sandbox is the process's sandbox host (cmd/guildhall makes one); nil
	// gets a default one. The policy is Deployment.Sandbox.
	Sandbox *sandbox.Host
	// Environ is the base environment of tool subprocesses (the allowlist
	// still applies); nil means this process's. bench gives each
	// benchmark its own PATH, HOME and TMPDIR.
	Environ []string
	// StartProbe is how the start-up model list failed (nil when it
	// answered or was not tried): part of the message when the endpoint
	// never answers.
	StartProbe error
}

// Outcome is how a run ended.
type Outcome struct {
	RunID  string
	Status string
	Card   *event.Card
	// Stopped is set when the run was cut short (signal, terminal gone)
	// and left resumable rather than finished.
	Stopped bool
	// Parked is the question a parked run stopped on.
	Parked *event.AskHumanPayload
	// Endpoint is set when the run ended because its model endpoint never
	// answered in this process: a setup problem, with what was tried.
	Endpoint *provider.Unanswered
}

// errStopped unwinds the role stack without finishing any role, leaving the
// run resumable from its checkpoint.
var errStopped = errors.New("run stopped")

// Run is one executing run.
type Run struct {
	opts   Options
	id     string
	ws     store.Workspace
	wsTool *tools.Workspace
	// undo keeps the earlier contents of the files the file tools write
	// (undo.go).
	undo   *undoRecorder
	sb     *sandbox.Sandbox
	mcp    *mcpState // nil without MCP servers
	meta   *store.Meta
	metaMu sync.Mutex
	log    *store.LogWriter
	now    func() time.Time

	emitMu  sync.Mutex
	logErr  error
	schemas map[string]*jsonschema.Resolved
	// cpEncoder keeps the last checkpoint's encoded messages.
	cpEncoder checkpointEncoder

	stack        []*Frame
	handlerDepth int
	decisions    map[string]decision
	internal     map[string]internalHandler
	// loggedStart and loggedFinish record, on a resumed run, which
	// role_start and role_finished events the log already holds, with the
	// logged cards, so none is written twice.
	loggedStart  map[string]bool
	loggedFinish map[string]bool
	loggedCards  map[string]event.Card
	// started is what the log says of the call a crash stopped the leaf
	// at, on a resumed run (checkpoint_dispatch.go).
	started dispatchOutcome
	// writerStarted is set once a role holding a write-capable tool has
	// started; parked is the question a parked run stopped on.
	writerStarted  bool
	parked         *event.AskHumanPayload
	ctl            controls
	counter        int
	learnedCeiling int
	// learnedCeilings are the named models' (rolemodel.go).
	learnedCeilings map[string]int
	startedAt       time.Time
	// summary writes summary.txt (summary.go).
	summary summaryState
	// concluded is set once the run's outcome is decided, just before its
	// terminal run_status: the result card is on every screen while the
	// run still writes its records.
	concluded atomic.Bool
	// failing counts failed model calls since the last success (endpoint.go);
	// unanswered is set when the endpoint never answered (errEndpoint), and
	// halt is the card when the relapses ran out (errHalted).
	failing    failStreak
	unanswered *provider.Unanswered
	halt       event.Card
	// budget counts what the run spent against its limits (budget.go).
	budget budgetState
	// acted is set by the run's first tool call; entryImplicit when the
	// entry role finished with a reply without tool calls; textNoted once
	// the operator was told that the endpoint writes tool calls as text.
	acted, entryImplicit, textNoted bool
}

// ID is the run id.
func (r *Run) ID() string { return r.id }

// open fills in the defaults and opens the run's workspace records, for a
// new run and a resumed one alike.
func (o *Options) open() (store.Workspace, error) {
	if err := o.defaults(); err != nil {
		return store.Workspace{}, err
	}
	ws := store.Workspace{Dir: o.Workspace, Seal: o.Sealer, Redact: o.Redactor}
	// A skipped exclude is not fatal; the session's Notes report it.
	if err := ws.EnsureGitExclude(); err != nil && !store.SkippedGitExclude(err) {
		return store.Workspace{}, err
	}
	return ws, nil
}

func (o *Options) defaults() error {
	if o.Guild == nil || o.Deployment == nil || o.Provider == nil {
		return errors.New("run options need a guild, a deployment and a provider")
	}
	if strings.TrimSpace(o.Task) == "" {
		return errors.New("the task is empty; say what the run should do")
	}
	if o.Effort == "" {
		o.Effort = "standard"
	}
	if !ValidEffort(o.Effort) {
		return fmt.Errorf("effort %q is not one of quick, standard, thorough", o.Effort)
	}
	if o.LogLevel == "" {
		// Below the run's choice and the project setting: the
		// deployment's logging.level, as in the original.
		o.LogLevel = cmp.Or(o.Deployment.Logging.Level, LogFull)
	}
	if o.LogLevel != LogFull && o.LogLevel != LogStandard {
		return fmt.Errorf("log level %q is not one of full, standard", o.LogLevel)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Bus == nil {
		o.Bus = NewBus()
	}
	if o.Broker == nil {
		o.Broker = NewBroker()
	}
	if o.Tools == nil {
		o.Tools = tools.Builtins()
	}
	if o.Health == nil {
		o.Health = NewHealth()
	}
	o.ModelHealth = modelHealth(o.Models, o.ModelHealth)
	if err := o.checkModels(); err != nil {
		return err
	}
	if o.WebSearch == nil {
		ws := webSearchConfig(o.Deployment, os.Getenv, secretsDir)
		o.WebSearch = &ws
	}
	// The MCP servers' env and header values may be tokens.
	if s := o.Deployment.MCPSecrets(); len(s) > 0 {
		o.Redactor = o.Redactor.With(s...)
	}
	return nil
}

// Create prepares a new run: its folder, meta.json and log. The caller holds
// the workspace lock. Execute runs it.
func Create(opts Options) (*Run, error) {
	ws, err := opts.open()
	if err != nil {
		return nil, err
	}
	var prior *store.Meta
	if opts.ContinuesFrom != "" {
		m, err := ws.ReadMeta(opts.ContinuesFrom)
		if err != nil {
			return nil, fmt.Errorf("--continue %s: %w", opts.ContinuesFrom, err)
		}
		if m.Foreign {
			// Its task and result would enter the model's history under
			// the platform's own header.
			return nil, fmt.Errorf("--continue %s: %w", opts.ContinuesFrom, ForeignRun(m))
		}
		if !store.Terminal(m.Status) {
			return nil, fmt.Errorf("--continue %s: that run is %s; only a finished run can be continued", opts.ContinuesFrom, m.Status)
		}
		prior = m
	}
	now := opts.Now().UTC()
	id, err := ws.CreateRun(now)
	if err != nil {
		return nil, err
	}
	r := &Run{opts: opts, id: id, ws: ws, now: opts.Now, startedAt: now, schemas: map[string]*jsonschema.Resolved{}}
	r.meta = &store.Meta{
		RunID: id, Task: opts.Task, Effort: opts.Effort, LogLevel: opts.LogLevel,
		Status: store.StatusRunning, StartedAt: now, ContinuesFrom: opts.ContinuesFrom,
		EntryRole: opts.Guild.EntryRole, Model: opts.Deployment.Model.Name, PID: os.Getpid(),
		GuildPath: opts.Guild.Path, GuildHash: opts.Guild.Hash,
		DeploymentFiles: opts.Deployment.Files, DeploymentHash: opts.Deployment.Hash,
		Provider: opts.Deployment.Model.Provider, APIBase: provider.RedactURL(opts.Deployment.Model.APIBase),
	}
	if err := r.open(); err != nil {
		return nil, err
	}
	entry := r.newFrame(opts.Guild.EntryRole, opts.Task, nil)
	entry.Effort = opts.Effort
	entry.History, entry.TaskIndex = r.entryHistory(prior)
	r.stack = []*Frame{entry}
	// A checkpoint before the first event: a crash at any point after it
	// leaves a resumable run.
	r.checkpoint()
	r.opts.Bus.Reset(nil)
	r.emit(event.RunStarted, event.RunStartedPayload{
		RunID: id, Task: opts.Task, Effort: opts.Effort, LogLevel: opts.LogLevel,
		ContinuesFrom: opts.ContinuesFrom, EntryRole: opts.Guild.EntryRole, Model: opts.Deployment.Model.Name,
		WorkspaceConfig: opts.WorkspaceConfig, WindowWarning: WindowWarning(opts.Guild, opts.Deployment),
	})
	r.emit(event.EffortSet, event.EffortSetPayload{Effort: opts.Effort})
	return r, nil
}

func (r *Run) open() error {
	dir, err := r.ws.RunDir(r.id)
	if err != nil {
		return err
	}
	if err := r.ws.WriteMeta(r.meta); err != nil {
		return err
	}
	r.log, err = store.OpenLog(filepath.Join(dir, store.LogFile))
	if err != nil {
		return err
	}
	if r.wsTool, err = tools.OpenWorkspace(r.opts.Workspace); err != nil {
		return err
	}
	r.undo = openUndo(r.ws, r.id)
	if err := r.openSandbox(); err != nil {
		return err
	}
	r.openMCP()
	return nil
}

// entryHistory assembles the entry role's opening messages: the system
// prompt with the effort directive, a continuation's reference turns, and
// the task (with project documentation and the queue briefing).
func (r *Run) entryHistory(prior *store.Meta) ([]provider.Message, int) {
	role := r.opts.Guild.Roles[r.opts.Guild.EntryRole]
	// The directive joins the system prompt rather than following as a
	// second system message: many local chat templates reject a system
	// message anywhere but first.
	sys := strings.TrimRight(role.Prompt, "\n") + "\n\n" + EffortDirective(r.opts.Effort)
	msgs := []provider.Message{{Role: "system", Content: sys}}
	if prior != nil {
		msgs = append(msgs,
			provider.Message{Role: "user", Content: prior.Task},
			provider.Message{Role: "assistant", Content: priorResultText(prior)})
	}
	task := r.opts.Task
	if docs := r.opts.Guild.EntryDocs(r.wsTool); len(docs) > 0 {
		task += "\n\n" + tools.ReadProjectDocs(r.wsTool, docs)
	}
	if r.opts.Briefing != "" {
		task += "\n\n" + r.opts.Briefing
	}
	msgs = append(msgs, provider.Message{Role: "user", Content: task})
	return msgs, len(msgs) - 1
}

// priorResultText is the assistant reference turn of a continuation: the
// fixed header, the result summary, artifacts and the surfaced error
// message. The raw technical detail never enters model history.
func priorResultText(m *store.Meta) string {
	var b strings.Builder
	b.WriteString(PriorResultHeader(m.Status))
	if m.Result != nil {
		if m.Result.Summary != "" {
			b.WriteString("\n\n" + m.Result.Summary)
		}
		if len(m.Result.Artifacts) > 0 {
			b.WriteString("\n\nArtifacts: " + strings.Join(m.Result.Artifacts, ", "))
		}
	}
	if e := m.Error; e != nil && e.Message != "" {
		b.WriteString("\n\nError: " + e.Message)
	} else if m.Result != nil && m.Result.Error != nil && m.Result.Error.Message != "" {
		b.WriteString("\n\nError: " + m.Result.Error.Message)
	}
	return b.String()
}

func (r *Run) newFrame(role, task string, parent *Frame) *Frame {
	r.counter++
	f := &Frame{Role: role, Task: task}
	if parent != nil {
		f.Depth = parent.Depth + 1
		f.Parent, f.ParentID = parent.Role, parent.RoleID
	}
	f.RoleID = fmt.Sprintf("%s-%d-%d", role, f.Depth, r.counter)
	return f
}

// Execute runs the entry role to its finish and records the outcome. A
// cancelled ctx stops the run at the next safe point, leaving it resumable.
func (r *Run) Execute(ctx context.Context) (Outcome, error) {
	defer r.close()
	ctx, cancel := r.begin(ctx)
	defer cancel()
	entry := r.stack[0]
	r.emitRoleStart(entry)
	card, err := r.runFrame(ctx, entry)
	return r.conclude(card, err)
}

// begin starts the sandbox warming and makes ctx cancellable by the
// run's controls (stop, pause), for Execute and ExecuteResumed alike.
func (r *Run) begin(ctx context.Context) (context.Context, context.CancelFunc) {
	r.warmSandbox()
	ctx, cancel := context.WithCancel(ctx)
	r.ctl.mu.Lock()
	r.ctl.cancel = cancel
	r.ctl.mu.Unlock()
	return ctx, cancel
}

func (r *Run) conclude(card event.Card, err error) (Outcome, error) {
	if b, ok := asBudgetStop(err); ok {
		return r.concludeBudget(b)
	}
	if errors.Is(err, errEndpoint) && r.loggedStart != nil {
		// A resumed run keeps its checkpoint: the work in it is worth more
		// than a setup problem of this process.
		r.emit(event.RunStatus, event.RunStatusPayload{Status: store.StatusInterrupted, Reason: "the model endpoint never answered; the run is still resumable from its checkpoint"})
		_ = r.log.Sync()
		return Outcome{RunID: r.id, Status: store.StatusRunning, Stopped: true, Endpoint: r.unanswered}, nil
	}
	if errors.Is(err, errEndpoint) {
		// A fresh run holds nothing worth resuming: it ends marked, with
		// no checkpoint, so nothing offers to resume it later.
		card, err = endpointCard(r.unanswered), nil
		r.unwindAll(card)
	}
	var tamper *sandbox.TamperedError
	if errors.As(err, &tamper) {
		card, err = tamperedCard(tamper), nil
		r.unwindAll(card)
	}
	if errors.Is(err, errHalted) {
		card, err = r.halt, nil
		r.unwindAll(card)
	}
	if errors.Is(err, errStopped) && r.parked != nil {
		card, err = event.Card{Status: store.StatusNeedsClarification, Summary: "Waiting for an answer to: " + r.parked.Question}, nil
		r.unwindAll(card)
	}
	if errors.Is(err, errStopped) && r.terminating() {
		card, err = errorCard("interrupted", "The operator terminated the run."), nil
		r.unwindAll(card)
	}
	if errors.Is(err, errStopped) {
		// The checkpoint of the last safe point stands: anything after it
		// (a request cut short) is replayed on resume.
		r.emit(event.RunStatus, event.RunStatusPayload{Status: store.StatusInterrupted, Reason: r.stopReasonOr("stopped before finishing; resumable from its checkpoint")})
		_ = r.log.Sync()
		return Outcome{RunID: r.id, Status: store.StatusRunning, Stopped: true}, nil
	}
	if err != nil {
		return Outcome{RunID: r.id}, err
	}
	r.finishFrame(r.stack[0], card)
	status := card.Status
	if status != store.StatusSuccess && status != store.StatusNeedsClarification {
		status = store.StatusError
	}
	if card.Error != nil && card.Error.Kind == "interrupted" {
		status = store.StatusInterrupted
	}
	r.metaMu.Lock()
	end := r.now().UTC()
	r.meta.Status = status
	r.meta.EndedAt = &end
	r.meta.Result = metaResult(card)
	if card.Error != nil {
		r.meta.Error = r.meta.Result.Error
	}
	r.metaMu.Unlock()
	r.concluded.Store(true)
	r.emit(event.RunStatus, event.RunStatusPayload{Status: status, Card: &card, NoAction: r.entryImplicit && !r.acted})
	if err := r.saveMeta(); err != nil {
		return Outcome{RunID: r.id}, err
	}
	r.removeCheckpoint()
	return Outcome{RunID: r.id, Status: status, Card: &card, Parked: r.parked, Endpoint: r.unanswered}, r.logErr
}

// unwindAll finishes every frame above the entry role with card, so each
// role_start keeps its role_finished.
func (r *Run) unwindAll(card event.Card) {
	for len(r.stack) > 1 {
		r.finishFrame(r.stack[len(r.stack)-1], card)
	}
}

func metaResult(c event.Card) *store.MetaResult {
	res := &store.MetaResult{Status: c.Status, Summary: c.Summary, Artifacts: c.Artifacts}
	if c.Error != nil {
		res.Error = &store.MetaError{Kind: c.Error.Kind, Message: c.Error.Message, Detail: c.Error.Details}
	}
	return res
}

func (r *Run) saveMeta() error {
	r.metaMu.Lock()
	defer r.metaMu.Unlock()
	return r.ws.WriteMeta(r.meta)
}

func (r *Run) close() {
	r.closeMCP()
	r.closeSandbox()
	if r.log != nil {
		_ = r.log.Close()
	}
	if r.undo != nil {
		r.undo.finish(r.wsTool)
	}
	if r.wsTool != nil {
		_ = r.wsTool.Close()
	}
}

// emit appends an event to the log and publishes it. Emits are serialised
// so log order and bus order agree.
func (r *Run) emit(typ event.Type, payload any) event.Event {
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	e, err := event.New(r.now(), typ, payload)
	if err != nil {
		r.logErr = fmt.Errorf("encode %s event: %w", typ, err)
		return e
	}
	e.Payload = r.opts.Redactor.Redact(e.Payload)
	e.Seq, err = r.log.Append(e.AppendJSON(nil))
	if err != nil && r.logErr == nil {
		r.logErr = fmt.Errorf("write run log: %w", err)
	}
	r.opts.Bus.Publish(e)
	r.budget.note(typ, payload)
	if typ == event.LLMCall {
		r.startSummaryOnce() // the first model reply starts the task-only summary
	}
	return e
}

// publishDelta sends streamed text to live views only.
func (r *Run) publishDelta(roleID string, d provider.Delta) {
	b, _ := json.Marshal(event.LLMDeltaPayload{RoleID: roleID, Content: d.Content, Reasoning: d.Reasoning})
	r.opts.Bus.Publish(event.Event{Seq: -1, Timestamp: r.now().UTC(), Type: event.LLMDelta, Payload: b, Ephemeral: true})
}

// writeCapable are the tools after whose holder starts a queued run no
// longer parks on a question: work may already have changed the workspace.
var writeCapable = []string{"write_file", "edit_file", "git_restore", "run_shell", "typecheck", "test"}

func (r *Run) emitRoleStart(f *Frame) {
	if role := r.opts.Guild.Roles[f.Role]; role != nil {
		for _, t := range writeCapable {
			if role.Grants(t) {
				r.writerStarted = true
			}
		}
		// What an MCP tool changes is the server's business: count it
		// as writing.
		if len(role.MCPGrants()) > 0 {
			r.writerStarted = true
		}
	}
	m := r.modelOf(f.Role)
	r.emit(event.RoleStart, event.RoleStartPayload{
		Role: f.Role, RoleID: f.RoleID, Depth: f.Depth, Task: f.Task, Parent: f.Parent, ParentID: f.ParentID, ParentRoleID: f.ParentID,
		Model: m.cfg.Name, ModelRef: m.name,
	})
}

// finishFrame pops the frame, checkpoints, then logs role_finished: in that
// order a crash can lose the event (a resume logs it) but never log a
// finish the checkpoint would replay.
func (r *Run) finishFrame(f *Frame, card event.Card) {
	if n := len(r.stack); n > 0 && r.stack[n-1] == f {
		r.stack = r.stack[:n-1]
	}
	if len(r.stack) > 0 && r.handlerDepth == 0 {
		r.checkpoint()
	}
	if !r.loggedFinish[f.RoleID] {
		r.emit(event.RoleFinished, event.RoleFinishedPayload{
			Role: f.Role, RoleID: f.RoleID, Depth: f.Depth, Status: card.Status, Summary: card.Summary,
			Artifacts: card.Artifacts, Error: card.Error, Parent: f.Parent, ParentID: f.ParentID, ParentRoleID: f.ParentID,
		})
	}
	_ = r.log.Sync()
}

// backoff waits before retry attempt n (1-based), with jitter.
func backoff(ctx context.Context, n int, retryAfter float64) error {
	d := time.Duration(250*(1<<(min(n, 4)-1))) * time.Millisecond // 0.25 s doubling to 2 s
	if retryAfter > 0 {
		d = time.Duration(retryAfter * float64(time.Second))
		if d > 60*time.Second {
			d = 60 * time.Second
		}
	}
	d += time.Duration(rand.Int64N(int64(d)/4 + 1))
	return provider.Sleep(ctx, d)
}
