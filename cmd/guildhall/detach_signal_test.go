package main

// The end of a console that lost its terminal, on the real binary in
// tmux: the demo on its temporary workspace ends with its terminal and
// removes the folder; a detached console obeys SIGTERM as an attached one
// does (a wind-down to a resumable point, a second signal stops at once),
// and one whose question waits past detach.idleTimeout stops, resumable.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/web/discovery"
)

// consolePID reads the pid of the console serving ws from its discovery
// file.
func consolePID(t *testing.T, h *hostile, ws string) int {
	t.Helper()
	canon, err := discovery.Canonical(ws)
	if err != nil {
		t.Fatal(err)
	}
	var rec discovery.Record
	path := filepath.Join(h.discoveryDir(), discovery.FileName(canon))
	waitUntil(t, "the console's discovery file", 30*time.Second, func() bool {
		return json.Unmarshal([]byte(readFile(t, path)), &rec) == nil && rec.PID > 0
	})
	return rec.PID
}

// detachAtQuestion starts a console on ws with script in a tmux pane,
// waits for its question, and kills the pane: the console detaches. It
// returns the console's pid and its standard error's file.
func detachAtQuestion(t *testing.T, h *hostile, tm *attachTmux, ws, script, question string) (int, string) {
	t.Helper()
	stderr := filepath.Join(h.root, filepath.Base(ws)+".stderr")
	tm.start("c", stderr, "--workspace", ws, "--provider", "script", "--script", script, "Decide whether to ship")
	tm.waitFor("c", question)
	pid := consolePID(t, h, ws)
	tm.tmux("kill-session", "-t", "c")
	waitUntil(t, "the detach message", 20*time.Second, func() bool {
		return strings.Contains(readFile(t, stderr), "the terminal went away")
	})
	if !alivePID(pid) {
		t.Fatalf("the console died with its terminal:\n%s", readFile(t, stderr))
	}
	return pid, stderr
}

// assertResumable checks the run is left resumable and resumes it
// headless to its end.
func assertResumable(t *testing.T, h *hostile, ws, script string) {
	t.Helper()
	id := onlyRun(t, ws)
	r := h.run(ws, 0, "runs", "--workspace", ws)
	if regexp.MustCompile(regexp.QuoteMeta(id) + `\s+\S+\s+attach\s`).MatchString(r.stdout) {
		t.Errorf("the stopped run is still listed live:\n%s", r)
	}
	r = h.run(ws, 90*time.Second, "resume", id, "--workspace", ws, "--provider", "script", "--script", script, "--no-input")
	if r.code != 0 {
		t.Fatalf("resume %s: %s", id, r)
	}
	m, err := store.Workspace{Dir: ws}.ReadMeta(id)
	if err != nil || m.Status != store.StatusSuccess {
		t.Errorf("after the resume the run is %v (%v), want success", m, err)
	}
}

// TestHungUpDemoEndsAndRemovesItsWorkspace: the demo on its temporary
// workspace asks its question; the pane is killed. Nobody could attach to
// a run in a folder that goes with the process, so the demo ends and the
// folder is gone, instead of waiting for ever.
func TestHungUpDemoEndsAndRemovesItsWorkspace(t *testing.T) {
	h := newHostile(t)
	tm := newAttachTmux(t, h)
	stderr := filepath.Join(h.root, "demo.stderr")
	tm.start("demo", stderr, "demo", "--speed", "0")
	tm.waitFor("demo", "Question", "Should this run only fix the failing tests")
	m := regexp.MustCompile(`demo workspace: (\S+)`).FindStringSubmatch(readFile(t, stderr))
	if m == nil {
		t.Fatalf("the demo did not name its workspace:\n%s", readFile(t, stderr))
	}
	dir := m[1]
	t.Cleanup(func() { os.RemoveAll(dir) })
	pid := consolePID(t, h, dir)
	tm.tmux("kill-session", "-t", "demo")
	waitUntil(t, "the hung-up demo's exit", 15*time.Second, func() bool { return !alivePID(pid) })
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the demo's temporary workspace outlived it: %v", err)
	}
	msg := readFile(t, stderr)
	if !strings.Contains(msg, "the demo stops and its temporary workspace is removed") || strings.Contains(msg, "Attach with") {
		t.Errorf("the demo's last word:\n%s", msg)
	}
}

