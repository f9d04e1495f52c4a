package runner

import (
	"os"
	"testing"

	"github.com/guildhall/guildhall/internal/mcptest"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// TestMain lets the test binary serve as the sandbox helper: runs in these
// tests start it (inside bubblewrap) for their shell commands.
func TestMain(m *testing.M) {
	sandbox.RunHelperIfAsked()
	code := m.Run()
	mcptest.Cleanup() // the MCP test server, built once per test binary
	os.Exit(code)
}
