package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// DefaultQueuePoll is how often an idle scheduler looks at queue.json for
// items added by other processes (a CLI `guildhall queue add`).
const DefaultQueuePoll = 5 * time.Second

// SchedulerOptions tune a Scheduler. The zero value is usable.
type SchedulerOptions struct {
	// Poll is the slow poll of an idle scheduler (DefaultQueuePoll when 0).
	Poll time.Duration
	// OnDispatch is called when an item's run has started, OnSettle when an
	// item left active (done, needs_input, error, or back to waiting). Both
	// run on the scheduler's goroutine and must not block for long.
	OnDispatch func(store.QueueItem)
	OnSettle   func(store.QueueItem)
}

// Scheduler runs a workspace's queue through a Session, one run at a time:
// whenever the session is idle it marks the head waiting item active,
// submits it as a parking run with a briefing, waits for the outcome and
// records it on the item. The web and terminal clients call its
// passthroughs (Add, Edit, MoveTo, MoveBy, Cancel, Requeue, Answer, List,
// Get) so that every change wakes it and reaches their Watch channels.
//
// Only one scheduler may drive a session; the workspace lock already keeps
// other processes from running any, so they only edit queue.json.
type Scheduler struct {
	sess *Session
	q    *store.Queue
	opts SchedulerOptions
	kick chan struct{}

	mu       sync.Mutex
	running  bool
	done     chan struct{}
	problem  error
	watchers map[int]chan struct{}
	nextW    int
	// held stops dispatching while the endpoint has never answered.
	held *EndpointError
	// tampered stops dispatching for good: a queued run's sandbox channel
	// was forged, so the workspace is hostile and runs nothing more.
	tampered *TamperedError
}

// NewScheduler makes a scheduler for sess; Start or Drain runs it.
func NewScheduler(sess *Session, opts SchedulerOptions) *Scheduler {
	if opts.Poll <= 0 {
		opts.Poll = DefaultQueuePoll
	}
	return &Scheduler{
		sess: sess, q: sess.Workspace().Queue(), opts: opts,
		kick: make(chan struct{}, 1), watchers: map[int]chan struct{}{},
	}
}

// Queue is the store queue the scheduler runs.
func (s *Scheduler) Queue() *store.Queue { return s.q }

// Start recovers items a crash left active, then runs the queue in the
// background until ctx ends. Runs are started with ctx: cancelling it
// stops a live queued run at its next safe point, resumable, and its item
// stays active until the next start resumes it. A recovery error is
// returned, but the loop runs regardless (it retries on every idle step).
func (s *Scheduler) Start(ctx context.Context) error {
	if err := s.claim(); err != nil {
		return err
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.done = done
	s.mu.Unlock()
	rerr := s.Recover(ctx)
	go func() {
		defer close(done)
		defer s.release()
		s.loop(ctx)
	}()
	return rerr
}

// Done is closed when a started scheduler's loop has ended (nil before
// Start).
func (s *Scheduler) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// Drain recovers, then processes the queue in the caller's goroutine until
// no item waits and no run is live (headless `guildhall queue run`).
func (s *Scheduler) Drain(ctx context.Context) error {
	if err := s.claim(); err != nil {
		return err
	}
	defer s.release()
	if err := s.Recover(ctx); err != nil {
		return err
	}
	for {
		progressed, err := s.step(ctx)
		s.notify()
		if err != nil {
			return err
		}
		if !progressed {
			return nil
		}
	}
}

func (s *Scheduler) claim() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return errors.New("the queue scheduler is already running")
	}
	s.running = true
	return nil
}

func (s *Scheduler) release() {
	s.mu.Lock()
	s.running = false
	s.mu.Unlock()
}

// Kick wakes the scheduler to look at the queue now.
func (s *Scheduler) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Problem is the error of the scheduler's last step (a malformed
// queue.json, say), nil when it went well.
func (s *Scheduler) Problem() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.problem
}

// Watch returns a channel that receives a (coalesced) signal whenever the
// queue changed through this scheduler, and a function to stop watching.
// Changes made by other processes show up on the scheduler's slow poll.
func (s *Scheduler) Watch() (<-chan struct{}, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextW
	s.nextW++
	ch := make(chan struct{}, 1)
	s.watchers[id] = ch
	return ch, func() {
		s.mu.Lock()
		delete(s.watchers, id)
		s.mu.Unlock()
	}
}

func (s *Scheduler) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// changed notifies watchers and, when wake is set, the loop.
func (s *Scheduler) changed(wake bool) {
	s.notify()
	if wake {
		s.Kick()
	}
}

