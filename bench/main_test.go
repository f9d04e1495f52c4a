package bench

import (
	"os"
	"testing"

	"github.com/guildhall/guildhall/tools/sandbox"
)

// TestMain lets the test binary serve as the sandbox helper: the runs and
// validations of these tests start it (inside bubblewrap). It also plays
// the other user of the host in the relay's tests (relayProbeEnv).
func TestMain(m *testing.M) {
	sandbox.RunHelperIfAsked()
	if os.Getenv(relayProbeEnv) != "" {
		os.Exit(relayProbe())
	}
	os.Exit(m.Run())
}
