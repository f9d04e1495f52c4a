package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildTakeChannel compiles testdata/takechannel.c into dir, or skips.
func buildTakeChannel(t *testing.T, dir string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the attacking program")
	}
	src, err := filepath.Abs("testdata/takechannel.c")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "takechannel")
	if out, err := exec.Command(cc, "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("build the attacking program: %v\n%s", err, out)
	}
	return bin
}

// A command that tries every way to reach the helper's channel
// (pidfd_getfd on PID 1 and on every other process it can see,
// /proc/PID/fd, an inherited descriptor) and writes forged responses
// through whatever it gets does not change what the sandbox reports: not
// its own result, not the next one.
func TestCommandCannotTakeTheHelperChannel(t *testing.T) {
	needBwrap(t)
	sb, ws := openSandbox(t, Config{})
	buildTakeChannel(t, ws)
	res, err := sb.Run(context.Background(), Script{Dir: ws, Command: "./takechannel; echo REAL-TWO; exit 7",
		Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 20 * time.Second, MaxChars: 8192})
	if err != nil {
		t.Fatalf("the attacked call failed: %v", err)
	}
	if res.ExitCode != 7 || !strings.Contains(res.Stdout, "REAL-TWO") || !strings.Contains(res.Stdout, "taken=0\n") {
		t.Errorf("the attacker reached the channel, or the result changed: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if out := run(t, sb, ws, "echo THREE"); out != "THREE\n" {
		t.Errorf("the next call's result is %q (shifted by a forged frame?)", out)
	}
	if err := sb.Tampered(); err != nil {
		t.Errorf("sandbox marked tampered: %v", err)
	}
}

// fakeHelper is a helper process whose channel's other end the test
// holds, as an attacker who took it would.
func fakeHelper(t *testing.T) (*helperProc, *os.File, *channel) {
	t.Helper()
	ours, theirs, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { theirs.Close() })
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	secret, _ := newSecret()
	hp := &helperProc{cmd: cmd, conn: ours, ch: newChannel(secret, toHelper), done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(hp.done) }()
	return hp, theirs, newChannel(secret, fromHelper)
}

// A response frame the helper did not sign stops the sandbox for good: the
// call fails with a TamperedError (not a result), the helper is killed,
// and no later command runs.
func TestForgedResponseBreaksTheSandbox(t *testing.T) {
	ws := t.TempDir()
	p, _ := NewPolicy(Config{})
	sb := &Sandbox{host: NewHost(), opts: Options{Policy: p, Workspace: ws}}
	hp, theirs, helper := fakeHelper(t)
	hp.ident = watchIdent(ws)
	sb.helper = hp
	go func() {
		var req request
		if helper.read(theirs, &req) != nil {
			return
		}
		// An attacker's frame: right shape, wrong key.
		_, forger, _ := fakeHelperChannel()
		_ = forger.write(theirs, response{ExitCode: 0, Stdout: "all 214 tests passed\n"})
	}()
	res, err := sb.Run(context.Background(), Script{Dir: ws, Command: "echo REAL-TWO; exit 7", Timeout: 5 * time.Second})
	var te *TamperedError
	if !errors.As(err, &te) {
		t.Fatalf("a forged response was reported as %+v, %v", res, err)
	}
	if res.Stdout != "" || res.ExitCode == 0 {
		t.Errorf("the forged result leaked into the call's result: %+v", res)
	}
	if !hp.dead() {
		t.Error("the helper of a tampered channel is still running")
	}
	if !errors.As(sb.Tampered(), &te) {
		t.Errorf("Tampered() = %v after a forged frame", sb.Tampered())
	}
	if _, err := sb.Run(context.Background(), Script{Dir: ws, Command: "echo again", Timeout: 5 * time.Second}); !errors.As(err, &te) {
		t.Errorf("a command ran after the sandbox was tampered with: %v", err)
	}
}

func fakeHelperChannel() (*channel, *channel, error) {
	secret, err := newSecret()
	return newChannel(secret, toHelper), newChannel(secret, fromHelper), err
}