// List returns the queue's items in order.
func (s *Scheduler) List() ([]store.QueueItem, error) { return s.q.List() }

// Get returns one item.
func (s *Scheduler) Get(id string) (store.QueueItem, error) { return s.q.Get(id) }

// Add queues a task at the tail and wakes the scheduler.
func (s *Scheduler) Add(ctx context.Context, spec store.QueueSpec) (store.QueueItem, error) {
	it, err := s.q.Add(ctx, spec)
	if err == nil {
		s.changed(true)
	}
	return it, err
}

// Edit changes a waiting item's task or effort.
func (s *Scheduler) Edit(ctx context.Context, id string, e store.QueueEdit) (store.QueueItem, error) {
	it, err := s.q.Edit(ctx, id, e)
	if err == nil {
		s.changed(false)
	}
	return it, err
}

// MoveTo moves a waiting item to a 0-based position among waiting items.
func (s *Scheduler) MoveTo(ctx context.Context, id string, pos int) (store.QueueItem, error) {
	it, err := s.q.MoveTo(ctx, id, pos)
	if err == nil {
		s.changed(false)
	}
	return it, err
}

// MoveBy moves a waiting item delta places (negative: towards the head).
func (s *Scheduler) MoveBy(ctx context.Context, id string, delta int) (store.QueueItem, error) {
	it, err := s.q.MoveBy(ctx, id, delta)
	if err == nil {
		s.changed(false)
	}
	return it, err
}

// Cancel cancels a waiting or needs_input item.
func (s *Scheduler) Cancel(ctx context.Context, id string) (store.QueueItem, error) {
	it, err := s.q.Cancel(ctx, id)
	if err == nil {
		s.changed(false)
	}
	return it, err
}

// Requeue returns a settled or needs_input item to the tail and wakes the
// scheduler.
func (s *Scheduler) Requeue(ctx context.Context, id string) (store.QueueItem, error) {
	it, err := s.q.Requeue(ctx, id)
	if err == nil {
		s.changed(true)
	}
	return it, err
}

// Answer answers a needs_input item, returning it to the head of the
// waiting items, and wakes the scheduler.
func (s *Scheduler) Answer(ctx context.Context, id, answer string) (store.QueueItem, error) {
	it, err := s.q.Answer(ctx, id, answer)
	if err == nil {
		s.changed(true)
	}
	return it, err
}

// SubmitOrQueue starts sub at once when the session is idle (an operator
// is present: the run does not park), and otherwise queues it at the tail
// instead of failing with ErrRunInProgress. Exactly one of runID and
// queued is set on success.
func (s *Scheduler) SubmitOrQueue(ctx context.Context, sub Submission) (runID string, queued *store.QueueItem, err error) {
	// A follow-up typed the moment a result card shows starts at once: the
	// finished run only has its records left to write.
	if s.sess.awaitConclusion(5 * time.Second) {
		runID, err = s.sess.Submit(ctx, sub)
		if err == nil {
			s.changed(false)
			return runID, nil, nil
		}
		if !errors.Is(err, ErrRunInProgress) {
			return "", nil, err
		}
	}
	it, err := s.Add(ctx, store.QueueSpec{Task: sub.Task, Effort: sub.Effort, LogLevel: sub.LogLevel, ContinuesFrom: sub.ContinuesFrom})
	if err != nil {
		return "", nil, err
	}
	return "", &it, nil
}

func (s *Scheduler) loop(ctx context.Context) {
	poll := time.NewTicker(s.opts.Poll)
	defer poll.Stop()
	for {
		progressed, err := s.step(ctx)
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		s.problem = err
		s.mu.Unlock()
		s.notify()
		if progressed && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-poll.C:
		}
	}
}

