package tools

import (
	"os"
	"testing"

	"github.com/guildhall/guildhall/tools/sandbox"
)

// TestMain lets the test binary serve as the sandbox helper, so the tools
// can be tested confined by real bubblewrap.
func TestMain(m *testing.M) {
	sandbox.RunHelperIfAsked()
	code := m.Run()
	probe.Remove()
	os.Exit(code)
}
