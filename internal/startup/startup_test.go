package startup

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestTheCollectorIsOffUntilDone(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set; this test checks the default setting")
	}
	// The default TestMain never calls Done, so the collector has been off
	// since this package initialised, as it is before main in the binary.
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("before Done the collector's setting is %d, want -1 (off)", got)
	}
	Done()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("after Done the setting is %d, want the default 100", got)
	}
}