// TestDetachedConsoleStopsAtSIGTERM: a detached console waiting on its
// question gets SIGTERM (or SIGINT). A pending question is a resumable point: the run
// stops there, the process exits well within the 30 s of the wind-down,
// and the run resumes.
func TestDetachedConsoleStopsAtSIGTERM(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			h := newHostile(t)
			tm := newAttachTmux(t, h)
			ws := h.workspace("signal")
			script := askScript(t, 0)
			pid, stderr := detachAtQuestion(t, h, tm, ws, script, "Ship it as it is?")
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "the exit at "+sig.String(), 30*time.Second, func() bool { return !alivePID(pid) })
			if msg := readFile(t, stderr); !strings.Contains(msg, "winding down") {
				t.Errorf("%s did not wind the run down:\n%s", sig, msg)
			}
			assertResumable(t, h, ws, script)
		})
	}
}

// TestDetachedConsoleStopsAtASecondSIGTERM: a detached console is in a
// long model call. The first SIGTERM winds down (the call may take its
// 30 s); a second one stops the run at once, resumable.
func TestDetachedConsoleStopsAtASecondSIGTERM(t *testing.T) {
	h := newHostile(t)
	tm := newAttachTmux(t, h)
	ws := h.workspace("sigterm2")
	// The orchestrator thinks for ten minutes before it asks.
	script := writeScript(t, map[string][][]map[string]any{"orchestrator": {
		{{"name": "ask_human", "args": map[string]any{"question": "Ship it as it is?"}}},
		finishTurn("success", "Shipped."),
	}})
	stderr := filepath.Join(h.root, "slow.stderr")
	tm.start("c", stderr, "--workspace", ws, "--provider", "script", "--script", withDelay(t, script, 0, 10*time.Minute), "Decide whether to ship")
	waitUntil(t, "the run's start", 30*time.Second, func() bool {
		ids, _ := store.Workspace{Dir: ws}.ListRunIDs()
		return len(ids) == 1
	})
	tm.waitFor("c", "Decide whether to ship")
	pid := consolePID(t, h, ws)
	tm.tmux("kill-session", "-t", "c")
	waitUntil(t, "the detach message", 20*time.Second, func() bool {
		return strings.Contains(readFile(t, stderr), "the terminal went away")
	})
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the wind-down", 10*time.Second, func() bool { return strings.Contains(readFile(t, stderr), "winding down") })
	if !alivePID(pid) {
		t.Fatalf("the first SIGTERM did not give the run its wind-down:\n%s", readFile(t, stderr))
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Well under the 30 s the first signal allows.
	waitUntil(t, "the exit at the second SIGTERM", 10*time.Second, func() bool { return !alivePID(pid) })
	assertResumable(t, h, ws, script)
}

// withDelay rewrites a script so that turn i of the orchestrator waits d.
func withDelay(t *testing.T, script string, i int, d time.Duration) string {
	t.Helper()
	var s map[string]map[string][]map[string]any
	if err := json.Unmarshal([]byte(readFile(t, script)), &s); err != nil {
		t.Fatal(err)
	}
	s["roles"]["orchestrator"][i]["delayMs"] = d.Milliseconds()
	b, _ := json.Marshal(s)
	path := filepath.Join(t.TempDir(), "delayed.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDetachedConsoleIdleTimeout: with detach.idleTimeout "2s" in the
// operator's deployment.json, a detached console whose question nobody
// answers stops the run there and exits; the run resumes.
func TestDetachedConsoleIdleTimeout(t *testing.T) {
	h := newHostile(t)
	tm := newAttachTmux(t, h)
	cfg := filepath.Join(h.home, ".config", "guildhall")
	h.write(filepath.Join(cfg, "deployment.json"), `{"detach": {"idleTimeout": "2s"}}`, 0o600)
	ws := h.workspace("idle")
	script := askScript(t, 0)
	pid, stderr := detachAtQuestion(t, h, tm, ws, script, "Ship it as it is?")
	waitUntil(t, "the idle console's exit", 30*time.Second, func() bool { return !alivePID(pid) })
	id := onlyRun(t, ws)
	if msg := readFile(t, stderr); !strings.Contains(msg, "question for 2s (detach.idleTimeout); the run stops here, resumable: guildhall resume "+id) {
		t.Errorf("the idle stop is not explained:\n%s", msg)
	}
	if log := readFile(t, filepath.Join(ws, ".orchestration", "runs", id, "log.jsonl")); !strings.Contains(log, "no one answered its question for 2s while the console was detached (detach.idleTimeout)") {
		t.Errorf("the run's log does not say why it stopped:\n%s", log)
	}
	assertResumable(t, h, ws, script)
}
