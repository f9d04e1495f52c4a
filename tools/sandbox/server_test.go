package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/egresstest"
	"github.com/guildhall/guildhall/tools/egress"
)

// syncBuffer is a bytes.Buffer safe for a process's stderr copier.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serverPolicy builds a server's own policy.
func serverPolicy(t *testing.T, c Config) Policy {
	t.Helper()
	p, err := NewPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// probeServer starts sh -c script as a server, sends one line, and reads
// everything the server prints up to the echo of that line.
func probeServer(t *testing.T, sb *Sandbox, spec ServerSpec) string {
	t.Helper()
	srv, err := sb.StartServer(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if _, err := io.WriteString(srv.Stdin, "PING-LINE\n"); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	got := make(chan struct{})
	go func() {
		defer close(got)
		sc := bufio.NewScanner(srv.Stdout)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if sc.Text() == "PING-LINE" {
				return
			}
		}
	}()
	select {
	case <-got:
	case <-time.After(20 * time.Second):
		srv.Stop()
		<-got
		t.Fatalf("the server did not answer: %s", out.String())
	}
	return out.String()
}

// A server runs in a sandbox of its own: its own HOME, the environment it
// was given and nothing of Guildhall's, no network, the workspace as its
// policy says, .git and everything outside read-only; and it talks over
// its stdin and stdout.
func TestServerIsConfined(t *testing.T) {
	needBwrap(t)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "secret.txt"), []byte("HOME-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("GUILDHALL_TEST_CANARY", "CANARY-IN-GUILDHALL-ENV")
	outside := t.TempDir()
	hostLoop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "HOST-LOOPBACK") }))
	defer hostLoop.Close()

	sb, ws := openSandbox(t, Config{})
	if err := os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := `echo "home=$HOME"; cat "` + home + `/secret.txt" 2>&1; env | sort | sed 's/^/env:/'
curl -s -m 3 ` + hostLoop.URL + ` || echo "net:refused"
touch ` + outside + `/x 2>/dev/null && echo "outside:written" || echo "outside:refused"
touch .git/hooks/pre-commit 2>/dev/null && echo "git:written" || echo "git:refused"
touch ws-file 2>/dev/null && echo "ws:written" || echo "ws:refused"
echo "cwd=$(pwd)"
exec cat`
	for _, mode := range []string{"workspace-write", "read-only"} {
		t.Run(mode, func(t *testing.T) {
			out := probeServer(t, sb, ServerSpec{Name: "probe", Argv: []string{"sh", "-c", script},
				Env: []string{"PATH=/usr/bin:/bin", "SERVER_TOKEN=declared-value"}, Policy: serverPolicy(t, Config{Mode: mode})})
			for _, bad := range []string{"HOME-SECRET", "CANARY-IN-GUILDHALL-ENV", "HOST-LOOPBACK", "outside:written", "git:written"} {
				if strings.Contains(out, bad) {
					t.Errorf("the server saw or did %q:\n%s", bad, out)
				}
			}
			for _, want := range []string{"env:SERVER_TOKEN=declared-value", "env:PATH=/usr/bin:/bin", "env:TMPDIR=/tmp", "home=" + home, "net:refused", "cwd=" + ws, "PING-LINE"} {
				if !strings.Contains(out, want) {
					t.Errorf("want %q in:\n%s", want, out)
				}
			}
			wantWS := map[string]string{"workspace-write": "ws:written", "read-only": "ws:refused"}[mode]
			if !strings.Contains(out, wantWS) {
				t.Errorf("workspace in %s mode: want %s in:\n%s", mode, wantWS, out)
			}
			for _, line := range strings.Split(out, "\n") {
				name, _, _ := strings.Cut(strings.TrimPrefix(line, "env:"), "=")
				if strings.HasPrefix(line, "env:") && !map[string]bool{"PATH": true, "SERVER_TOKEN": true, "HOME": true, "TMPDIR": true, "PWD": true}[name] {
					t.Errorf("unexpected variable in the server's environment: %s", line)
				}
			}
		})
	}
}

// Stop ends the server and every process it started, daemons that left
// its session included; the server's scratch folder goes with it.
func TestServerStopKillsEverything(t *testing.T) {
	needBwrap(t)
	sb, ws := openSandbox(t, Config{})
	beat := filepath.Join(ws, "beat")
	script := `setsid sh -c 'while :; do echo x >> ` + beat + `; sleep 0.05; done' >/dev/null 2>&1 < /dev/null &
sleep 300 & exec cat`
	srv, err := sb.StartServer(ServerSpec{Name: "daemon", Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, Policy: serverPolicy(t, Config{})})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { fi, err := os.Stat(beat); return err == nil && fi.Size() > 0 })
	scratch := srv.scratch
	start := time.Now()
	srv.Stop()
	if d := time.Since(start); d > serverExitGrace+3*time.Second {
		t.Errorf("Stop took %s", d)
	}
	select {
	case <-srv.Done():
	default:
		t.Fatal("Stop returned before the server exited")
	}
	fi1, _ := os.Stat(beat)
	time.Sleep(300 * time.Millisecond)
	fi2, _ := os.Stat(beat)
	if fi2.Size() != fi1.Size() {
		t.Error("a daemon of the server outlived Stop")
	}
	if _, err := os.Stat(scratch); err == nil {
		t.Errorf("the server's scratch folder %s is left", scratch)
	}
}

