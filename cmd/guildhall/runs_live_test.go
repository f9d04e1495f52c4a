package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunsMarksAHeadlessRunLive: while a headless run goes on, `guildhall
// runs` in another process marks it live (the process holding the
// workspace runs it) but not attachable (no console serves it); once that
// process is killed the mark is gone, though the record still says
// running.
func TestRunsMarksAHeadlessRunLive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_RUNTIME_DIR="+filepath.Join(home, "run"))
	if err := os.MkdirAll(filepath.Join(home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ws")
	run := exec.Command(bin, "demo", "--headless", "--speed", "1", "--no-input", "--sandbox", "none", "--into", dir)
	run.Env = env
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = run.Process.Kill(); _ = run.Wait() }()
	for deadline := time.Now().Add(20 * time.Second); logLines(dir) < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the demo never started its run")
		}
	}
	runs := func() string {
		t.Helper()
		c := exec.Command(bin, "runs", "--workspace", dir)
		c.Env = env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("runs: %v\n%s", err, out)
		}
		return string(out)
	}
	row := regexp.MustCompile(`(?m)^run-\S+\s+running\s+(\S+)\s`)
	out := runs()
	m := row.FindStringSubmatch(out)
	if m == nil || m[1] != "live" {
		t.Fatalf("while the run goes on, runs shows:\n%s\nwant its row marked live", out)
	}
	if strings.Contains(out, "attach") {
		t.Errorf("a headless run without a console is offered for attach:\n%s", out)
	}
	_ = run.Process.Signal(syscall.SIGKILL)
	_ = run.Wait()
	out = runs()
	if m := row.FindStringSubmatch(out); m != nil && (m[1] == "live" || m[1] == "attach") {
		t.Errorf("after the process was killed, runs still shows the run %s:\n%s", m[1], out)
	}
}
