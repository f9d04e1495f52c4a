package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Each limit stops a command that runs into it, the result says which
// limit and how to raise it, and the sandbox serves the next command.
func TestLimitsStopRunawayCommands(t *testing.T) {
	needBwrap(t)
	cases := []struct {
		name    string
		limits  LimitsConfig
		command string
		note    string
	}{
		// Every child forks two and waits: :(){ :|:& };: in dash.
		{"fork bomb", LimitsConfig{Processes: 64}, "f() { f & f & wait; }; f",
			"stopped: the command exceeded the sandbox's process limit (64); raise sandbox.limits.processes"},
		{"fork loop", LimitsConfig{Processes: 64}, "while :; do sleep 30 & done",
			"stopped: the command exceeded the sandbox's process limit (64); raise sandbox.limits.processes"},
		{"file too large", LimitsConfig{FileSizeMiB: 1}, "exec head -c 3000000 /dev/zero > big",
			"stopped: the command exceeded the sandbox's file-size limit (1 MiB); raise sandbox.limits.fileSizeMiB"},
		{"file too large, then more", LimitsConfig{FileSizeMiB: 1}, "head -c 3000000 /dev/zero > big; echo status $?",
			"the command probably ran into the sandbox's file-size limit (1 MiB); raise sandbox.limits.fileSizeMiB"},
		{"CPU spin", LimitsConfig{CPUSeconds: 1}, "while :; do :; done",
			"stopped: the command exceeded the sandbox's CPU time limit (1 s per process); raise sandbox.limits.cpuSeconds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb, ws := openSandbox(t, Config{Limits: c.limits})
			start := time.Now()
			res, err := sb.Run(context.Background(), Script{Dir: ws, Command: c.command, Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 60 * time.Second, MaxChars: 2000})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("stopped after %s", time.Since(start))
			if res.TimedOut || !strings.Contains(res.Stderr, c.note) {
				t.Errorf("want %q in the result: %+v", c.note, res)
			}
			if out := run(t, sb, ws, "echo alive; ps -e --no-headers | wc -l"); out != "alive\n4\n" {
				t.Errorf("after the limit, the sandbox answered %q (want alive and 4 processes: the helper as pid 1, sh, ps, wc)", out)
			}
		})
	}
}

// Within the limits a command runs as before, with the limits in place
// and out of its reach.
func TestLimitsDefaults(t *testing.T) {
	needBwrap(t)
	sb, ws := openSandbox(t, Config{})
	out := run(t, sb, ws, "ulimit -t; ulimit -f; ulimit -v; ulimit -t unlimited 2>&1 >/dev/null | wc -l")
	if out != "600\n2097152\nunlimited\n1\n" {
		t.Errorf("limits inside the sandbox: %q", out)
	}
}

func TestLimitsConfig(t *testing.T) {
	if _, err := NewPolicy(Config{Limits: LimitsConfig{Processes: -1}}); err == nil || !strings.Contains(err.Error(), "sandbox.limits.processes -1") {
		t.Errorf("a negative limit: %v", err)
	}
	if _, err := NewPolicy(Config{Limits: LimitsConfig{FileSizeMiB: 1 << 50}}); err == nil || !strings.Contains(err.Error(), "sandbox.limits.fileSizeMiB") {
		t.Errorf("a limit that would overflow: %v", err)
	}
	p, err := NewPolicy(Config{Limits: LimitsConfig{CPUSeconds: 30}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Limits(), (LimitsConfig{CPUSeconds: 30, FileSizeMiB: DefaultFileSizeMiB, Processes: DefaultProcesses}); got != want {
		t.Errorf("limits %+v, want %+v", got, want)
	}
	cases := []struct {
		name       string
		ws, base   LimitsConfig
		wantLooser string
	}{
		{"nothing set", LimitsConfig{}, LimitsConfig{}, ""},
		{"lower than the defaults", LimitsConfig{CPUSeconds: 10, Processes: 100, FileSizeMiB: 5, AddressSpaceMiB: 4096}, LimitsConfig{}, ""},
		{"above the defaults", LimitsConfig{Processes: 5000, CPUSeconds: 601}, LimitsConfig{}, "cpuSeconds processes"},
		{"above the operator's", LimitsConfig{AddressSpaceMiB: 9000}, LimitsConfig{AddressSpaceMiB: 8000}, "addressSpaceMiB"},
		{"within the operator's raised limit", LimitsConfig{Processes: 3000}, LimitsConfig{Processes: 4000}, ""},
	}
	for _, c := range cases {
		if got := strings.Join(c.ws.Looser(c.base), " "); got != c.wantLooser {
			t.Errorf("%s: looser %q, want %q", c.name, got, c.wantLooser)
		}
	}
}
