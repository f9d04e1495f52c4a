package main

import (
	"testing"
	"time"
)

// A hang-up that came before the screen ended is always seen, however
// little the console waits: the screen ended because of it.
func TestHungUpSeesAnEarlierHangUp(t *testing.T) {
	cs := &consoleSignals{hup: make(chan struct{})}
	if cs.hungUp(0) {
		t.Fatal("hungUp without a hang-up")
	}
	began := time.Now()
	if cs.hungUp(50 * time.Millisecond) {
		t.Fatal("hungUp without a hang-up")
	}
	if time.Since(began) < 50*time.Millisecond {
		t.Error("hungUp did not wait for a late signal")
	}
	close(cs.hup)
	for i := 0; i < 1000; i++ {
		if !cs.hungUp(0) {
			t.Fatalf("attempt %d missed the hang-up", i)
		}
	}
}
