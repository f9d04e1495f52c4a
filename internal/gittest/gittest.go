// Package gittest runs the host's real git, unhardened, for tests that
// build repositories as fixtures (hostile ones included): with no system
// or global configuration of the machine's and a fixed author, so that a
// fixture is the same on every machine. It is imported only by tests.
package gittest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Run runs git with args in dir and returns its output, trimmed; a
// failure fails the test with git's output.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
