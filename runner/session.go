package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// Errors a session reports to its clients.
var (
	ErrRunInProgress = errors.New("a run is already in progress in this workspace; wait for it to finish or queue the task")
	ErrRunNotActive  = errors.New("that run is not the one running now")
	ErrInvalidKind   = errors.New("interrupt kind must be inquiry or plan_modification")
	ErrEmptyMessage  = errors.New("the message is empty")
)

// SessionConfig is what a session runs with.
type SessionConfig struct {
	Workspace string
	// Sealer seals and checks the workspace's records (store.Sealer).
	Sealer *store.Sealer
	// Redactor removes secret values from the records (store.Redactor).
	Redactor *store.Redactor
	// WorkspaceConfig is the trust decision each run records.
	WorkspaceConfig *event.WorkspaceConfig
	// WebSearch is web_search's endpoint and key (nil: read from the
	// deployment and the environment at each run's start).
	WebSearch  *tools.WebSearchConfig
	Guild      *Guild
	Deployment *Deployment
	Provider   provider.Provider
	// Models are the endpoints of the deployment's named models.
	Models  map[string]ModelEndpoint
	Tools   tools.Registry
	NoInput bool
	// Sandbox is the process's sandbox host; nil gets a default one.
	Sandbox *sandbox.Host
	// Environ is the base environment of tool subprocesses (see
	// Options.Environ); nil means this process's.
	Environ []string
	// EndpointAnswered says the endpoint answered before the session
	// opened (the start-up model list). Until it has answered in this
	// process, a run whose model calls fail ends as a setup problem
	// (Outcome.Endpoint) instead of suspending.
	EndpointAnswered bool
	// StartProbe is how that model list failed, when it did (for the
	// setup message).
	StartProbe error
}

// Submission is a task submitted to a session.
type Submission struct {
	Task          string `json:"task"`
	Effort        string `json:"effort,omitempty"`
	LogLevel      string `json:"logLevel,omitempty"`
	ContinuesFrom string `json:"continuesFrom,omitempty"`
	Briefing      string `json:"-"`
	// Park ends the run needs_clarification when it asks before any
	// write-capable role has started (queued runs; see Options.Park).
	Park bool `json:"-"`
}

// Session is one workspace served to clients: the terminal console, the
// browser companion and the headless printer all use it. It runs one run
// at a time, owns the event bus and the question broker, and holds the
// workspace lock for its lifetime.
type Session struct {
	cfg    SessionConfig
	ws     store.Workspace
	lock   *store.Lock
	bus    *Bus
	broker *Broker
	health *Health
	// modelHealth is each named model's endpoint health.
	modelHealth map[string]*Health
	notes       []string

	mu      sync.Mutex
	active  *Run
	done    chan struct{}
	outcome Outcome
	err     error
}

// OpenSession takes the workspace lock and returns a session.
func OpenSession(cfg SessionConfig) (*Session, error) {
	ws := store.Workspace{Dir: cfg.Workspace, Seal: cfg.Sealer, Redact: cfg.Redactor}
	lock, err := ws.AcquireLock()
	if err != nil {
		return nil, err
	}
	var notes []string
	if err := ws.EnsureGitExclude(); store.SkippedGitExclude(err) {
		notes = append(notes, err.Error())
	} else if err != nil {
		lock.Release()
		return nil, err
	}
	health := NewHealth()
	if cfg.EndpointAnswered {
		health.markAnswered()
	}
	return &Session{cfg: cfg, ws: ws, lock: lock, bus: NewBus(), broker: NewBroker(), health: health,
		modelHealth: modelHealth(cfg.Models, nil), notes: notes}, nil
}

// Endpoint is what the session's runs use to reach the model: the
// deployment and the provider, with whether the endpoint answered when
// they were chosen and how the start-up model list failed.
type Endpoint struct {
	Deployment *Deployment
	Provider   provider.Provider
	Answered   bool
	Probe      error
}

