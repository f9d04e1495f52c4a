package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// A run whose sandbox channel carries a forged response stops at that
// call with sandbox_tampered, recorded in meta.json and the log; the
// forged "success" is never shown to the model, and nothing after it runs.
func TestForgedSandboxResponseStopsTheRun(t *testing.T) {
	helper := forgingHelper(t)
	g := testGuild(t)
	h := newHarness(t, g, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", call("agent", map[string]string{"role": "coder", "task": "test"})),
			turn("", finishCall("success", "done")),
		},
		"coder": {
			turn("", call("run_shell", map[string]any{"command": "echo REAL-TWO; exit 7"})),
			turn("", call("write_file", map[string]string{"path": "after.txt", "content": "ran on"})),
			turn("", finishCall("success", "all tests pass")),
		},
	})
	h.opts.Tools = tools.Builtins()
	h.opts.Sandbox = sandbox.NewHost().WithExecutable(helper)
	out, evs, meta := h.run()
	if out.Status != store.StatusError || meta.Error == nil || meta.Error.Kind != SandboxTamperedKind {
		t.Fatalf("outcome %s, meta error %+v; want error %s", out.Status, meta.Error, SandboxTamperedKind)
	}
	if !strings.Contains(meta.Error.Message, "tampered") {
		t.Errorf("meta error message %q does not say the sandbox was tampered with", meta.Error.Message)
	}
	var kinds []string
	for _, e := range find(evs, event.ToolResult) {
		var p event.ToolResultPayload
		_ = e.Decode(&p)
		kinds = append(kinds, p.Tool+":"+p.Kind)
		if strings.Contains(string(p.Result), "214 tests passed") {
			t.Errorf("the forged output reached a tool result: %s", p.Result)
		}
	}
	if len(kinds) == 0 || kinds[len(kinds)-1] != "run_shell:"+tools.KindSandboxTampered {
		t.Errorf("tool results %v; want the last to be run_shell:%s", kinds, tools.KindSandboxTampered)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "after.txt")); !os.IsNotExist(err) {
		t.Error("the role went on after its sandbox was tampered with")
	}
	if n := len(h.rec.byRole("coder")); n != 1 {
		t.Errorf("the coder was asked %d times; the run should stop at the tampered call", n)
	}
}

// A queued run whose sandbox channel was forged stops the queue: the next
// item waits and never runs in the hostile workspace, and Drain says why.
func TestTamperedRunStopsTheQueue(t *testing.T) {
	helper := forgingHelper(t)
	h := newQueueHarness(t, map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", call("agent", map[string]string{"role": "coder", "task": "test"})),
			turn("", finishCall("success", "done")),
			turn("", finishCall("success", "the second task ran")),
		},
		"coder": {
			turn("", call("run_shell", map[string]any{"command": "echo REAL-TWO; exit 7"})),
			turn("", finishCall("success", "all tests pass")),
		},
	})
	sess := openSession(t, SessionConfig{Workspace: h.dir, Guild: h.g, Deployment: h.d, Provider: h.rec,
		Tools: tools.Builtins(), Sandbox: sandbox.NewHost().WithExecutable(helper)})
	s := NewScheduler(sess, SchedulerOptions{})
	ctx := context.Background()
	first, _ := s.Add(ctx, store.QueueSpec{Task: "Run the tests"})
	second, _ := s.Add(ctx, store.QueueSpec{Task: "Then do more"})
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var tampered *TamperedError
	if err := s.Drain(dctx); !errors.As(err, &tampered) {
		t.Fatalf("drain: %v; want a TamperedError", err)
	}
	if it := h.item(first.ID); it.Status != store.QueueError || !strings.Contains(it.Error, "tampered") {
		t.Errorf("the tampered item: %+v", it)
	}
	if it := h.item(second.ID); it.Status != store.QueueWaiting || it.RunID != "" {
		t.Errorf("the next item ran in the hostile workspace: %+v", it)
	}
	if n := len(h.runs()); n != 1 {
		t.Errorf("%d runs, want only the tampered one", n)
	}
}

// forgingHelper is the sandbox helper that forges its responses, skipping
// the test where bwrap or the helper's python3 is missing.
func forgingHelper(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap not installed")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3 for the forging helper")
	}
	helper, err := filepath.Abs("testdata/tamper/forging-helper.py")
	if err != nil {
		t.Fatal(err)
	}
	return helper
}
