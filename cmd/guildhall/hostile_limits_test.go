package main

// The sandbox's per-command limits through the real binary: a command
// that forks without bound is stopped by the process limit, its result
// says so and how to raise it, and the run goes on to its next command.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/sandboxtest"
)

func TestHostileSandboxForkBombIsStopped(t *testing.T) {
	sandboxtest.Need(t)
	h := newHostile(t)
	ws := h.workspace("forkbomb")
	dep := filepath.Join(h.root, "operator-deployment.json")
	h.write(dep, `{"sandbox": {"limits": {"processes": 64, "fileSizeMiB": 1}}}`, 0o644)
	res, results := h.shellRun(ws, []string{"--deployment", dep},
		"f() { f & f & wait; }; f",
		"head -c 3000000 /dev/zero > big; ls -l big | cut -d' ' -f5",
		"echo still here; ps -e --no-headers | wc -l",
	)
	if res.code != 0 || len(results) != 3 {
		t.Fatalf("the run did not go on after the fork bomb: %s", res)
	}
	note := "stopped: the command exceeded the sandbox's process limit (64); raise sandbox.limits.processes in your deployment.json"
	if got, _ := results[0]["stderr"].(string); !strings.Contains(got, note) || results[0]["timedOut"] == true {
		t.Errorf("the fork bomb's result does not say which limit stopped it: %v", results[0])
	}
	if got, _ := results[1]["stderr"].(string); !strings.Contains(got, "file-size limit (1 MiB); raise sandbox.limits.fileSizeMiB") ||
		results[1]["stdout"] != "1048576\n" {
		t.Errorf("the file-size limit: %v", results[1])
	}
	// The helper as the sandbox's pid 1, this command's sh, ps and wc:
	// nothing of the bomb is left.
	if results[2]["stdout"] != "still here\n4\n" {
		t.Errorf("after the fork bomb: %v", results[2])
	}
	h.assertSafe()
}
