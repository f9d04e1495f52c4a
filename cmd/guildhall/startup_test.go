package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// The collector is off while packages initialise (internal/startup); the
// main package's init must turn it back on, or every command would run
// without one and grow until the machine ran out of memory.
func TestTheCollectorIsOnOnceInitialisationEnds(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set; this test checks the default setting")
	}
	got := debug.SetGCPercent(100)
	if got != 100 {
		t.Fatalf("after initialisation the collector's setting is %d, want the default 100", got)
	}
}