// Reconfigure replaces the session's deployment and provider (the
// console's edit-settings form). It fails with ErrRunInProgress while a
// run is live: a run keeps the endpoint it started with.
func (s *Session) Reconfigure(e Endpoint) error {
	if e.Deployment == nil || e.Provider == nil {
		return errors.New("reconfigure needs a deployment and a provider")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != nil {
		return ErrRunInProgress
	}
	s.cfg.Deployment, s.cfg.Provider, s.cfg.StartProbe = e.Deployment, e.Provider, e.Probe
	if e.Answered {
		s.health.markAnswered()
	}
	return nil
}

// EndpointAnswered reports whether the endpoint answered in this process.
func (s *Session) EndpointAnswered() bool { return s.health.hasAnswered() }

// MarkAnswered records that the endpoint answered (a probe the client
// made, such as the console's retry).
func (s *Session) MarkAnswered() { s.health.markAnswered() }

// Notes are one-line notices for the operator found while the session was
// opened: a git exclude entry that was not written, and why. Callers print
// each as "note: <text>" after sanitising it (it may quote workspace paths).
func (s *Session) Notes() []string { return append([]string(nil), s.notes...) }

// Workspace is the session's workspace records.
func (s *Session) Workspace() store.Workspace { return s.ws }

// Guild is the session's guild.
func (s *Session) Guild() *Guild {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Guild
}

// ErrGuildFixed is SetGuild's error once a run has started in the session.
var ErrGuildFixed = errors.New("a run has started in this session: its guild is fixed")

// SetGuild replaces the session's guild before its first run. The console
// opens before the endpoint's start-up probe has reported the model's
// window, which decides the guild (the compact seed guild for a small
// one); once any run has started (or resumed), the guild is fixed.
func (s *Session) SetGuild(g *Guild) error {
	if g == nil {
		return errors.New("set guild: no guild")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done != nil {
		return ErrGuildFixed
	}
	s.cfg.Guild = g
	return nil
}

// Deployment is the session's deployment.
func (s *Session) Deployment() *Deployment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Deployment
}

// Subscribe returns the current run's events so far and a subscription to
// every later event (of this and later runs).
func (s *Session) Subscribe(buffer int) ([]event.Event, *Subscription) {
	return s.bus.Subscribe(buffer)
}

// SubscribeLossless is Subscribe for consumers that must see every event.
func (s *Session) SubscribeLossless(buffer int) ([]event.Event, *Subscription) {
	return s.bus.SubscribeLossless(buffer)
}

// Submit starts a run of sub in the background. It fails with
// ErrRunInProgress while another run is live.
func (s *Session) Submit(ctx context.Context, sub Submission) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != nil {
		return "", ErrRunInProgress
	}
	effort := sub.Effort
	if effort == "" {
		effort = s.ws.ReadSettings().Effort
	}
	logLevel := sub.LogLevel
	if logLevel == "" {
		logLevel = s.ws.ReadSettings().LogLevel
	}
	r, err := Create(Options{
		Workspace: s.cfg.Workspace, Sealer: s.cfg.Sealer, Redactor: s.cfg.Redactor, WorkspaceConfig: s.cfg.WorkspaceConfig, WebSearch: s.cfg.WebSearch,
		Guild: s.cfg.Guild, Deployment: s.cfg.Deployment, Provider: s.cfg.Provider,
		Tools: s.cfg.Tools, Task: sub.Task, Effort: effort, LogLevel: logLevel, ContinuesFrom: sub.ContinuesFrom,
		Briefing: sub.Briefing, Park: sub.Park, Bus: s.bus, Broker: s.broker, NoInput: s.cfg.NoInput, Health: s.health,
		Models: s.cfg.Models, ModelHealth: s.modelHealth,
		Sandbox: s.cfg.Sandbox, Environ: s.cfg.Environ, StartProbe: s.cfg.StartProbe,
	})
	if err != nil {
		return "", err
	}
	s.start(ctx, r)
	return r.ID(), nil
}

// Reconcile marks abandoned runs interrupted and reports the newest
// resumable one (see Reconcile).
func (s *Session) Reconcile() (Reconciliation, error) {
	skip := []string{}
	if id, ok := s.Active(); ok {
		skip = append(skip, id)
	}
	return Reconcile(s.ws, s.Guild(), time.Now(), skip...)
}

// ResumeCheckpoint resumes run id from its checkpoint in the background.
// A run whose durable pause-intent marker passed the gates resumes paused.
func (s *Session) ResumeCheckpoint(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != nil {
		return ErrRunInProgress
	}
	r, err := Resume(Options{
		Workspace: s.cfg.Workspace, Sealer: s.cfg.Sealer, Redactor: s.cfg.Redactor, WebSearch: s.cfg.WebSearch,
		Guild: s.cfg.Guild, Deployment: s.cfg.Deployment, Provider: s.cfg.Provider,
		Tools: s.cfg.Tools, Bus: s.bus, Broker: s.broker, NoInput: s.cfg.NoInput, Health: s.health,
		Models: s.cfg.Models, ModelHealth: s.modelHealth,
		Sandbox: s.cfg.Sandbox, Environ: s.cfg.Environ, StartProbe: s.cfg.StartProbe,
	}, id)
	if err != nil {
		return err
	}
	if PauseRequested(s.ws, id) {
		r.RequestPause()
	}
	s.startWith(ctx, r, r.ExecuteResumed)
	return nil
}

func (s *Session) start(ctx context.Context, r *Run) {
	r.armStartSummary(ctx) // the first model reply starts summary.txt (summary.go)
	s.startWith(ctx, r, r.Execute)
}

func (s *Session) startWith(ctx context.Context, r *Run, exec func(context.Context) (Outcome, error)) {
	_ = s.lock.SetRun(r.ID())
	s.active = r
	done := make(chan struct{})
	s.done = done
	go func() {
		out, err := exec(ctx)
		r.settleStartSummary()
		// The bus still holds this run's events: read them before the
		// session can start another run that resets it.
		evs := r.outcomeEvents(out, err)
		s.mu.Lock()
		s.active, s.outcome, s.err = nil, out, err
		s.mu.Unlock()
		_ = s.lock.SetRun("")
		r.summarizeOutcome(ctx, out, err, evs) // best effort, bounded (summary.go)
		close(done)
	}()
}

