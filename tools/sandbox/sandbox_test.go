package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needBwrap skips a test when bubblewrap cannot run here, and fails it
// under CI, which installs bubblewrap. It is internal/sandboxtest's Need,
// written again because sandboxtest imports this package.
func needBwrap(t testing.TB) {
	t.Helper()
	p, _ := NewPolicy(Config{})
	if err := NewHost().Check(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run the sandbox tests: %v", err)
		}
		t.Skip(err)
	}
}

// openSandbox opens a sandbox with cfg on a fresh workspace that has a
// .orchestration folder, as a run's has.
func openSandbox(t testing.TB, cfg Config) (*Sandbox, string) {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".orchestration"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, _ = filepath.EvalSymlinks(ws)
	p, err := NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := NewHost().Open(Options{Policy: p, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb, ws
}

func run(t testing.TB, sb *Sandbox, ws, command string) string {
	t.Helper()
	res, err := sb.Run(context.Background(), Script{Dir: ws, Command: command, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Timeout: 10 * time.Second, MaxChars: 8192})
	if err != nil {
		t.Fatalf("%q: %v", command, err)
	}
	return res.Stdout + res.Stderr
}

// The helper kills every process of a call when it ends (kill(-1) in the
// PID namespace), and only those: it, the namespace's PID 1 (no bwrap
// init), survives to serve the next call, and no zombie is left.
func TestHelperKillsTheCallsProcesses(t *testing.T) {
	needBwrap(t)
	sb, ws := openSandbox(t, Config{})
	run(t, sb, ws, "sleep 300 & setsid sleep 301 & sh -c 'sleep 302 &'; echo started")
	out := run(t, sb, ws, "ps -eo pid=,stat=,args=")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// The helper as pid 1, the command's own sh -c and its ps.
	if len(lines) != 3 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "1 ") || !strings.Contains(lines[0], HelperCommand) ||
		!strings.Contains(lines[1], "sh -c ps -eo") || !strings.Contains(lines[2], "ps -eo") {
		t.Errorf("processes left in the sandbox:\n%s", out)
	}
}

// The helper, as the namespace's init, reaps the orphans a command leaves
// while the command still runs: a command that orphans many short-lived
// processes does not fill the process table with zombies.
func TestHelperReapsOrphansDuringACommand(t *testing.T) {
	needBwrap(t)
	sb, ws := openSandbox(t, Config{})
	out := run(t, sb, ws, `for i in 1 2 3 4 5 6 7 8 9 10; do sh -c 'true & exit 0'; sh -c '(sleep 0.01 &) ; exit 0'; done; sleep 0.5; ps -eo stat= | grep -c '^Z' || true`)
	if strings.TrimSpace(out) != "0" {
		t.Errorf("zombies in the sandbox while the command ran: %q", out)
	}
}

func TestHelperRefusesToRunOutsideTheSandbox(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, HelperCommand)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(out.String(), "only runs inside the sandbox") {
		t.Errorf("%v: %s", err, out.String())
	}
}

