//go:build linux

package main

// The sandbox against a hostile workspace, through the real binary: a
// scripted model runs the attacker's commands with run_shell, and each
// must fail as a normal tool result while the hostile invariants hold
// (nothing ran outside, nothing leaked, nothing outside changed).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/internal/gobuild"
	"github.com/guildhall/guildhall/internal/proctest"
	"github.com/guildhall/guildhall/internal/ptytest"
	"github.com/guildhall/guildhall/internal/sandboxtest"
	"github.com/guildhall/guildhall/runner/event"
)

// shellTurns scripts a solo role that runs each command with run_shell,
// then finishes.
func shellTurns(f *fakellm.Server, commands ...string) {
	var turns []fakellm.Reply
	for _, c := range commands {
		turns = append(turns, fakellm.Reply{Calls: []fakellm.Call{{Name: "run_shell", Args: map[string]any{"command": c, "timeoutSeconds": 20}}}})
	}
	turns = append(turns, fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "done"}}}})
	f.Queue("solo", turns...)
}

// soloGuild writes a guild outside the workspace (the operator's) whose
// one role runs shell commands.
func (h *hostile) soloGuild() string {
	return h.roleGuild(filepath.Join(h.root, "operator-guild"), "solo", "[role:solo] Run what you are told.", "run_shell", "finish")
}

// shellRun runs `guildhall run --json` with the commands scripted and
// returns the run_shell results in order.
func (h *hostile) shellRun(ws string, extraArgs []string, commands ...string) (result, []map[string]any) {
	h.t.Helper()
	f := fakellm.New()
	defer f.Close()
	shellTurns(f, commands...)
	args := append([]string{"run", "--workspace", ws, "--guild", h.soloGuild(), "--base-url", f.BaseURL(),
		"--model", "fake-model", "--no-input", "--json"}, extraArgs...)
	res := h.run(ws, 90*time.Second, append(args, "run the commands")...)
	return res, shellResults(h.t, res.stdout)
}

