package web

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
)

// flushCounter counts flushes and can end the stream's context at one.
type flushCounter struct {
	n      int
	cancel context.CancelFunc
}

func (f *flushCounter) Flush() {
	f.n++
	if f.cancel != nil {
		f.cancel()
	}
}

// TestPumpSSESendsWhatIsQueuedThenFlushesOnce: a burst of queued values
// reaches the client in order behind one flush, and a send that fails (the
// client went, or /api/stream's client fell behind) ends the stream with
// what was sent before it flushed and nothing after it sent.
func TestPumpSSESendsWhatIsQueuedThenFlushesOnce(t *testing.T) {
	burst := func() *subscriber[int] {
		c := &subscriber[int]{ch: make(chan int, 3)}
		c.ch <- 1
		c.ch <- 2
		c.ch <- 3
		return c
	}
	t.Run("burst", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		fl := &flushCounter{cancel: cancel}
		var sent []int
		pumpSSE(ctx, io.Discard, fl, burst(), func(v int) error { sent = append(sent, v); return nil })
		if !slices.Equal(sent, []int{1, 2, 3}) || fl.n != 1 {
			t.Fatalf("sent %v with %d flushes, want [1 2 3] with 1", sent, fl.n)
		}
	})
	t.Run("failed send", func(t *testing.T) {
		fl := &flushCounter{}
		var sent []int
		pumpSSE(context.Background(), io.Discard, fl, burst(), func(v int) error {
			if v == 2 {
				return errors.New("client gone")
			}
			sent = append(sent, v)
			return nil
		})
		if !slices.Equal(sent, []int{1}) || fl.n != 1 {
			t.Fatalf("sent %v with %d flushes, want [1] with 1", sent, fl.n)
		}
	})
}