// A server that cannot start, or that dies, is seen through Done and its
// status; the exec helper names the program it could not find.
func TestServerThatCannotStart(t *testing.T) {
	needBwrap(t)
	sb, _ := openSandbox(t, Config{})
	var stderr syncBuffer
	srv, err := sb.StartServer(ServerSpec{Name: "missing", Argv: []string{"no-such-mcp-server"}, Env: []string{"PATH=/usr/bin:/bin"},
		Policy: serverPolicy(t, Config{}), Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	select {
	case <-srv.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a server that cannot start is still running")
	}
	ee, ok := srv.ExitError().(*exec.ExitError)
	if !ok || ee.ExitCode() != 127 || !strings.Contains(stderr.String(), "cannot start no-such-mcp-server") {
		t.Errorf("exit %v, stderr %q", srv.ExitError(), stderr.String())
	}

	none, ws := openSandbox(t, Config{Mode: "none"})
	if _, err := none.StartServer(ServerSpec{Name: "missing", Argv: []string{"no-such-mcp-server"}, Env: []string{"PATH=/usr/bin:/bin"},
		Policy: serverPolicy(t, Config{})}); err == nil || !strings.Contains(err.Error(), "no-such-mcp-server: not found") {
		t.Errorf("unconfined missing program: %v", err)
	}
	// Unconfined, it is a plain process in the workspace, with exactly
	// the environment given.
	out := probeServer(t, none, ServerSpec{Name: "plain", Argv: []string{"sh", "-c", `echo "cwd=$(pwd) home=$HOME"; exec cat`},
		Env: []string{"PATH=/usr/bin:/bin"}, Policy: serverPolicy(t, Config{})})
	if !strings.Contains(out, "cwd="+ws+" home=\n") {
		t.Errorf("unconfined server: %q", out)
	}
	if _, err := none.StartServer(ServerSpec{Name: "bad name", Argv: []string{"true"}}); err == nil {
		t.Error("a server name with a space was accepted")
	}
}

// With an allowlist the server reaches the allowed hosts through a proxy
// of its own, and each decision is reported as the server's.
func TestServerAllowlist(t *testing.T) {
	needBwrap(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "SITE-ANSWERED %s", r.Host)
	}))
	defer site.Close()
	_, port, _ := net.SplitHostPort(site.Listener.Addr().String())
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	ws, _ = filepath.EvalSymlinks(ws)
	run, _ := NewPolicy(Config{})
	sb, err := NewHost().Open(Options{Policy: run, Workspace: ws,
		Resolver: egresstest.Resolver{"api.registry.test": {"93.184.216.34"}},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == "93.184.216.34:"+port {
				addr = site.Listener.Addr().String()
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	var mu sync.Mutex
	var seen []string
	script := `curl -s -m 5 http://api.registry.test:` + port + `/ok; echo; curl -s -m 5 http://denied.test/x; echo; env | grep '^HTTPS_PROXY='; exec cat`
	out := probeServer(t, sb, ServerSpec{Name: "web", Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"},
		Policy: serverPolicy(t, Config{Network: "allowlist", Allow: []string{"api.registry.test"}}),
		OnEgress: func(d egress.Decision) {
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s:%d allowed=%v via=%s", d.Host, d.Port, d.Allowed, d.Via))
			mu.Unlock()
		}})
	if !strings.Contains(out, "SITE-ANSWERED api.registry.test") || !strings.Contains(out, "denied.test (port 80) is not on the network allowlist") ||
		!strings.Contains(out, "HTTPS_PROXY=http://127.0.0.1:") {
		t.Errorf("server output:\n%s", out)
	}
	mu.Lock()
	got := strings.Join(seen, "\n")
	mu.Unlock()
	for _, want := range []string{"api.registry.test:" + port + " allowed=true via=mcp:web", "denied.test:80 allowed=false via=mcp:web"} {
		if !strings.Contains(got, want) {
			t.Errorf("decisions lack %q:\n%s", want, got)
		}
	}
}

// Closing the run's sandbox stops the servers still running.
func TestSandboxCloseStopsServers(t *testing.T) {
	needBwrap(t)
	sb, _ := openSandbox(t, Config{})
	srv, err := sb.StartServer(ServerSpec{Name: "idle", Argv: []string{"sh", "-c", "trap '' TERM; exec sleep 300"}, Env: []string{"PATH=/usr/bin:/bin"}, Policy: serverPolicy(t, Config{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.Done():
	default:
		t.Fatal("a server outlived its run's sandbox")
	}
	if _, err := sb.StartServer(ServerSpec{Name: "late", Argv: []string{"true"}, Policy: serverPolicy(t, Config{})}); err == nil {
		t.Error("a closed sandbox started a server")
	}
}

func TestExecHelperRefusesToRunOutsideTheSandbox(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, ExecCommand, "--", "true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(out.String(), "only runs inside the sandbox") {
		t.Errorf("%v: %s", err, out.String())
	}
	for _, args := range [][]string{nil, {"--"}, {"--proxy"}, {"--proxy", "/s", "true"}} {
		if _, _, err := parseExecArgs(args); err == nil {
			t.Errorf("exec arguments %q accepted", args)
		}
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