// awaitConclusion waits, at most limit, for a run whose outcome is already
// decided (its result card is shown) to finish writing its records, and
// reports whether the session is then idle. A run still working is not
// waited for.
func (s *Session) awaitConclusion(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		s.mu.Lock()
		r := s.active
		s.mu.Unlock()
		if r == nil {
			return true
		}
		if !r.concluded.Load() || time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Active returns the id of the live run, if any.
func (s *Session) Active() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil {
		return "", false
	}
	return s.active.ID(), true
}

// Wait blocks until the current run (if any) ends and returns its outcome.
func (s *Session) Wait(ctx context.Context) (Outcome, error) {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return Outcome{}, errors.New("no run was started")
	}
	select {
	case <-done:
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outcome, s.err
}

// Health is the providers' restricted health view: of the endpoint in the
// worst state when the deployment has named models.
func (s *Session) Health() HealthView {
	return worstHealth(s.health, s.modelHealth)
}

// Answer answers a pending question; source names the answering client
// (terminal, browser, stdin). The first answer wins.
func (s *Session) Answer(id, answer, source string) error { return s.broker.Answer(id, answer, source) }

// Unattended makes every pending and later question fail with "no
// operator available": nobody is left to answer.
func (s *Session) Unattended() { s.broker.Unattended() }

// Questions lists the pending questions.
func (s *Session) Questions() []Question { return s.broker.Pending() }

// activeRun returns the live run when its id is runID ("" for any).
func (s *Session) activeRun(runID string) (*Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil || (runID != "" && s.active.ID() != runID) {
		return nil, ErrRunNotActive
	}
	return s.active, nil
}

// Interrupt queues an operator interrupt (inquiry or plan_modification)
// for the live run's next safe point.
func (s *Session) Interrupt(runID, kind, message string) error {
	if kind != "inquiry" && kind != "plan_modification" {
		return ErrInvalidKind
	}
	if strings.TrimSpace(message) == "" {
		return ErrEmptyMessage
	}
	r, err := s.activeRun(runID)
	if err != nil {
		return err
	}
	return r.RequestInterrupt(kind, message)
}

// InterruptPending reports whether an operator interrupt is queued.
func (s *Session) InterruptPending(runID string) bool {
	r, err := s.activeRun(runID)
	return err == nil && r.InterruptPending()
}

// Pause asks the live run to pause at its next safe point.
func (s *Session) Pause(runID string) error { return s.request(runID, (*Run).RequestPause) }

// Resume resumes a paused or suspended live run; a run that is not live
// but resumable (stopped, crashed) is resumed from its checkpoint.
func (s *Session) Resume(runID string) error {
	r, err := s.activeRun(runID)
	if errors.Is(err, ErrRunNotActive) && runID != "" {
		if _, busy := s.Active(); !busy && Resumable(s.ws, runID, s.Guild()) == nil {
			return s.ResumeCheckpoint(context.Background(), runID)
		}
	}
	if err != nil {
		return err
	}
	if r.ResumeFromPause() || r.ResumeFromSuspension() {
		return nil
	}
	return fmt.Errorf("run %s is neither paused nor suspended", r.ID())
}

// Terminate ends the live run at its next safe point with status
// interrupted and its record intact.
func (s *Session) Terminate(runID string) error { return s.request(runID, (*Run).RequestTerminate) }

// request hands send the live run runID names: the controls that cannot
// fail once the run is found share the lookup and its error.
func (s *Session) request(runID string, send func(*Run)) error {
	r, err := s.activeRun(runID)
	if err != nil {
		return err
	}
	send(r)
	return nil
}

// WindDown sends the live run's entry role a marked wind-down directive,
// applied at its next safe point.
func (s *Session) WindDown(message string) error {
	r, err := s.activeRun("")
	if err != nil {
		return err
	}
	return r.RequestInterrupt("notice", message)
}

// Stop cuts the live run short at its next safe point, leaving it
// resumable; the session stays open.
func (s *Session) Stop() {
	if r, err := s.activeRun(""); err == nil {
		r.Stop()
	}
}

// StopBecause is Stop with the reason the run's log records (the
// run_status event's reason).
func (s *Session) StopBecause(reason string) {
	if r, err := s.activeRun(""); err == nil {
		r.StopBecause(reason)
	}
}

// Close stops a live run at its next safe point (leaving it resumable) and
// releases the workspace.
func (s *Session) Close() error {
	s.mu.Lock()
	r, done := s.active, s.done
	s.mu.Unlock()
	if r != nil {
		r.Stop()
	}
	if done != nil {
		<-done // a finished run's summary writer included
	}
	return s.lock.Release()
}
