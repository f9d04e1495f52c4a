package main

// Alerts on the real binary: a console in a background tmux window rings
// when its question opens (tmux's window bell flag), the operator's
// notify.command gets exactly the alert's kind and the run id (and none
// of the provider keys), the settings turn each off, and a console whose
// terminal went away still runs the command.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/store"
)

// askScript is a run whose orchestrator asks one question (after delay)
// and finishes.
func askScript(t *testing.T, delay time.Duration) string {
	t.Helper()
	script := map[string]any{"roles": map[string]any{"orchestrator": []any{
		map[string]any{"delayMs": delay.Milliseconds(), "toolCalls": []any{map[string]any{"name": "ask_human", "arguments": map[string]any{"question": "Ship it as it is?"}}}},
		map[string]any{"toolCalls": []any{map[string]any{"name": "finish", "arguments": map[string]any{"status": "success", "summary": "Shipped."}}}},
	}}}
	b, _ := json.Marshal(script)
	path := filepath.Join(t.TempDir(), "ask.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// notifySetup writes the operator's deployment.json with notify (as
// JSON) and a recorder program for notify.command, which writes its
// argument count and arguments, one a line, to calls, and its environment
// to env.
func notifySetup(t *testing.T, h *hostile, notify string) (recorder, calls, envFile string) {
	t.Helper()
	calls, envFile = filepath.Join(h.root, "calls"), filepath.Join(h.root, "env")
	recorder = filepath.Join(h.root, "recorder")
	// The environment is written whole (renamed into place) before the
	// call is recorded, so a test that sees the call never reads a
	// half-written or truncated environment.
	body := fmt.Sprintf("#!/bin/sh\nenv > %s.tmp && mv %s.tmp %s\nprintf '%%s\\n' \"$#\" \"$@\" >> %s\n",
		shellQuote(envFile), shellQuote(envFile), shellQuote(envFile), shellQuote(calls))
	if err := os.WriteFile(recorder, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	notify = strings.ReplaceAll(notify, "RECORDER", recorder)
	cfg := filepath.Join(h.home, ".config", "guildhall")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "deployment.json"), []byte(`{"notify": `+notify+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return recorder, calls, envFile
}

// startBehind runs the console in a window of session s that is not the
// current one (the current one runs sleep), as an operator who switched
// away would have it.
func (a *attachTmux) startBehind(s, stderr string, args ...string) {
	a.t.Helper()
	a.tmux("new-session", "-d", "-s", s, "-n", "other", "-x", "100", "-y", "30", "sleep 600")
	a.tmux("new-window", "-d", "-t", s+":", "-n", "console", "exec "+a.binaryLine(args...)+" 2>"+shellQuote(stderr))
}

// binaryLine is the shell command that runs the binary with args in h's
// environment only, on a real terminal.
func (a *attachTmux) binaryLine(args ...string) string {
	parts := []string{"env", "-i"}
	for _, e := range a.h.env("TERM=xterm-256color") {
		if !strings.HasPrefix(e, "TERM=dumb") {
			parts = append(parts, shellQuote(e))
		}
	}
	parts = append(parts, shellQuote(a.h.bin))
	for _, arg := range args {
		parts = append(parts, shellQuote(arg))
	}
	return strings.Join(parts, " ")
}

func (a *attachTmux) bellFlag(target string) string {
	return strings.TrimSpace(a.tmux("display-message", "-p", "-t", target, "#{window_bell_flag}"))
}

func onlyRun(t *testing.T, ws string) string {
	t.Helper()
	ids, _ := store.Workspace{Dir: ws}.ListRunIDs()
	if len(ids) != 1 {
		t.Fatalf("runs: %v", ids)
	}
	return ids[0]
}

func TestAlertsUnderTmux(t *testing.T) {
	h := newHostile(t)
	tm := newAttachTmux(t, h)
	_, calls, envFile := notifySetup(t, h, `{"command": ["RECORDER"]}`)
	ws := h.workspace("alerts")
	stderr := filepath.Join(h.root, "console.stderr")
	tm.startBehind("s", stderr, "--workspace", ws, "--provider", "script", "--script", askScript(t, 0), "Decide whether to ship")

	tm.waitFor("s:console", "Question", "Ship it as it is?")
	waitUntil(t, "the bell flag of the console's window", 20*time.Second, func() bool { return tm.bellFlag("s:console") == "1" })
	if got := tm.bellFlag("s:other"); got != "0" {
		t.Errorf("the current window's bell flag is %s", got)
	}
	id := onlyRun(t, ws)
	waitUntil(t, "notify.command for the question", 20*time.Second, func() bool { return readFile(t, calls) == "2\nquestion\n"+id+"\n" })

	tm.tmux("send-keys", "-t", "s:console", "-l", "yes")
	tm.tmux("send-keys", "-t", "s:console", "Enter")
	tm.waitFor("s:console", "Result · "+id)
	waitUntil(t, "notify.command for the end", 20*time.Second, func() bool {
		return readFile(t, calls) == "2\nquestion\n"+id+"\n2\nsuccess\n"+id+"\n"
	})
	if env := readFile(t, envFile); strings.Contains(env, hostileKey) || !strings.Contains(env, "HOME="+h.home) {
		t.Errorf("notify.command's environment holds a provider key, or not the operator's:\n%s", env)
	}
	tm.tmux("send-keys", "-t", "s:console", "Escape")
	time.Sleep(300 * time.Millisecond)
	tm.tmux("send-keys", "-t", "s:console", "q")
	waitUntil(t, "the console's exit", 20*time.Second, func() bool { return !strings.Contains(tm.tmux("list-windows", "-t", "s"), "console") })
	if s := readFile(t, stderr); strings.Contains(s, "notify.command") {
		t.Errorf("the console reports a failed command:\n%s", s)
	}
}

// TestAlertsTurnedOff: notify.bell false keeps the window's bell flag
// down, and without notify.command nothing runs.
func TestAlertsTurnedOff(t *testing.T) {
	h := newHostile(t)
	tm := newAttachTmux(t, h)
	_, calls, _ := notifySetup(t, h, `{"bell": false, "desktop": "off"}`)
	ws := h.workspace("quiet")
	tm.startBehind("s", filepath.Join(h.root, "console.stderr"), "--workspace", ws, "--provider", "script", "--script", askScript(t, 0), "Decide whether to ship")
	tm.waitFor("s:console", "Question", "Ship it as it is?")
	// The bell would go out with the frame that shows the question.
	time.Sleep(time.Second)
	if got := tm.bellFlag("s:console"); got != "0" {
		t.Errorf("with notify.bell false the window's bell flag is %s", got)
	}
	tm.tmux("send-keys", "-t", "s:console", "-l", "yes")
	tm.tmux("send-keys", "-t", "s:console", "Enter")
	tm.waitFor("s:console", "Result · ")
	if got := tm.bellFlag("s:console"); got != "0" {
		t.Errorf("the end of the run rang: bell flag %s", got)
	}
	if _, err := os.Stat(calls); !os.IsNotExist(err) {
		t.Errorf("a command ran without notify.command: %v", err)
	}
	tm.tmux("send-keys", "-t", "s:console", "q")
}

// TestDetachedConsoleNotifies: the terminal goes away before the
// question; the run goes on headless, and its question reaches the
// operator through notify.command.
func TestDetachedConsoleNotifies(t *testing.T) {
	h := newHostile(t)
	tm := newAttachTmux(t, h)
	_, calls, _ := notifySetup(t, h, `{"command": ["RECORDER", "--from", "guildhall"]}`)
	ws := h.workspace("detached")
	stderr := filepath.Join(h.root, "console.stderr")
	tm.start("console", stderr, "--workspace", ws, "--provider", "script", "--script", askScript(t, 4*time.Second), "Decide whether to ship")
	tm.waitFor("console", "Orchestrator")
	tm.tmux("kill-session", "-t", "console")
	waitUntil(t, "the detach message", 20*time.Second, func() bool { return strings.Contains(readFile(t, stderr), "the terminal went away") })
	id := onlyRun(t, ws)
	waitUntil(t, "notify.command from the detached console", 30*time.Second, func() bool {
		return readFile(t, calls) == "4\n--from\nguildhall\nquestion\n"+id+"\n"
	})
	busy := store.Workspace{Dir: ws}.Holder()
	if busy == nil || !alivePID(busy.PID) {
		t.Fatalf("the detached console is gone: %v\n%s", busy, readFile(t, stderr))
	}
	_ = syscall.Kill(busy.PID, syscall.SIGTERM)
	waitUntil(t, "the console's exit", 30*time.Second, func() bool { return !alivePID(busy.PID) })
	// Stopped to be resumed later, the run alerts nobody.
	if got := readFile(t, calls); got != "4\n--from\nguildhall\nquestion\n"+id+"\n" {
		t.Errorf("notify.command calls after the stop: %q", got)
	}
}