// shellResults decodes the run_shell results from --json output; each
// must be a normal result (kind success), whatever the command did.
func shellResults(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, p := range jsonEvents[event.ToolResultPayload](t, stdout, event.ToolResult) {
		if p.Tool != "run_shell" {
			continue
		}
		var r struct {
			Kind    string         `json:"kind"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		}
		if err := json.Unmarshal(p.Result, &r); err != nil || r.Kind != "success" {
			t.Errorf("run_shell did not give a normal result: %s", p.Result)
			continue
		}
		out = append(out, r.Data)
	}
	return out
}

// probe is the attacker's probe (tools/sandbox/testdata/probe), built once
// per test process; TestMain removes it.
var probe = gobuild.New("github.com/guildhall/guildhall/tools/sandbox/testdata/probe", "probe")

// probeInto copies the probe into the workspace, as a repository would
// ship it.
func probeInto(t *testing.T, ws string) {
	t.Helper()
	probe.CopyTo(t, ws)
}

// The attacker's repository tries, through run_shell, to read the
// operator's private key and key, write outside, plant the marker, reach
// the key server and leave a daemon. Everything fails as a tool result.
func TestHostileSandboxRunShell(t *testing.T) {
	sandboxtest.Need(t)
	h := newHostile(t)
	ws := h.workspace("shell")
	res, results := h.shellRun(ws, nil,
		"cat "+h.home+"/.ssh/id_ed25519 > stolen-key; cat $HOME/.ssh/id_ed25519",
		"touch "+h.marker,
		"echo owned >> "+h.outside+"/notes.txt; cp /etc/hostname "+h.outside+"/copied",
		"cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c sk-operator",
		"getent hosts localhost.localdomain >/dev/null; exec 3<>/dev/tcp/127.0.0.1/1 2>&1; curl -s -m 3 "+h.keyServer.URL+"/v1/models || wget -q -T 3 -O- "+h.keyServer.URL+"/v1/models || echo no-network",
		"echo x > .orchestration/queue.json; ls -A .orchestration | wc -l",
	)
	if res.code != 0 || len(results) != 6 {
		t.Fatalf("%d results\n%s", len(results), res)
	}
	if s := fmt.Sprint(results[0]); strings.Contains(s, "FAKE-HOME-SECRET") {
		t.Errorf("the private key was read: %v", results[0])
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "stolen-key")); bytes.Contains(b, []byte("FAKE-HOME-SECRET")) {
		t.Error("the private key was copied into the workspace")
	}
	// The marker's folder is under /tmp, which the sandbox replaces with
	// its own: the touch may succeed there; the host's stays absent
	// (assertSafe). The outside folder does not exist in there at all.
	if results[2]["exitCode"].(float64) == 0 {
		t.Errorf("writing outside succeeded: %v", results[2])
	}
	if strings.TrimSpace(results[3]["stdout"].(string)) != "0" {
		t.Errorf("the key was found in a process environment: %v", results[3])
	}
	if n := strings.TrimSpace(results[5]["stdout"].(string)); n != "0" {
		t.Errorf(".orchestration is visible (%s entries): %v", n, results[5])
	}
	if !strings.Contains(res.stderr, "sandbox: workspace-write, network off") {
		t.Errorf("the run does not show its sandbox:\n%s", res.stderr)
	}
	h.assertSafe()
}

// Without bubblewrap the default sandbox cannot work: the binary says why
// and how to fix it, exits 2, and has asked no model anything.
func TestHostileSandboxFailsClosedWithoutBubblewrap(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("nobwrap")
	// A PATH with the programs a run needs but no bwrap.
	bin := filepath.Join(h.root, "bin-without-bwrap")
	mkdirs(t, bin)
	for _, p := range []string{"git", "sh", "cat"} {
		if full, err := exec.LookPath(p); err == nil {
			_ = os.Symlink(full, filepath.Join(bin, p))
		}
	}
	for _, args := range [][]string{
		{"run", "--workspace", ws, "--base-url", h.keyServer.BaseURL(), "--no-input", "do something"},
		{"demo", "--headless", "--speed", "0", "--no-input", "--sandbox", "workspace-write"},
		{"check", "--workspace", ws},
		{"run", "--workspace", ws, "--base-url", h.keyServer.BaseURL(), "--sandbox", "read-only", "--no-input", "do something"},
	} {
		res := h.runEnv(ws, 0, []string{"PATH=" + bin}, args...)
		if res.code != exitUsage {
			t.Errorf("%v: exit %d, want 2\n%s", args, res.code, res)
		}
		for _, want := range []string{"bubblewrap (bwrap) is not on PATH", "install bubblewrap", "--sandbox none"} {
			if !strings.Contains(strings.ToLower(res.stderr), strings.ToLower(want)) {
				t.Errorf("%v: the message lacks %q:\n%s", args, want, res.stderr)
			}
		}
	}
	if reqs := h.keyServer.requests(); len(reqs) != 0 {
		t.Errorf("the model endpoint was asked before the sandbox was checked:\n%s", strings.Join(reqs, "\n"))
	}
	// The demo alone runs anyway, saying so: its workspace is Guildhall's
	// own sample and its model a script, and the README's first command
	// must work on a machine without bubblewrap.
	for _, p := range []string{"tr", "sed", "dirname", "printf", "grep", "head", "ls"} {
		if full, err := exec.LookPath(p); err == nil {
			_ = os.Symlink(full, filepath.Join(bin, p))
		}
	}
	res := h.runEnv(ws, 0, []string{"PATH=" + bin}, "demo", "--headless", "--speed", "0", "--no-input")
	if res.code != exitOK || !strings.Contains(res.stderr, "the demo runs its own embedded sample project unconfined") ||
		!strings.Contains(res.stderr, "install bubblewrap") {
		t.Errorf("the demo without bubblewrap:\n%s", res)
	}
	h.assertSafe()
}

// --sandbox none works without bubblewrap and warns in one line at every
// start; its commands run unconfined, as documented.
func TestHostileSandboxNoneWarns(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("none")
	target := filepath.Join(h.root, "none-wrote-this")
	f := fakellm.New()
	defer f.Close()
	shellTurns(f, "echo unconfined > "+target)
	res := h.runEnv(ws, 60*time.Second, []string{"PATH=/usr/bin:/bin"}, "run", "--workspace", ws, "--guild", h.soloGuild(),
		"--base-url", f.BaseURL(), "--model", "fake-model", "--no-input", "--sandbox", "none", "go")
	if res.code != 0 {
		t.Fatalf("%s", res)
	}
	warnings := 0
	for _, line := range strings.Split(res.stderr, "\n") {
		if strings.HasPrefix(line, "guildhall: warning: sandbox none:") {
			warnings++
		}
	}
	if warnings != 1 {
		t.Errorf("%d warning lines, want one:\n%s", warnings, res.stderr)
	}
	if first, _, _ := strings.Cut(res.stdout, "\n"); first != "sandbox: none (commands run unconfined)" {
		t.Errorf("first line %q", first)
	}
	// The builtin redirection is not confined: that is what none means.
	if b, err := os.ReadFile(target); err != nil || string(b) != "unconfined\n" {
		t.Errorf("none mode did not run the command unconfined: %q %v", b, err)
	}
	if c := h.run(ws, 0, "check", "--workspace", ws, "--sandbox", "none"); c.code != 0 || !strings.Contains(c.stdout, "sandbox: none (commands run unconfined): ok") ||
		!strings.Contains(c.stderr, "warning: sandbox none") {
		t.Errorf("check: %s", c)
	}
}

// A daemon that leaves its session (setsid -f) or double-forks is gone
// when the call ends and when Guildhall exits, sandbox or not: in the
// sandbox by its PID namespace, without it because Guildhall is a child
// subreaper that kills what was reparented to it.
func TestHostileSandboxDaemonsDie(t *testing.T) {
	eachSandboxMode(t, func(t *testing.T, mode string) {
		h := newHostile(t)
		ws := h.workspace("daemons-" + mode)
		mark := fmt.Sprintf("guildhall-daemon-%d-%s", os.Getpid(), mode)
		res, results := h.shellRun(ws, []string{"--sandbox", mode},
			"sh -c 'setsid -f sh -c \"sleep 300; : "+mark+"-a\"; sleep 0.3'; "+
				"sh -c '(setsid sh -c \"(sleep 300; : "+mark+"-b) &\" &); sleep 0.3'; "+
				"ps -eo args | grep -v grep | grep -c "+mark,
			"ps -eo args | grep -v grep | grep -c "+mark+"; true",
		)
		if res.code != 0 || len(results) != 2 {
			t.Fatalf("%s", res)
		}
		if n, _ := strconv.Atoi(strings.TrimSpace(results[0]["stdout"].(string))); n < 2 {
			t.Fatalf("the daemons did not start: %v", results[0])
		}
		if n := strings.TrimSpace(results[1]["stdout"].(string)); n != "0" {
			t.Errorf("%s daemon processes outlived the call", n)
		}
		if left := proctest.Matching(mark); len(left) > 0 {
			t.Errorf("processes outlived Guildhall: %v", left)
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// eachSandboxMode runs test in the default sandbox (where bubblewrap
// works here) and, as the control, with --sandbox none, each a subtest
// named for its mode.
func eachSandboxMode(t *testing.T, test func(t *testing.T, mode string)) {
	for _, mode := range []string{"workspace-write", "none"} {
		t.Run(mode, func(t *testing.T) {
			if mode != "none" {
				sandboxtest.Need(t)
			}
			test(t, mode)
		})
	}
}

// TestHostileSandboxTIOCSTI runs Guildhall on a terminal (a pty that is
// its controlling terminal, as over SSH) and has a command push keystrokes
// into it with TIOCSTI, through its inherited descriptors, /dev/tty and
// the terminal's own device. In the sandbox nothing reaches the terminal.
// Without it (the control), the program has no controlling terminal
// (a new session), so /dev/tty fails, but root can still open the device
// itself: that is the weaker guarantee docs/security.md states.
func TestHostileSandboxTIOCSTI(t *testing.T) {
	eachSandboxMode(t, func(t *testing.T, mode string) {
		h := newHostile(t)
		ws := h.workspace("tty-" + mode)
		probeInto(t, ws)
		master, slavePath := ptytest.Open(t)
		f := fakellm.New()
		defer f.Close()
		shellTurns(f, "./probe tiocsti "+slavePath)
		slave, err := os.OpenFile(slavePath, os.O_RDWR|syscall.O_NOCTTY, 0)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(h.bin, "run", "--workspace", ws, "--guild", h.soloGuild(), "--base-url", f.BaseURL(),
			"--model", "fake-model", "--no-input", "--json", "--sandbox", mode, "type into the terminal")
		cmd.Dir, cmd.Env = ws, h.env()
		var out, errOut bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, &errOut
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		var seen bytes.Buffer
		var mu sync.Mutex
		go func() {
			buf := make([]byte, 4096)
			for {
				n, err := master.Read(buf)
				mu.Lock()
				seen.Write(buf[:n])
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
		}
		slave.Close()
		time.Sleep(100 * time.Millisecond)
		results := shellResults(t, out.String())
		if len(results) != 1 {
			t.Fatalf("results %v\n%s", results, errOut.String())
		}
		probe := results[0]["stdout"].(string)
		mu.Lock()
		injected := strings.Contains(seen.String(), "INJECTED")
		mu.Unlock()
		if !strings.Contains(probe, "NO /dev/tty") {
			t.Errorf("the command had a controlling terminal: %s", probe)
		}
		switch {
		case mode != "none":
			if injected || strings.Contains(probe, "OK ") {
				t.Errorf("keystrokes reached the terminal from the sandbox: %s", probe)
			}
		case os.Geteuid() == 0 && legacyTIOCSTI():
			// The control: root reaches the terminal through its device.
			if !injected || !strings.Contains(probe, "OK "+slavePath) {
				t.Errorf("control: root could not inject through %s: %s", slavePath, probe)
			}
		}
	})
}

func legacyTIOCSTI() bool {
	b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	return err != nil || strings.TrimSpace(string(b)) != "0"
}

// With network allowlist, a program inside reaches an allowlisted test
// server through Guildhall's proxy; a denied host gets the proxy's 403,
// and both attempts are egress events in the run's log naming the role.
// An extra writable path takes writes; the rest of the host still does
// not.
func TestHostileSandboxAllowlistAndWritable(t *testing.T) {
	sandboxtest.Need(t)
	h := newHostile(t)
	ws := h.workspace("allowlist")
	probeInto(t, ws)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "registry served %s", r.URL.Path)
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	cache := filepath.Join(h.root, "cache")
	mkdirs(t, cache)
	dep := filepath.Join(h.root, "operator-deployment.json")
	h.write(dep, fmt.Sprintf(`{"sandbox": {"network": "allowlist", "allow": [%q], "writable": [%q]}}`, addr, cache), 0o644)
	res, results := h.shellRun(ws, []string{"--deployment", dep},
		"./probe http http://"+addr+"/pkg/a.tgz",
		"./probe http http://denied.example/x https://denied.example/",
		"echo cached > "+cache+"/entry && echo owned >> "+h.outside+"/notes.txt",
	)
	if res.code != 0 || len(results) != 3 {
		t.Fatalf("%s", res)
	}
	if !strings.Contains(results[0]["stdout"].(string), "BODY http://"+addr+"/pkg/a.tgz registry served /pkg/a.tgz") {
		t.Errorf("allowlisted fetch: %v", results[0])
	}
	if out := results[1]["stdout"].(string); strings.Contains(out, "OK ") || !strings.Contains(out, "denied.example (port 80) is not on the network allowlist") {
		t.Errorf("denied fetch: %v", results[1])
	}
	if b, err := os.ReadFile(filepath.Join(cache, "entry")); err != nil || string(b) != "cached\n" {
		t.Errorf("the writable path did not take the write: %q %v", b, err)
	}
	egress := jsonEvents[event.EgressPayload](t, res.stdout, event.Egress)
	want := map[string]bool{"127.0.0.1 true": false, "denied.example false": false}
	for _, p := range egress {
		key := fmt.Sprintf("%s %v", p.Host, p.Allowed)
		if _, ok := want[key]; ok && p.Role == "solo" && p.Via == "proxy" {
			want[key] = true
		}
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("no egress event %q (role solo): %+v", k, egress)
		}
	}
	if !strings.Contains(res.stderr, "sandbox: workspace-write, network allowlist (1 host), 1 extra writable path") {
		t.Errorf("summary line:\n%s", res.stderr)
	}
	// The cache is the operator's own writable path: drop it from the
	// outside checks, which the other writes must pass.
	_ = os.RemoveAll(cache)
	h.assertSafe()
}
