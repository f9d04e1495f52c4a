package main

// Detach and attach against the real binary: a console in tmux loses its
// terminal mid-run, the run goes on, and two terminals attach to it over
// the HTTP API with the token of the discovery file. Plus the errors of
// attach, and discovery files an attacker (or a crash) left in the way.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/proctest"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/web/discovery"
)

// attachTmux is a private tmux server running the binary in its panes.
type attachTmux struct {
	t      *testing.T
	h      *hostile
	socket string
}

func newAttachTmux(t *testing.T, h *hostile) *attachTmux {
	t.Helper()
	needTmux(t)
	a := &attachTmux{t: t, h: h, socket: fmt.Sprintf("gh-attach-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-L", a.socket, "kill-server").Run()
		// A console whose terminal hangs up detaches and goes on with its
		// run (a question may wait for an answer for ever): stop what the
		// test started, so that no test leaves a console behind.
		for _, pid := range proctest.Matching(h.root) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return a
}

func (a *attachTmux) tmux(args ...string) string {
	a.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", a.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		a.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start runs the binary with args as the only process of a new session's
// pane (so that closing the pane hangs up on it), stderr to a file.
func (a *attachTmux) start(name, stderr string, args ...string) {
	a.t.Helper()
	env := a.h.env("TERM=xterm-256color")
	parts := []string{"exec", "env", "-i"}
	for _, e := range env {
		if !strings.HasPrefix(e, "TERM=dumb") {
			parts = append(parts, shellQuote(e))
		}
	}
	parts = append(parts, shellQuote(a.h.bin))
	for _, arg := range args {
		parts = append(parts, shellQuote(arg))
	}
	a.tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "30", strings.Join(parts, " ")+" 2>"+shellQuote(stderr))
}

func (a *attachTmux) capture(name string) string {
	out, _ := exec.Command("tmux", "-L", a.socket, "capture-pane", "-p", "-t", name).CombinedOutput()
	return string(out)
}

// waitFor polls a pane until it shows every string.
func (a *attachTmux) waitFor(name string, what ...string) string {
	a.t.Helper()
	screen, ok := showing(90*time.Second, func() string { return a.capture(name) }, what)
	if !ok {
		a.t.Fatalf("pane %s never showed %q; last screen:\n%s", name, what, screen)
	}
	return screen
}

// waitUntil polls cond (a safety net for a background process, not a
// timing assertion).
func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// discoveryDir is where the operator's discovery files are in h's
// environment.
func (h *hostile) discoveryDir() string {
	return filepath.Join(h.home, ".local", "state", "guildhall", "run")
}

func alivePID(pid int) bool { return syscall.Kill(pid, 0) == nil }

func readFile(t *testing.T, path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestDetachAndAttachUnderTmux: the demo asks its question in a tmux pane;
// the pane is killed (SIGHUP); the run goes on headless and says how to
// attach; two terminals attach, both see the question, and both answer at
// once: one answer wins, the other terminal is told. The run completes
// with one human_answer and a complete log, and the console exits.
func TestDetachAndAttachUnderTmux(t *testing.T) {
	h := newHostile(t)
	tm := newAttachTmux(t, h)
	ws := filepath.Join(h.root, "demo")
	console := filepath.Join(h.root, "console.stderr")
	tm.start("console", console, "demo", "--speed", "0.5", "--into", ws)
	tm.waitFor("console", "Question", "Should this run only fix the failing tests")

	canon, err := discovery.Canonical(ws)
	if err != nil {
		t.Fatal(err)
	}
	var rec discovery.Record
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(h.discoveryDir(), discovery.FileName(canon)))), &rec); err != nil {
		t.Fatalf("the console published no discovery file: %v", err)
	}
	if !strings.HasPrefix(rec.URL, "http://127.0.0.1:") {
		t.Errorf("the console serves at %q, want loopback", rec.URL)
	}
	// The terminal goes away: killing the session closes the pane's pty.
	tm.tmux("kill-session", "-t", "console")
	waitUntil(t, "the detach message", 20*time.Second, func() bool {
		return strings.Contains(readFile(t, console), "the terminal went away")
	})
	if !alivePID(rec.PID) {
		t.Fatalf("the console died with its terminal:\n%s", readFile(t, console))
	}
	msg := readFile(t, console)
	runIDs, _ := os.ReadDir(filepath.Join(ws, ".orchestration", "runs"))
	if len(runIDs) != 1 {
		t.Fatalf("runs: %v", runIDs)
	}
	runID := runIDs[0].Name()
	if want := "guildhall attach " + runID + " --workspace " + ws; !strings.Contains(msg, want) {
		t.Errorf("the detach message does not say %q:\n%s", want, msg)
	}
	if strings.Contains(msg, rec.Token) {
		t.Error("the detach message carries the token")
	}

	// guildhall runs marks it attachable.
	r := h.run(h.root, 0, "runs", "--workspace", ws)
	if !regexp.MustCompile(regexp.QuoteMeta(runID) + `\s+running\s+attach\s`).MatchString(r.stdout) {
		t.Errorf("runs does not mark the run attachable:\n%s", r)
	}

	// The wrong run, and no terminal: errors, while the run waits.
	r = h.run(h.root, 0, "attach", "run-20000101-000000", "--workspace", ws)
	if r.code != exitError || !strings.Contains(r.stderr, "run run-20000101-000000 is not live: the live run of "+canon+" is "+runID) {
		t.Errorf("attach to a run that is not live:\n%s", r)
	}
	r = h.run(h.root, 0, "attach", "--workspace", ws)
	if r.code != exitUsage || !strings.Contains(r.stderr, "needs a terminal") {
		t.Errorf("attach without a terminal:\n%s", r)
	}

	tm.start("a", filepath.Join(h.root, "a.stderr"), "attach", "--workspace", ws)
	tm.start("b", filepath.Join(h.root, "b.stderr"), "attach", runID, "--workspace", ws)
	for _, p := range []string{"a", "b"} {
		tm.waitFor(p, "Attached to run "+runID, "Should this run only fix the failing tests", "1. Only fix the failing tests")
	}
	tm.tmux("send-keys", "-t", "a", "1")
	tm.tmux("send-keys", "-t", "b", "2")
	time.Sleep(300 * time.Millisecond)
	// Both press enter in one tmux command: as close to at once as two
	// terminals get.
	tm.tmux("send-keys", "-t", "a", "Enter", ";", "send-keys", "-t", "b", "Enter")
	var told string
	waitUntil(t, "a terminal told the question was answered elsewhere", 30*time.Second, func() bool {
		for _, p := range []string{"a", "b"} {
			if strings.Contains(tm.capture(p), "answered from another client") {
				told = p
				return true
			}
		}
		return false
	})
	for _, p := range []string{"a", "b"} {
		// The Enter of the terminal that lost can land after the answer
		// closed its question, on the run's view, where Enter opens the
		// selected step's card; that card would hide the result card.
		// When the run has already finished, the card on top is the
		// result itself, which Escape would close.
		if sc := tm.capture(p); !strings.Contains(sc, "esc close") || strings.Contains(sc, "Result · "+runID) {
			tm.waitFor(p, "Result · "+runID, "success")
			continue
		}
		tm.tmux("send-keys", "-t", p, "Escape")
		// The result may have opened between the look and the Escape,
		// which then closed it: r opens it again.
		waitUntil(t, "pane "+p+" to show the result", 90*time.Second, func() bool {
			sc := tm.capture(p)
			if strings.Contains(sc, "Result · "+runID) && strings.Contains(sc, "success") {
				return true
			}
			if strings.Contains(sc, "r shows the result") {
				tm.tmux("send-keys", "-t", p, "r")
			}
			return false
		})
	}

	// The run completed, with every event, once.
	waitUntil(t, "the run's end", 60*time.Second, func() bool {
		return strings.Contains(readFile(t, filepath.Join(ws, ".orchestration", "runs", runID, "meta.json")), `"status": "success"`)
	})
	counts, answer := logCounts(t, filepath.Join(ws, ".orchestration", "runs", runID, "log.jsonl"))
	if counts[event.HumanAnswer] != 1 || counts[event.AskHuman] != 1 || counts[event.ConsoleDetached] != 1 || counts[event.RunStatus] != 1 {
		t.Errorf("log counts %v: want one ask_human, one human_answer, one console_detached, one run_status", counts)
	}
	if answer.Source != "attach" {
		t.Errorf("the answer came from %q, want attach", answer.Source)
	}
	wantAnswer := map[string]string{"a": "Also look at accented letters", "b": "Only fix the failing tests"}[told]
	if answer.Answer != wantAnswer {
		t.Errorf("pane %s was told it lost, but the winning answer is %q (want the other pane's %q)", told, answer.Answer, wantAnswer)
	}

	// Idle and detached, the console exits and removes its file; the
	// attached terminals say so, and quit.
	waitUntil(t, "the console's exit", 30*time.Second, func() bool { return !alivePID(rec.PID) })
	if _, err := os.Stat(filepath.Join(h.discoveryDir(), discovery.FileName(canon))); !os.IsNotExist(err) {
		t.Errorf("the discovery file outlived the console: %v", err)
	}
	r = h.run(h.root, 0, "runs", "--workspace", ws)
	if !regexp.MustCompile(regexp.QuoteMeta(runID)+`\s+success\s+standard`).MatchString(r.stdout) || strings.Contains(r.stdout, "attach") {
		t.Errorf("runs after the run:\n%s", r)
	}
	tm.tmux("send-keys", "-t", "a", "Escape") // the result card covers the banner
	tm.waitFor("a", "Detached: the console stopped answering")
	tm.tmux("send-keys", "-t", "a", "q")
	h.assertSafe()
}

