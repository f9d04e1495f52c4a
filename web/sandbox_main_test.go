package web

import (
	"os"
	"testing"

	"github.com/guildhall/guildhall/tools/sandbox"
)

// TestMain lets the test binary serve as the sandbox helper: runs in these
// tests start it (inside bubblewrap) for their shell commands.
func TestMain(m *testing.M) {
	sandbox.RunHelperIfAsked()
	os.Exit(m.Run())
}
