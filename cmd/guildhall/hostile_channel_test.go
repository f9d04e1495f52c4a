package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/sandboxtest"
)

// The workspace ships a program that tries to take the sandbox helper's
// channel (pidfd_getfd on PID 1 and every process it sees, /proc/PID/fd,
// an inherited socket) and writes forged "all tests passed" frames on
// whatever it gets. On the real binary, the failing command is still
// reported as failing, the next result is still its own, and the run
// ends normally.
func TestHostileSandboxChannelCannotBeTaken(t *testing.T) {
	sandboxtest.Need(t)
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the attacking program")
	}
	h := newHostile(t)
	ws := h.workspace("channel")
	if out, err := exec.Command(cc, "-O1", "-o", filepath.Join(ws, "takechannel"), "../../tools/sandbox/testdata/takechannel.c").CombinedOutput(); err != nil {
		t.Fatalf("build the attacking program: %v\n%s", err, out)
	}
	res, results := h.shellRun(ws, nil, "./takechannel; echo REAL-TWO; exit 7", "echo THREE")
	if res.code != 0 || len(results) != 2 {
		t.Fatalf("%s", res)
	}
	// The forged frames the program writes on its own shell's pipes are
	// its own output, and appear in its stdout as such; what must not
	// change is the result: its exit code, and the next call's.
	first := results[0]
	if code, _ := first["exitCode"].(float64); code != 7 || !strings.Contains(first["stdout"].(string), "REAL-TWO") || !strings.Contains(first["stdout"].(string), "taken=0\n") {
		t.Errorf("the attacked command's result: %v", first)
	}
	if results[1]["stdout"] != "THREE\n" {
		t.Errorf("the next command's result is %v (shifted by a forged frame?)", results[1])
	}
}