// logCounts reads a run's log: every line must be a well-formed event, in
// order, from run_started to run_status.
func logCounts(t *testing.T, path string) (map[event.Type]int, event.HumanAnswerPayload) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[event.Type]int{}
	var answer event.HumanAnswerPayload
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, line := range lines {
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Type == "" {
			t.Fatalf("log line %d is not an event: %v\n%s", i, err, line)
		}
		counts[e.Type]++
		if e.Type == event.HumanAnswer {
			_ = e.Decode(&answer)
		}
		if (i == 0) != (e.Type == event.RunStarted) || (i == len(lines)-1) != (e.Type == event.RunStatus) {
			t.Errorf("log line %d is %s: the log must open with run_started and end with run_status", i, e.Type)
		}
	}
	return counts, answer
}

// TestAttachErrors: no console, a stale discovery file, consoles live
// elsewhere (listed), a bad run id, and discovery files that are not what
// they should be (a planted link, a file others can read).
func TestAttachErrors(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("here")
	canon, err := discovery.Canonical(ws)
	if err != nil {
		t.Fatal(err)
	}
	dir := h.discoveryDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(workspace string, pid int, mode os.FileMode) string {
		t.Helper()
		b, _ := json.Marshal(discovery.Record{URL: "http://127.0.0.1:1/", Token: "tok-" + fmt.Sprint(pid), PID: pid, Workspace: workspace})
		p := filepath.Join(dir, discovery.FileName(workspace))
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}

	r := h.run(ws, 0, "attach")
	if r.code != exitError || !strings.Contains(r.stderr, "no live console in "+canon) || strings.Contains(r.stderr, "live elsewhere") {
		t.Errorf("no console:\n%s", r)
	}

	// A pid that is gone: a console killed before it could clean up.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	write(canon, dead.Process.Pid, 0o600)
	r = h.run(ws, 0, "attach")
	if r.code != exitError || !strings.Contains(r.stderr, "is stale") || !strings.Contains(r.stderr, fmt.Sprintf("pid %d has ended", dead.Process.Pid)) {
		t.Errorf("stale file:\n%s", r)
	}
	os.Remove(filepath.Join(dir, discovery.FileName(canon)))

	// Two consoles live elsewhere (this test's pid is alive), one stale,
	// one with a hostile workspace name: the live ones are listed, and the
	// name is shown stripped.
	other1, other2 := filepath.Join(h.root, "one"), filepath.Join(h.root, "two\x1b]0;pwned\x07")
	write(other1, os.Getpid(), 0o600)
	write(other2, os.Getpid(), 0o600)
	write(filepath.Join(h.root, "gone"), dead.Process.Pid, 0o600)
	r = h.run(ws, 0, "attach")
	if r.code != exitError || !strings.Contains(r.stderr, "2 consoles are live elsewhere") || !strings.Contains(r.stderr, other1) ||
		strings.Contains(r.stderr, filepath.Join(h.root, "gone")) || strings.Contains(r.stderr, "\x1b") {
		t.Errorf("consoles elsewhere:\n%q", r.stderr)
	}

	// A discovery file others can read is refused, and so is a link
	// planted at the name (to a record of the attacker's console).
	write(canon, os.Getpid(), 0o644)
	r = h.run(ws, 0, "attach")
	if r.code != exitError || !strings.Contains(r.stderr, "open to other users") {
		t.Errorf("a 0644 discovery file:\n%s", r)
	}
	name := filepath.Join(dir, discovery.FileName(canon))
	os.Remove(name)
	planted := filepath.Join(h.root, "planted.json")
	b, _ := json.Marshal(discovery.Record{URL: "http://127.0.0.1:1/", Token: "attacker", PID: os.Getpid(), Workspace: canon})
	if err := os.WriteFile(planted, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(planted, name); err != nil {
		t.Fatal(err)
	}
	r = h.run(ws, 0, "attach")
	if r.code != exitError || !strings.Contains(r.stderr, "symbolic link") {
		t.Errorf("a planted link:\n%s", r)
	}

	r = h.run(ws, 0, "attach", "../../etc/passwd")
	if r.code != exitUsage || !strings.Contains(r.stderr, "is not of the form run-YYYYMMDD-HHMMSS") {
		t.Errorf("a bad run id:\n%s", r)
	}
	h.assertSafe()
}
