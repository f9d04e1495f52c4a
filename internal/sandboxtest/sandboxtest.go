// Package sandboxtest is what the tests that run commands in the real
// sandbox share, in whichever package they live: whether this machine can
// run the default sandbox. Where bubblewrap cannot run the test is skipped,
// saying why; under CI=true, which installs it, the test fails instead, so
// a broken CI machine never passes the sandbox tests by skipping them. It
// is imported only by _test files.
package sandboxtest

import (
	"os"
	"testing"

	"github.com/guildhall/guildhall/tools/sandbox"
)

// Policy is the default sandbox policy, once host has shown it can run
// it; otherwise the test is skipped (failed under CI).
func Policy(t testing.TB, host *sandbox.Host) sandbox.Policy {
	t.Helper()
	p, err := sandbox.NewPolicy(sandbox.Config{})
	if err != nil {
		t.Fatalf("the default sandbox policy: %v", err)
	}
	if err := host.Check(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run the sandbox tests: %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
	return p
}

// Need is Policy on a new host, for a test that only needs to know the
// sandbox runs here.
func Need(t testing.TB) {
	t.Helper()
	Policy(t, sandbox.NewHost())
}
