package sandbox

import (
	"os"
	"testing"
)

// TestMain lets the test binary be its own sandbox helper: the sandbox
// re-executes this binary with HelperCommand inside bwrap.
func TestMain(m *testing.M) {
	RunHelperIfAsked()
	os.Exit(m.Run())
}
