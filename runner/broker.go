package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/guildhall/guildhall/runner/event"
)

// Question is a pending ask_human question.
type Question struct {
	event.AskHumanPayload
	RunID    string    `json:"runId"`
	AskedAt  time.Time `json:"askedAt"`
	answerCh chan answerMsg
}

// Errors of Broker.Answer.
var (
	ErrUnknownQuestion = errors.New("no such question")
	ErrAlreadyAnswered = errors.New("question already answered")
)

// Broker holds the questions a run is waiting on. Any client (terminal,
// browser, stdin) may answer; the first answer wins and later ones get
// ErrAlreadyAnswered.
type Broker struct {
	mu       sync.Mutex
	next     int
	pending  map[string]*Question
	answered map[string]bool
	// unattended: nobody is left to answer, so questions fail at once.
	unattended bool
}

// errUnattended is the wait error once nobody is left to answer.
var errUnattended = errors.New("no operator is left to answer")

// NewBroker makes an empty broker.
func NewBroker() *Broker {
	return &Broker{pending: map[string]*Question{}, answered: map[string]bool{}}
}

// open registers a question and returns it with its id filled in.
func (b *Broker) open(runID string, p event.AskHumanPayload) *Question {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	p.ID = fmt.Sprintf("q-%s-%d", runID, b.next)
	q := &Question{AskHumanPayload: p, RunID: runID, AskedAt: time.Now().UTC(), answerCh: make(chan answerMsg, 1)}
	if b.unattended {
		q.answerCh <- answerMsg{none: true}
		return q
	}
	b.pending[p.ID] = q
	return q
}

// answerMsg is an answer and the client it came from, or none: nobody
// will answer.
type answerMsg struct {
	text   string
	source string
	none   bool
}

// wait blocks until q is answered or ctx ends.
func (b *Broker) wait(ctx context.Context, q *Question) (answerMsg, error) {
	select {
	case a := <-q.answerCh:
		if a.none {
			return answerMsg{}, errUnattended
		}
		return a, nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, q.ID)
		b.mu.Unlock()
		return answerMsg{}, ctx.Err()
	}
}

// Answer answers a pending question. The first answer wins. source names
// the answering client (terminal, browser, stdin), recorded in the
// human_answer event.
func (b *Broker) Answer(id, answer, source string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, ok := b.pending[id]
	if !ok {
		if b.answered[id] {
			return ErrAlreadyAnswered
		}
		return ErrUnknownQuestion
	}
	delete(b.pending, id)
	b.answered[id] = true
	q.answerCh <- answerMsg{text: answer, source: source}
	return nil
}

// Unattended tells the broker nobody is left to answer (a headless run's
// stdin closed, and no browser is attached): every pending question and
// every later one fails at once, so the asking role gets "no operator
// available" instead of waiting forever.
func (b *Broker) Unattended() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.unattended = true
	for id, q := range b.pending {
		delete(b.pending, id)
		q.answerCh <- answerMsg{none: true}
	}
}

// Pending lists the open questions, oldest first.
func (b *Broker) Pending() []Question {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Question, 0, len(b.pending))
	for _, q := range b.pending {
		out = append(out, *q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AskedAt.Before(out[j].AskedAt) })
	return out
}

// withdraw removes a question nobody will wait on (a parked run's).
func (b *Broker) withdraw(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.pending, id)
}
