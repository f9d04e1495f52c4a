package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/proctest"
)

// shellIn runs command through the shell path in the workspace.
func shellIn(t *testing.T, env *Env, command string, timeout time.Duration) procResult {
	t.Helper()
	res, err := shellCall(context.Background(), env, command, timeout)
	if err != nil {
		t.Fatalf("%q: %v", command, err)
	}
	return res
}

func TestShellCommands(t *testing.T) {
	t.Setenv("KEEP_ME", "kept")
	ws, dir := newWS(t, map[string]string{"data.txt": "from file\n"})
	env := testEnv(ws)
	env.PassEnv = []string{"KEEP_ME"}
	cases := []struct {
		name, command string
		stdout        string // exact unless stdoutHas is set
		stdoutHas     string
		stderrHas     string
		code          int
	}{
		{name: "echo", command: "echo hi; exit 0", stdout: "hi\n"},
		{name: "printf", command: `printf '%s-%d\n' a 3`, stdout: "a-3\n"},
		{name: "cd then pwd", command: "mkdir -p sub && cd sub && pwd", stdout: dir + "/sub\n"},
		{name: "pipeline", command: `printf 'b\na\n' | sort`, stdout: "a\nb\n"},
		{name: "long pipeline", command: "yes | head -n 2 | tr y z", stdout: "z\nz\n"},
		{name: "redirect then cat", command: "echo content > out.txt && cat out.txt", stdout: "content\n"},
		{name: "input redirect", command: "wc -l < data.txt", stdout: "1\n"},
		{name: "command substitution", command: `x=$(echo inner); echo "got $x"`, stdout: "got inner\n"},
		{name: "external substitution", command: `echo "first $(printf 'b\na\n' | sort | head -n 1)"`, stdout: "first a\n"},
		{name: "here-document", command: "cat <<EOF\nline $((1+2))\nEOF", stdout: "line 3\n"},
		{name: "quoted here-document", command: "cat <<'EOF'\n$HOME\nEOF", stdout: "$HOME\n"},
		{name: "and or", command: "false && echo no || echo yes", stdout: "yes\n"},
		{name: "loop", command: "for i in 1 2 3; do echo -n $i; done", stdout: "123"},
		{name: "test", command: `[ abc = abc ] && case abc in a*) echo match;; esac`, stdout: "match\n"},
		{name: "stderr", command: "echo oops >&2", stderrHas: "oops"},
		{name: "dev stderr", command: "echo via-dev >/dev/stderr", stderrHas: "via-dev"},
		{name: "2>&1 external", command: "ls /nonexistent-guildhall-path 2>&1", stdoutHas: "nonexistent-guildhall-path", code: 2},
		{name: "exit 3", command: "exit 3", code: 3},
		{name: "false", command: "false", code: 1},
		{name: "external failure", command: "sh -c 'exit 5'", code: 5},
		{name: "last status wins", command: "false; true", code: 0},
		{name: "missing command", command: "no-such-command-xyz arg", stderrHas: "no-such-command-xyz", code: 127},
		{name: "missing path", command: "./nope", stderrHas: "./nope", code: 127},
		{name: "directory", command: "mkdir -p d && ./d", stderrHas: "./d", code: 126},
		{name: "syntax error", command: "echo 'unterminated", stderrHas: "syntax error", code: 2},
		{name: "syntax error keyword", command: "if then fi", stderrHas: "syntax error", code: 2},
		{name: "empty stdin", command: "cat", stdout: ""},
		{name: "read gets EOF", command: `read x; echo "status $?"`, stdout: "status 1\n"},
		{name: "secret scrubbed", command: "echo ${OPENAI_API_KEY-unset}; sh -c 'echo ${OPENAI_API_KEY-unset}'", stdout: "unset\nunset\n"},
		{name: "environment kept", command: "echo $KEEP_ME; sh -c 'echo $KEEP_ME'", stdout: "kept\nkept\n"},
		{name: "export reaches programs", command: "export FOO=bar; sh -c 'echo $FOO'; BAZ=qux sh -c 'echo $BAZ'", stdout: "bar\nqux\n"},
		{name: "unset reaches programs", command: "unset KEEP_ME; sh -c 'echo ${KEEP_ME-gone}'", stdout: "gone\n"},
		{name: "script without #!", command: `printf 'echo script $1\nexit 4\n' > s.sh && chmod +x s.sh && ./s.sh arg`, stdout: "script arg\n", code: 4},
		{name: "errexit", command: "set -e; false; echo unreachable", code: 1},
		{name: "no parameters", command: "echo $#", stdout: "0\n"},
		{name: "dev stdout in a pipe", command: "echo piped >/dev/stdout | tr a-z A-Z", stdout: "PIPED\n"},
		{name: "closed stdout", command: "ls >&-; echo after", stdout: "after\n"},
		{name: "wait", command: "sleep 0.1 & wait; echo waited", stdout: "waited\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", "leak-me")
			res := shellIn(t, env, c.command, 10*time.Second)
			if res.ExitCode != c.code || res.TimedOut {
				t.Errorf("exit %d timedOut=%v, want %d; stderr %q", res.ExitCode, res.TimedOut, c.code, res.Stderr)
			}
			switch {
			case c.stdoutHas != "":
				if !strings.Contains(res.Stdout, c.stdoutHas) {
					t.Errorf("stdout %q lacks %q", res.Stdout, c.stdoutHas)
				}
			case res.Stdout != c.stdout:
				t.Errorf("stdout %q, want %q", res.Stdout, c.stdout)
			}
			// sh's own words differ between shells ("Syntax error" in dash).
			if c.stderrHas != "" && !strings.Contains(strings.ToLower(res.Stderr), strings.ToLower(c.stderrHas)) {
				t.Errorf("stderr %q lacks %q", res.Stderr, c.stderrHas)
			}
		})
	}
	if got := readString(t, filepath.Join(dir, "out.txt")); got != "content\n" {
		t.Errorf("out.txt holds %q", got)
	}
}