// Check fails closed, naming the cause and both fixes.
func TestCheckWithoutBubblewrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	p, _ := NewPolicy(Config{})
	err := NewHost().Check(p)
	if err == nil {
		t.Fatal("the sandbox checked out without bwrap on PATH")
	}
	for _, want := range []string{"bubblewrap (bwrap) is not on PATH", "apt install bubblewrap", "--sandbox none"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if err := NewHost().Check(p.WithMode(None)); err != nil {
		t.Errorf("mode none needs no bubblewrap: %v", err)
	}
	ws := t.TempDir()
	sb, err := NewHost().Open(Options{Policy: p, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	_, err = sb.Run(context.Background(), Script{Dir: ws, Command: "echo hi", Timeout: time.Second, MaxChars: 100})
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "bubblewrap (bwrap) is not on PATH") {
		t.Errorf("a command without bwrap: %v", err)
	}
}

// A git command gets a sandbox of its own: .git writable only when asked,
// no network, the workspace writable, everything else as for the shell.
func TestCommandSandboxesOneProgram(t *testing.T) {
	needBwrap(t)
	sb, ws := openSandbox(t, Config{})
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	try := func(gitWritable bool, script string) (string, error) {
		argv, env, err := sb.Command([]string{"sh", "-c", script}, []string{"PATH=/usr/bin:/bin", "HOME=/nowhere"}, gitWritable)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := try(false, "echo x > .git/f"); err == nil {
		t.Errorf("wrote .git read-only: %s", out)
	}
	if out, err := try(true, "echo x > .git/f && echo w > work.txt && echo $HOME"); err != nil || strings.TrimSpace(out) == "/nowhere" {
		t.Errorf("writable git: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "f")); err != nil {
		t.Error(".git/f missing")
	}
	if out, err := try(true, "cat /proc/net/dev | grep -c :"); err != nil || strings.TrimSpace(out) != "1" {
		t.Errorf("network interfaces besides loopback: %v %q", err, out)
	}
}

// A closed sandbox refuses commands rather than running them unconfined.
func TestClosedSandboxRefuses(t *testing.T) {
	needBwrap(t)
	sb, ws := openSandbox(t, Config{})
	run(t, sb, ws, "echo warm")
	scratch := sb.scratch
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(scratch); err == nil {
		t.Errorf("scratch folder %s left behind", scratch)
	}
	if _, err := sb.Run(context.Background(), Script{Dir: ws, Command: "echo hi", Timeout: time.Second, MaxChars: 100}); err == nil {
		t.Error("a closed sandbox ran a command")
	}
	if _, _, err := sb.Command([]string{"true"}, nil, false); err == nil {
		t.Error("a closed sandbox wrapped a command")
	}
}

// BenchmarkRunEcho is the steady-state cost of run_shell "echo hi" in the
// sandbox: one request to the running helper.
func BenchmarkRunEcho(b *testing.B) {
	needBwrap(b)
	sb, ws := openSandbox(b, Config{})
	run(b, sb, ws, "echo warm")
	b.ResetTimer()
	for b.Loop() {
		if out := run(b, sb, ws, "echo hi"); out != "hi\n" {
			b.Fatal(out)
		}
	}
}

// BenchmarkRunEchoFirstCall is a run's first command: bwrap, the helper's
// start, then the command.
func BenchmarkRunEchoFirstCall(b *testing.B) {
	needBwrap(b)
	for b.Loop() {
		b.StopTimer()
		sb, ws := openSandbox(b, Config{})
		b.StartTimer()
		if out := run(b, sb, ws, "echo hi"); out != "hi\n" {
			b.Fatal(out)
		}
		b.StopTimer()
		_ = sb.Close()
		b.StartTimer()
	}
}

// BenchmarkRunEchoUnconfined is the same command with mode none.
func BenchmarkRunEchoUnconfined(b *testing.B) {
	sb, ws := openSandbox(b, Config{Mode: "none"})
	for b.Loop() {
		if out := run(b, sb, ws, "echo hi"); out != "hi\n" {
			b.Fatal(out)
		}
	}
}

// BenchmarkRunExternalTrue is a command that execs a program, confined
// and not.
func BenchmarkRunExternalTrue(b *testing.B) {
	needBwrap(b)
	for _, mode := range []string{"workspace-write", "none"} {
		b.Run(mode, func(b *testing.B) {
			sb, ws := openSandbox(b, Config{Mode: mode})
			run(b, sb, ws, "true")
			for b.Loop() {
				run(b, sb, ws, "/bin/true")
			}
		})
	}
}

// BenchmarkCheck is the startup probe every command that runs tools pays
// once: a trivial command in the sandbox's namespaces.
func BenchmarkCheck(b *testing.B) {
	needBwrap(b)
	p, _ := NewPolicy(Config{})
	for b.Loop() {
		if err := NewHost().Check(p); err != nil {
			b.Fatal(err)
		}
	}
}
