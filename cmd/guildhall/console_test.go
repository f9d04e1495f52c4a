package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmuxConsole drives the real binary in a detached tmux session.
type tmuxConsole struct {
	t    *testing.T
	name string
}

func (c *tmuxConsole) tmux(args ...string) string {
	c.t.Helper()
	out, err := exec.Command("tmux", args...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (c *tmuxConsole) capture() string {
	c.t.Helper()
	out, _ := exec.Command("tmux", "capture-pane", "-p", "-t", c.name).CombinedOutput()
	return string(out)
}

// waitFor polls the pane until it shows every string.
func (c *tmuxConsole) waitFor(what ...string) string {
	c.t.Helper()
	screen, ok := showing(60*time.Second, c.capture, what)
	if !ok {
		c.t.Fatalf("the console never showed %q; last screen:\n%s", what, screen)
	}
	return screen
}

// showing polls capture, for at most limit, until the screen it returns
// shows every string of what. It returns the last screen and whether it
// did: every tmux driver here waits on its pane this way.
func showing(limit time.Duration, capture func() string, what []string) (string, bool) {
	deadline := time.Now().Add(limit)
	var screen string
	for time.Now().Before(deadline) {
		screen = capture()
		ok := true
		for _, w := range what {
			if !strings.Contains(screen, w) {
				ok = false
				break
			}
		}
		if ok {
			return screen, true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return screen, false
}

// waitExitStatus waits for the file a pane's script writes the binary's
// exit status to (`echo $? > status`) and fails unless it is 0, showing
// the binary's standard error, or the screen when it never exits.
func waitExitStatus(t *testing.T, status, stderr string, screen func() string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(status)
		if err == nil {
			if got := strings.TrimSpace(string(b)); got != "0" {
				errOut, _ := os.ReadFile(stderr)
				t.Fatalf("exit status %s\n%s", got, errOut)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console did not exit; screen:\n%s", screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// needTmux skips a test when tmux is missing, and fails it under CI,
// which installs tmux.
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is required under CI")
		}
		t.Skip("tmux not installed")
	}
}

func (c *tmuxConsole) keys(keys ...string) {
	c.t.Helper()
	for _, k := range keys {
		// One key per call: tmux would otherwise send "Escape x" as alt+x.
		c.tmux("send-keys", "-t", c.name, k)
		time.Sleep(80 * time.Millisecond)
	}
}

// TestConsoleUnderTmux builds the binary, runs `guildhall demo --speed 0`
// in a 100x30 tmux pane, answers the question in the modal, waits for the
// result card and quits.
func TestConsoleUnderTmux(t *testing.T) {
	needTmux(t)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "guildhall")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	done := filepath.Join(dir, "exit-status")
	c := &tmuxConsole{t: t, name: fmt.Sprintf("guildhall-test-%d", os.Getpid())}
	script := fmt.Sprintf("TERM=xterm-256color %s demo --speed 0 2>%s; echo $? > %s; sleep 60",
		bin, filepath.Join(dir, "stderr"), done)
	c.tmux("new-session", "-d", "-s", c.name, "-x", "100", "-y", "30", script)
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", c.name).Run() })

	c.waitFor("Question", "Should this run only fix the failing tests", "1. Only fix the failing tests")
	c.keys("1", "Enter")
	c.waitFor("Result · run-", "Status: ✓ success")
	c.keys("Escape")
	c.waitFor("Main run", "Coder", "Finished: success")
	c.keys("q")
	waitExitStatus(t, done, filepath.Join(dir, "stderr"), c.capture)
	// The terminal was restored: the shell's screen is back, not the
	// console's alternate screen.
	if strings.Contains(c.capture(), "Finished: success") {
		t.Errorf("the alternate screen was not left:\n%s", c.capture())
	}
}