// A call's cd and export stay in that call: neither the next call nor this
// process sees them.
func TestShellStateDoesNotLeak(t *testing.T) {
	ws, dir := newWS(t, nil)
	env := testEnv(ws)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if res := shellIn(t, env, "cd / && export GUILDHALL_LEAK_TEST=1 && pwd && cd /tmp", 5*time.Second); res.Stdout != "/\n" {
		t.Fatalf("first call: %+v", res)
	}
	if res := shellIn(t, env, "pwd; echo ${GUILDHALL_LEAK_TEST-unset}", 5*time.Second); res.Stdout != dir+"\nunset\n" {
		t.Errorf("second call saw the first call's state: %q", res.Stdout)
	}
	if now, _ := os.Getwd(); now != wd {
		t.Errorf("process working directory changed to %s", now)
	}
	if _, ok := os.LookupEnv("GUILDHALL_LEAK_TEST"); ok {
		t.Error("export reached the process environment")
	}
}

func TestShellTimeouts(t *testing.T) {
	ws, dir := newWS(t, nil)
	env := testEnv(ws)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Release a shell left in open(2) on the FIFO, if any.
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	cases := []struct {
		name, command string
		within        time.Duration
	}{
		{"builtin loop", "echo before; while true; do :; done", 2 * time.Second},
		{"builtin loop in a function", "echo before; f() { while :; do x=1; done; }; f", 2 * time.Second},
		{"external sleep", "echo before; sleep 30", 2 * time.Second},
		{"pipeline", "echo before; sleep 30 | cat", 2 * time.Second},
		{"wait on a background job", "echo before; sleep 30 & wait", 2 * time.Second},
		// Opening a FIFO blocks the shell in a system call; SIGKILL
		// ends it there.
		{"blocked open", "echo before; echo x > fifo", 2 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			res := shellIn(t, env, c.command, 300*time.Millisecond)
			if elapsed := time.Since(start); elapsed > c.within {
				t.Errorf("returned after %s", elapsed)
			}
			if !res.TimedOut || res.ExitCode != -1 || res.Stdout != "before\n" {
				t.Errorf("%+v", res)
			}
		})
	}
}

func TestShellCancelled(t *testing.T) {
	ws, _ := newWS(t, nil)
	env := testEnv(ws)
	for _, command := range []string{"while :; do :; done", "sleep 30"} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		start := time.Now()
		res, err := shellCall(ctx, env, command, 10*time.Second)
		cancel()
		if !errors.Is(err, errCancelled) || res.TimedOut || res.ExitCode != -1 {
			t.Errorf("%q: %v %+v", command, err, res)
		}
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("%q: returned after %s", command, elapsed)
		}
	}
}

// Nothing a call starts outlives it: not a background job of the script,
// not a background child of a program it ran.
func TestShellLeavesNoProcess(t *testing.T) {
	if _, err := os.Stat("/usr/bin/pgrep"); err != nil {
		t.Skip("pgrep is not installed")
	}
	ws, _ := newWS(t, nil)
	env := testEnv(ws)
	cases := []struct{ name, command string }{
		// pgrep finds the job's pid from the outside; the loop also makes
		// sure the job has started before the script ends.
		{"background job", "sleep 30.25 & until pgrep -x -f 'sleep 30.25' >/dev/null; do :; done; pgrep -x -f 'sleep 30.25'"},
		{"background job in a subshell", "(sleep 30.5; echo late) & until pgrep -x -f 'sleep 30.5' >/dev/null; do :; done; pgrep -x -f 'sleep 30.5'"},
		{"grandchild of a program", "sh -c 'sleep 30 & echo $!'"},
		// A grandchild holding the substitution's pipe would keep sh
		// waiting for it, as in any shell: this one lets go of it.
		{"grandchild in a substitution", `echo "$(sh -c 'sleep 30 >/dev/null & echo $!')"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			res := shellIn(t, env, c.command, 10*time.Second)
			if elapsed := time.Since(start); elapsed > 3*time.Second {
				t.Errorf("returned after %s", elapsed)
			}
			if res.ExitCode != 0 || strings.Contains(res.Stdout, "late") {
				t.Fatalf("%+v", res)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(res.Stdout))
			if err != nil || pid <= 0 {
				t.Fatalf("no pid in %q", res.Stdout)
			}
			if !proctest.WaitGone(pid, 10*time.Second) {
				t.Errorf("process %d outlived the call", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
}

func TestShellSyntaxErrorIsAResult(t *testing.T) {
	ws, _ := newWS(t, nil)
	d := data(t, call(t, testEnv(ws), "run_shell", map[string]any{"command": "echo $("}))
	if d["exitCode"] != float64(2) || !strings.Contains(strings.ToLower(d["stderr"].(string)), "syntax error") {
		t.Errorf("%v", d)
	}
}
