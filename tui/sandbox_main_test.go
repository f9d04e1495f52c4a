package tui

import (
	"os"
	"testing"

	"github.com/guildhall/guildhall/tools/sandbox"
)

// TestMain lets the test binary serve as the sandbox helper: runs in these
// tests start it (inside bubblewrap) for their shell commands. It also
// serves as the console the tmux tests run in a real terminal.
func TestMain(m *testing.M) {
	sandbox.RunHelperIfAsked()
	runTmuxConsoleIfAsked()
	os.Exit(m.Run())
}
