package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/proctest"
)

func TestRunShellTimeoutKillsProcessGroup(t *testing.T) {
	ws, dir := newWS(t, nil)
	env := testEnv(ws)
	r := call(t, env, "run_shell", map[string]any{
		// The interpreter's $! names a job ("g1"), not a process, so the
		// background programs write their own pids.
		"command": "sh -c 'echo $$ > bg.pid; exec sleep 100' & (sh -c 'echo $$ > sub.pid; exec sleep 100'; echo late) & " +
			"until [ -s bg.pid ] && [ -s sub.pid ]; do :; done; echo started; sleep 100",
		"timeoutSeconds": 1,
	})
	if r.Kind != KindTimeout {
		t.Fatalf("kind %s: %s", r.Kind, r.Message)
	}
	res := r.Details.(procResult)
	if !res.TimedOut || !strings.Contains(res.Stdout, "started") || strings.Contains(res.Stdout, "late") {
		t.Errorf("details %+v", res)
	}
	for _, f := range []string{"bg.pid", "sub.pid"} {
		pid, err := strconv.Atoi(strings.TrimSpace(readString(t, filepath.Join(dir, f))))
		if err != nil {
			t.Fatal(err)
		}
		if !proctest.WaitGone(pid, 10*time.Second) {
			t.Errorf("%s: process %d survived the timeout", f, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestRunShellBackgroundChildReapedAfterExit(t *testing.T) {
	ws, dir := newWS(t, nil)
	env := testEnv(ws)
	r := call(t, env, "run_shell", map[string]any{
		"command": "sh -c 'echo $$ > bg.pid; exec sleep 100' & until [ -s bg.pid ]; do :; done; echo done",
	})
	d := data(t, r)
	if d["exitCode"] != float64(0) || d["stdout"] != "done\n" {
		t.Errorf("%v", d)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readString(t, filepath.Join(dir, "bg.pid"))))
	if err != nil {
		t.Fatal(err)
	}
	if !proctest.WaitGone(pid, 10*time.Second) {
		t.Errorf("background process %d outlived the call", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func TestRunShellCancel(t *testing.T) {
	ws, _ := newWS(t, nil)
	env := testEnv(ws)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := runShell{}.Call(ctx, env, json.RawMessage(`{"command":"sleep 100"}`))
	if r.Kind != KindError || !strings.Contains(r.Message, "cancelled") {
		t.Errorf("%v", r)
	}
}

// TestRunShellEnvironmentIsAnAllowlist plants secrets under names no
// denylist guesses (a PAT, a URL with a password, npm's auth) as well as the
// usual ones, and checks that only allowlisted and operator-passed names
// reach a program.
func TestRunShellEnvironmentIsAnAllowlist(t *testing.T) {
	secrets := map[string]string{
		"FOO_API_KEY":       "s1",
		"GUILDHALL_X":       "s2",
		"OPENAI_API_KEY":    "s3",
		"ANTHROPIC_API_KEY": "s4",
		"GITHUB_TOKEN":      "s5",
		"db_password":       "s6",
		"My_Secret":         "s7",
		"GUILDHALL_API_KEY": "s8",
		"GITHUB_PAT":        "s9",
		"DATABASE_URL":      "postgres://app:s10@db/app",
		"NPM_CONFIG__AUTH":  "s11",
		"SSH_AUTH_SOCK":     "/tmp/s12",
		"AWS_SESSION":       "s13",
	}
	for k, v := range secrets {
		t.Setenv(k, "leak-"+v)
	}
	t.Setenv("KEEP_ME", "kept")
	t.Setenv("LC_TIME", "C")
	ws, _ := newWS(t, nil)
	env := testEnv(ws)
	env.PassEnv = []string{"KEEP_*", "GUILDHALL_X", "OPENAI_API_KEY"}
	d := data(t, call(t, env, "run_shell", map[string]any{"command": "env; sh -c env"}))
	out := d["stdout"].(string)
	for k := range secrets {
		if strings.Contains(out, k+"=") || strings.Contains(out, "leak-") {
			t.Errorf("%s reached the child", k)
		}
	}
	for _, want := range []string{"PATH=", "KEEP_ME=kept", "LC_TIME=C"} {
		if !strings.Contains(out, want) {
			t.Errorf("child env lacks %s", want)
		}
	}
}

func TestPassesEnv(t *testing.T) {
	pass := []string{"DATABASE_URL", "MY_*", "GUILDHALL_MODE", "OPENAI_API_KEY"}
	cases := map[string]bool{
		"PATH": true, "HOME": true, "LC_ALL": true, "LANG": true, "GOPATH": true, "GOMODCACHE": true,
		"DATABASE_URL": true, "MY_CACHE": true, "MY": false,
		"GUILDHALL_MODE": false, "guildhall_api_key": false, "OPENAI_API_KEY": false, "ANTHROPIC_API_KEY": false,
		"GITHUB_PAT": false, "NPM_CONFIG__AUTH": false, "AWS_SECRET_ACCESS_KEY": false, "SSH_AUTH_SOCK": false,
		"XDG_RUNTIME_DIR": false, "DBUS_SESSION_BUS_ADDRESS": false, "PGPASSWORD": false, "path": false,
	}
	for name, want := range cases {
		if got := PassesEnv(name, pass); got != want {
			t.Errorf("PassesEnv(%q) = %v, want %v", name, got, want)
		}
	}
	got := FilterEnv([]string{"PATH=/bin", "noequals", "=x", "GITHUB_PAT=p", "MY_X=1"}, pass)
	if strings.Join(got, " ") != "PATH=/bin MY_X=1" {
		t.Errorf("FilterEnv kept %q", got)
	}
}

func TestRunShellOutputCaps(t *testing.T) {
	ws, _ := newWS(t, nil)
	env := testEnv(ws)
	d := data(t, call(t, env, "run_shell", map[string]any{
		"command": "printf 'HEAD'; head -c 200000 /dev/zero | tr '\\000' a; printf 'TAIL'; head -c 50000 /dev/zero | tr '\\000' e >&2; exit 7",
	}))
	out, errOut := d["stdout"].(string), d["stderr"].(string)
	if d["exitCode"] != float64(7) {
		t.Errorf("exit %v", d["exitCode"])
	}
	for name, s := range map[string]string{"stdout": out, "stderr": errOut} {
		if n := len([]rune(s)); n > streamMaxChars+200 || !strings.Contains(s, "output truncated") {
			t.Errorf("%s: %d characters, marker=%v", name, n, strings.Contains(s, "truncated"))
		}
	}
	if !strings.HasPrefix(out, "HEAD") || !strings.HasSuffix(out, "TAIL") {
		t.Errorf("stdout lost its start or end")
	}
}

func TestTimeoutClamp(t *testing.T) {
	env := &Env{TimeoutCeiling: 10 * time.Second}
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		req  *float64
		want time.Duration
	}{
		{nil, 10 * time.Second},
		{f(3), 3 * time.Second},
		{f(1000), 10 * time.Second},
		{f(0.5), 500 * time.Millisecond},
	}
	for _, c := range cases {
		got, r := callTimeout(env, c.req)
		if r != nil || got != c.want {
			t.Errorf("%v: %v %v", c.req, got, r)
		}
	}
	if _, r := callTimeout(env, f(-1)); r == nil {
		t.Error("negative timeout accepted")
	}
	if got, _ := callTimeout(&Env{}, nil); got != defaultTimeoutCeiling {
		t.Errorf("default ceiling %v", got)
	}
}

func TestSpawnFailureIsUnavailable(t *testing.T) {
	ws, dir := newWS(t, nil)
	env := testEnv(ws)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"run_shell", "typecheck"} {
		args := map[string]any{"command": "true"}
		if name != "run_shell" {
			args = map[string]any{"commands": []string{"true", "true"}}
		}
		r := call(t, env, name, args)
		if r.Kind != KindUnavailable {
			t.Errorf("%s: %v", name, r)
		}
		if strings.Contains(r.Message, dir) {
			t.Errorf("%s: message reveals the workspace path: %s", name, r.Message)
		}
	}
}

// TestRunShellEnvironBase: a call with its own base environment (a bench
// workspace's) sees that PATH and HOME, not this process's, and the
// allowlist still applies to it.
func TestRunShellEnvironBase(t *testing.T) {
	t.Setenv("KEEP_ME", "from-process")
	ws, _ := newWS(t, nil)
	env := testEnv(ws)
	env.Environ = []string{"PATH=/usr/bin:/bin", "HOME=/scoped/home", "GITHUB_PAT=leak", "LANG=C"}
	d := data(t, call(t, env, "run_shell", map[string]any{"command": "echo \"$PATH|$HOME|$GITHUB_PAT|$KEEP_ME|$LANG\""}))
	if got := strings.TrimSpace(d["stdout"].(string)); got != "/usr/bin:/bin|/scoped/home|||C" {
		t.Errorf("child saw %q", got)
	}
}
