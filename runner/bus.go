package runner

import (
	"sync"

	"github.com/guildhall/guildhall/runner/event"
)

// mustArrive lists the events a subscriber may never miss: a client that
// missed a question could leave a run waiting forever.
func mustArrive(t event.Type) bool {
	switch t {
	case event.AskHuman, event.HumanAnswer, event.RunStatus, event.RunStarted:
		return true
	}
	return false
}

// Bus fans events out to subscribers. Each subscriber has a bounded buffer;
// ordinary events that do not fit are dropped and counted (the subscriber can
// re-read the log by sequence number), while must-arrive events wait for
// room. The bus keeps every persisted event of the current run so a late
// subscriber starts from a complete backlog.
type Bus struct {
	mu      sync.Mutex
	subs    map[*Subscription]struct{}
	backlog []event.Event
	closed  bool
}

// NewBus makes an empty bus.
func NewBus() *Bus { return &Bus{subs: map[*Subscription]struct{}{}} }

// Subscription receives events from a bus.
type Subscription struct {
	C       chan event.Event
	bus     *Bus
	done    chan struct{}
	mu      sync.Mutex
	dropped int64
	once    sync.Once
	// lossless subscribers wait for room instead of dropping.
	lossless bool
}

// Dropped is the number of events this subscriber missed.
func (s *Subscription) Dropped() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Close unsubscribes. C is closed.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		delete(s.bus.subs, s)
		s.bus.mu.Unlock()
		close(s.done)
	})
}

// Subscribe returns the backlog of persisted events so far and a
// subscription that receives every later event, with no gap between them.
func (b *Bus) Subscribe(buffer int) ([]event.Event, *Subscription) {
	return b.subscribe(buffer, false)
}

// SubscribeLossless is Subscribe for consumers that must see every event
// (--json output, the headless printer). The run waits for them, so they
// must keep reading.
func (b *Bus) SubscribeLossless(buffer int) ([]event.Event, *Subscription) {
	return b.subscribe(buffer, true)
}

func (b *Bus) subscribe(buffer int, lossless bool) ([]event.Event, *Subscription) {
	if buffer < 16 {
		buffer = 16
	}
	s := &Subscription{C: make(chan event.Event, buffer), bus: b, done: make(chan struct{}), lossless: lossless}
	b.mu.Lock()
	defer b.mu.Unlock()
	backlog := append([]event.Event(nil), b.backlog...)
	if b.closed {
		close(s.C)
		return backlog, s
	}
	b.subs[s] = struct{}{}
	return backlog, s
}

// Reset starts a new run's backlog.
func (b *Bus) Reset(backlog []event.Event) {
	b.mu.Lock()
	b.backlog = append([]event.Event(nil), backlog...)
	b.mu.Unlock()
}

// Backlog returns a copy of the persisted events of the current run.
func (b *Bus) Backlog() []event.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]event.Event(nil), b.backlog...)
}

// BacklogOf returns the persisted events of the current run whose type
// keep accepts, without copying the rest of a backlog that may hold a
// resumed run's hundred thousand events.
func (b *Bus) BacklogOf(keep func(event.Type) bool) []event.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []event.Event
	for _, e := range b.backlog {
		if keep(e.Type) {
			out = append(out, e)
		}
	}
	return out
}

// Publish delivers e to every subscriber.
func (b *Bus) Publish(e event.Event) {
	b.mu.Lock()
	if !e.Ephemeral {
		b.backlog = append(b.backlog, e)
	}
	subs := make([]*Subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	for _, s := range subs {
		s.deliver(e)
	}
}

func (s *Subscription) deliver(e event.Event) {
	if s.lossless || mustArrive(e.Type) {
		select {
		case s.C <- e:
		case <-s.done:
		}
		return
	}
	select {
	case s.C <- e:
	case <-s.done:
	default:
		s.mu.Lock()
		s.dropped++
		s.mu.Unlock()
	}
}

// Next is the subscription's next event, draining what is buffered once it
// is done; ok is false when nothing is left.
func (s *Subscription) Next() (event.Event, bool) {
	select {
	case e, ok := <-s.C:
		return e, ok
	case <-s.done:
		select {
		case e, ok := <-s.C:
			return e, ok
		default:
			return event.Event{}, false
		}
	}
}

// Done is closed when the subscription is closed.
func (s *Subscription) Done() <-chan struct{} { return s.done }