// step does one unit of work: wait out the live run and settle its item,
// or repair stale active items, or dispatch the head waiting item and see
// it through. progressed is false when there was nothing to do.
func (s *Scheduler) step(ctx context.Context) (progressed bool, err error) {
	if _, busy := s.sess.Active(); busy {
		return true, s.waitAndSettle(ctx)
	}
	repaired, err := s.repair(ctx, nil)
	if err != nil || repaired {
		return repaired, err
	}
	if held := s.endpointHold(); held != nil {
		return false, held
	}
	s.mu.Lock()
	tampered := s.tampered
	s.mu.Unlock()
	if tampered != nil {
		return false, tampered
	}
	item, ok, err := s.q.ClaimNext(ctx)
	if err != nil || !ok {
		return false, err
	}
	sub := Submission{
		Task: item.DispatchTask(), Effort: item.Effort, LogLevel: item.LogLevel,
		ContinuesFrom: item.ContinuesFrom, Briefing: QueueBriefing(s.sess.Workspace(), item), Park: true,
	}
	runID, err := s.sess.Submit(ctx, sub)
	if errors.Is(err, ErrRunInProgress) {
		// Someone started a run between the look and the submit: the item
		// waits at the head for that run to end.
		_, uerr := s.q.Unclaim(ctx, item.ID)
		return true, uerr
	}
	if err != nil {
		it, ferr := s.q.Finish(ctx, item.ID, store.QueueOutcome{RunStatus: store.StatusError, Error: "the run could not start: " + err.Error()})
		if ferr == nil {
			s.settled(it)
		}
		return true, ferr
	}
	it, err := s.q.MarkActive(ctx, item.ID, runID)
	if err != nil {
		return true, err
	}
	if s.opts.OnDispatch != nil {
		s.opts.OnDispatch(it)
	}
	s.notify()
	return true, s.waitAndSettle(ctx)
}

// waitAndSettle waits for the live run and records its outcome on the
// item it belongs to, if any.
func (s *Scheduler) waitAndSettle(ctx context.Context) error {
	out, werr := s.sess.Wait(ctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if out.RunID == "" {
		return werr
	}
	item, ok, err := s.itemOfRun(out.RunID)
	if err != nil || !ok {
		return err
	}
	if out.Endpoint != nil {
		// The endpoint never answered: a setup problem of this process,
		// not the task's. The item waits again at the head, and nothing
		// more is dispatched until the endpoint answers.
		if _, err := s.q.Unclaim(ctx, item.ID); err != nil {
			return err
		}
		held := &EndpointError{Unanswered: out.Endpoint}
		s.mu.Lock()
		s.held = held
		s.mu.Unlock()
		s.notify()
		return held
	}
	if out.Stopped && werr == nil {
		// Left resumable: the item stays active until its run resumes.
		return nil
	}
	o := store.QueueOutcome{RunID: out.RunID, RunStatus: out.Status}
	if werr != nil {
		o.RunStatus, o.Error = store.StatusError, werr.Error()
	}
	if c := out.Card; c != nil {
		o.Summary = c.Summary
		if c.Error != nil && o.Error == "" {
			o.Error = c.Error.Message
		}
	}
	if out.Parked != nil {
		o.Question = queueQuestion(*out.Parked)
	}
	it, err := s.q.Finish(ctx, item.ID, o)
	if err != nil {
		return err
	}
	if c := out.Card; c != nil && c.Error != nil && c.Error.Kind == SandboxTamperedKind {
		s.mu.Lock()
		s.tampered = &TamperedError{RunID: out.RunID}
		s.mu.Unlock()
	}
	s.settled(it)
	return nil
}

// TamperedError is the scheduler's problem once a queued run stopped
// with sandbox_tampered: something in the workspace forged the sandbox's
// results, so no later item runs in it. Drain returns it.
type TamperedError struct {
	RunID string
}

func (e *TamperedError) Error() string {
	return "the queue stopped: run " + e.RunID + "'s sandbox was tampered with, so the workspace is hostile; look at the run (`guildhall show " + e.RunID + "`) before running anything in it"
}

// EndpointError is the scheduler's problem while its session's endpoint
// has never answered: a queued run ended endpoint_unreachable, its item
// waits again, and no other item is dispatched until the endpoint answers
// (Session.MarkAnswered, a successful call). Drain returns it.
type EndpointError struct {
	Unanswered *provider.Unanswered
}

func (e *EndpointError) Error() string {
	return e.Unanswered.Explain() + "\nThe queue holds until the endpoint answers."
}

// endpointHold is the hold on dispatching, nil once the endpoint answered.
func (s *Scheduler) endpointHold() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		return nil
	}
	if s.sess.EndpointAnswered() {
		s.held = nil
		return nil
	}
	return s.held
}

func (s *Scheduler) settled(it store.QueueItem) {
	if s.opts.OnSettle != nil {
		s.opts.OnSettle(it)
	}
	s.notify()
}

func (s *Scheduler) itemOfRun(runID string) (store.QueueItem, bool, error) {
	items, err := s.q.List()
	if err != nil {
		return store.QueueItem{}, false, err
	}
	for _, it := range items {
		if it.Status == store.QueueActive && it.RunID == runID {
			return it, true, nil
		}
	}
	return store.QueueItem{}, false, nil
}
