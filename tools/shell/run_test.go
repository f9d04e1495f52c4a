//go:build linux

package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/proctest"
)

var testEnv = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}

// hostSh runs command in the host's own /bin/sh, as a user would type
// `sh -c` in a terminal with stdin empty: the reference every idiom is
// compared with.
func hostSh(t *testing.T, dir, command string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Args[0] = "sh"
	cmd.Dir, cmd.Env = dir, testEnv
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// Idioms the embedded interpreter got wrong behave exactly as in the
// host's /bin/sh, whatever shell that is: same output, same errors, same
// status.
func TestRunMatchesHostShell(t *testing.T) {
	cases := []struct{ name, command, want string }{
		{"umask", "umask 027; umask; touch f; ls -l f | cut -c1-10", "0027\n-rw-r-----\n"},
		{"ulimit -n", "ulimit -n 64; ulimit -n", "64\n"},
		{"exec 3>file", "exec 3>out.txt; echo to-three >&3; exec 3>&-; cat out.txt", "to-three\n"},
		{"read -t from empty stdin", "read -t 1 v; echo \"status $? v=[$v]\"", ""},
		{"read -t with a slow writer", "(sleep 2; echo late) | { read -t 1 v; echo \"status $? v=[$v]\"; }", ""},
		{"trap EXIT", "trap 'echo bye' EXIT; echo hi", "hi\nbye\n"},
		{"background jobs and wait", "(sleep 0.2; echo a) & (echo b) & wait; echo done", ""},
		{"wait for a status", "(exit 3) & wait $!; echo $?", "3\n"},
		{"printf -v", "printf -v v 'x%s' y; echo \"[$?] v=[$v]\"", ""},
		{"BASHPID", "echo \"[${BASHPID:-unset}]\"", ""},
		{"jobs", "sleep 1 & jobs | wc -l", ""},
		{"syntax error", "if then fi", ""},
		{"command not found", "no-such-command-here; echo $?", ""},
		{"/dev/stderr", "echo err >/dev/stderr; echo out", "out\n"},
		{"2>&1 keeps order", "echo 1; echo 2 >&2; echo 3", ""},
		{"script without #!", "printf 'echo from-script \"$1\"\\n' > s; chmod +x s; ./s arg", "from-script arg\n"},
		{"set -e", "set -e; false; echo never", ""},
		{"exit status", "exit 42", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hostDir, ourDir := t.TempDir(), t.TempDir()
			wantOut, wantErr, wantCode := hostSh(t, hostDir, c.command)
			res, err := Run(context.Background(), Spec{Dir: ourDir, Command: c.command, Env: testEnv, Timeout: 20 * time.Second, MaxChars: 4000})
			if err != nil {
				t.Fatal(err)
			}
			if res.Stdout != wantOut || res.Stderr != wantErr || res.ExitCode != wantCode {
				t.Errorf("got stdout %q stderr %q status %d\nhost sh: stdout %q stderr %q status %d", res.Stdout, res.Stderr, res.ExitCode, wantOut, wantErr, wantCode)
			}
			if c.want != "" && res.Stdout != c.want {
				t.Errorf("stdout %q, want %q", res.Stdout, c.want)
			}
		})
	}
}

// A timeout kills the shell and everything in its group, a sleeper it put
// in the background included, and says it timed out.
func TestRunTimeoutKillsBackgroundJobs(t *testing.T) {
	mark := fmt.Sprintf("guildhall-timeout-%d", os.Getpid())
	start := time.Now()
	res, err := Run(context.Background(), Spec{
		Dir: t.TempDir(), Command: "sh -c 'sleep 300; : " + mark + "' & sleep 300",
		Env: testEnv, Timeout: 300 * time.Millisecond, MaxChars: 1000,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("%+v, want a timeout", res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timed-out call took %s", d)
	}
	proctest.WaitNoneMatching(t, mark, time.Second)
}

// A job left in the background when the shell ends is killed with the
// shell's group, and the call does not wait for it.
func TestRunEndKillsBackgroundJobs(t *testing.T) {
	mark := fmt.Sprintf("guildhall-bg-%d", os.Getpid())
	start := time.Now()
	res, err := Run(context.Background(), Spec{
		Dir: t.TempDir(), Command: "sh -c 'sleep 300; : " + mark + "' & echo started",
		Env: testEnv, Timeout: 20 * time.Second, MaxChars: 1000,
	})
	if err != nil || res.Stdout != "started\n" || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call waited %s for its background job", d)
	}
	proctest.WaitNoneMatching(t, mark, time.Second)
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err := Run(ctx, Spec{Dir: t.TempDir(), Command: "echo before; sleep 300", Env: testEnv, Timeout: 20 * time.Second, MaxChars: 1000})
	if !errors.Is(err, ErrCancelled) || res.ExitCode != -1 || res.Stdout != "before\n" {
		t.Errorf("%+v %v", res, err)
	}
}

// A shell that cannot start is an error naming why, not a result.
func TestRunMissingDir(t *testing.T) {
	_, err := Run(context.Background(), Spec{Dir: filepath.Join(t.TempDir(), "gone"), Command: "true", Env: testEnv, Timeout: time.Second, MaxChars: 100})
	if err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("err = %v", err)
	}
}

