package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workspace plants programs where an unconfined (mode none) server's
// resolution might find them: a relative PATH entry (./node_modules/.bin,
// an empty entry), an absolute PATH entry inside the workspace, a command
// line naming a workspace file, and a link outside that leads back in.
// None of them runs: the relative entries are skipped (the operator's own
// program is found further on), and a program inside the workspace is
// refused with a message naming it.
func TestUnconfinedServerNeverRunsAWorkspaceProgram(t *testing.T) {
	sb, ws := openSandbox(t, Config{Mode: "none"})
	marker := filepath.Join(t.TempDir(), "planted-ran")
	planted := "#!/bin/sh\ntouch " + marker + "\nexec /bin/cat\n"
	for _, p := range []string{"node_modules/.bin/cat", "cat", "bin/srv", "srv.sh"} {
		full := filepath.Join(ws, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(planted), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(t.TempDir(), "srv")
	if err := os.Symlink(filepath.Join(ws, "srv.sh"), outside); err != nil {
		t.Fatal(err)
	}
	policy := serverPolicy(t, Config{Mode: "none"})

	// Relative and empty PATH entries are skipped: the operator's cat runs.
	for _, path := range []string{"./node_modules/.bin:/usr/bin:/bin", ":/usr/bin:/bin", "node_modules/.bin:/usr/bin:/bin"} {
		out := probeServer(t, sb, ServerSpec{Name: "cat", Argv: []string{"cat"}, Env: []string{"PATH=" + path}, Policy: policy})
		if out != "PING-LINE\n" {
			t.Errorf("PATH=%s: %q", path, out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("PATH=%s ran the workspace's planted cat unconfined", path)
		}
	}
	// Only relative entries: nothing is found, rather than the planted one.
	if _, err := sb.StartServer(ServerSpec{Name: "cat", Argv: []string{"cat"}, Env: []string{"PATH=./node_modules/.bin:."}, Policy: policy}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("PATH of relative entries only: %v", err)
	}
	// A program that resolves inside the workspace is refused.
	for name, spec := range map[string]ServerSpec{
		"absolute PATH entry inside": {Argv: []string{"srv"}, Env: []string{"PATH=" + filepath.Join(ws, "bin") + ":/usr/bin"}},
		"relative command":           {Argv: []string{"./srv.sh"}},
		"absolute command":           {Argv: []string{filepath.Join(ws, "srv.sh")}},
		"link outside leading in":    {Argv: []string{outside}},
	} {
		spec.Name, spec.Policy = "srv", policy
		_, err := sb.StartServer(spec)
		if err == nil || !strings.Contains(err.Error(), "inside the workspace") || !strings.Contains(err.Error(), "srv") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a planted program ran unconfined")
	}
}
