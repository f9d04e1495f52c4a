package web

import "sync"

// fanout hands each published value to every subscriber without ever
// blocking the publisher (the session's event pump). A subscriber whose
// queue is full misses the value and is marked; its stream decides what
// missing means: a resync notice (/api/events) or a disconnect the client
// resumes from the log (/api/stream).
type fanout[T any] struct {
	size int
	mu   sync.Mutex
	subs map[*subscriber[T]]struct{}
}

// subscriber is one stream's queue.
type subscriber[T any] struct {
	ch     chan T
	mu     sync.Mutex
	missed bool
}

func newFanout[T any](size int) *fanout[T] {
	return &fanout[T]{size: size, subs: map[*subscriber[T]]struct{}{}}
}

func (f *fanout[T]) add() *subscriber[T] {
	s := &subscriber[T]{ch: make(chan T, f.size)}
	f.mu.Lock()
	f.subs[s] = struct{}{}
	f.mu.Unlock()
	return s
}

func (f *fanout[T]) remove(s *subscriber[T]) {
	f.mu.Lock()
	delete(f.subs, s)
	f.mu.Unlock()
}

// send queues v for every subscriber that has room and marks the others.
func (f *fanout[T]) send(v T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		select {
		case s.ch <- v:
		default:
			s.mu.Lock()
			s.missed = true
			s.mu.Unlock()
		}
	}
}

// overflowed reports whether the subscriber has missed a value.
func (s *subscriber[T]) overflowed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.missed
}

// takeMissed reports whether the subscriber missed a value since the last
// call, and clears the mark.
func (s *subscriber[T]) takeMissed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	missed := s.missed
	s.missed = false
	return missed
}