func TestRunOutputCap(t *testing.T) {
	res, err := Run(context.Background(), Spec{Dir: t.TempDir(), Command: "seq 1 100000", Env: testEnv, Timeout: 20 * time.Second, MaxChars: 100})
	if err != nil || !res.StdoutCut || !strings.HasPrefix(res.Stdout, "1\n2\n") || !strings.HasSuffix(res.Stdout, "100000\n") {
		t.Errorf("%v %+v", err, res)
	}
}

// The command sees exactly the environment it is given.
func TestRunScopedEnvironment(t *testing.T) {
	t.Setenv("GUILDHALL_TEST_SECRET", "leaked")
	res, err := Run(context.Background(), Spec{Dir: t.TempDir(), Command: "env | grep -v '^PWD=' | sort", Env: []string{"PATH=/usr/bin:/bin", "A=1"}, Timeout: 5 * time.Second, MaxChars: 1000})
	if err != nil || res.Stdout != "A=1\nPATH=/usr/bin:/bin\n" {
		t.Errorf("%v %q", err, res.Stdout)
	}
}

// The limits are in place before the command's first instruction, and it
// cannot raise them back.
func TestRunLimitsApplied(t *testing.T) {
	l := Limits{CPUSeconds: 7, FileSize: 4 << 20, AddressSpace: 8 << 30}
	res, err := Run(context.Background(), Spec{
		Dir: t.TempDir(), Command: "ulimit -t; ulimit -f; ulimit -v; ulimit -t 100 2>/dev/null && echo raised",
		Env: testEnv, Timeout: 5 * time.Second, MaxChars: 1000, Limits: l,
	})
	want := fmt.Sprintf("7\n%d\n%d\n", (4<<20)/512, (8<<30)/1024)
	if err != nil || res.Stdout != want || res.Exceeded != "" {
		t.Errorf("%v %+v, want stdout %q", err, res, want)
	}
}

// Each limit, when a command runs into it, is named in the result.
func TestRunLimitExceeded(t *testing.T) {
	cases := []struct {
		name    string
		limits  Limits
		command string
		want    Limit
		likely  bool
	}{
		{"CPU spin in the shell itself", Limits{CPUSeconds: 1}, "while :; do :; done", LimitCPU, false},
		{"CPU spin in a child, then more", Limits{CPUSeconds: 1}, "sh -c 'while :; do :; done'; echo after", LimitCPU, true},
		{"file too large", Limits{FileSize: 1 << 20}, "head -c 2000000 /dev/zero > big; echo $?", LimitFileSize, true},
		{"file too large, last command", Limits{FileSize: 1 << 20}, "exec head -c 2000000 /dev/zero > big", LimitFileSize, false},
		{"address space", Limits{AddressSpace: 256 << 20}, "dd if=/dev/zero of=/dev/null bs=1G count=1", LimitAddressSpace, true},
		{"within the limits", Limits{CPUSeconds: 5, FileSize: 1 << 20}, "head -c 1000 /dev/zero > small", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), Spec{Dir: t.TempDir(), Command: c.command, Env: testEnv, Timeout: 20 * time.Second, MaxChars: 1000, Limits: c.limits})
			if err != nil {
				t.Fatal(err)
			}
			if res.Exceeded != c.want || res.Likely != c.likely || res.TimedOut {
				t.Errorf("exceeded %q likely %v, want %q %v: %+v", res.Exceeded, res.Likely, c.want, c.likely, res)
			}
		})
	}
}

// Where tracing is forbidden the shell gets its limits right after its
// start instead: in place by the time it runs a command.
func TestStartThenLimit(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 0.3; ulimit -t; ulimit -f")
	var out strings.Builder
	cmd.Stdout = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if _, err := startThenLimit(cmd, nil, Limits{CPUSeconds: 9, FileSize: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || out.String() != "9\n2048\n" {
		t.Errorf("%v %q", err, out.String())
	}
}
