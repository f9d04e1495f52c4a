package bench

import (
	"os"
	"testing"

	"github.com/guildhall/guildhall/tools/sandbox"
)

// TestMain lets the test binary serve as the sandbox helper: the runs and
// validations of these tests start it (inside bubblewrap).
func TestMain(m *testing.M) {
	sandbox.RunHelperIfAsked()
	os.Exit(m.Run())
}
