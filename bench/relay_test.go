package bench

import (
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
	"syscall"
	"testing"
)

// operatorKey is the key the relay adds; a leak is a plain substring.
const operatorKey = "sk-operator-RELAY-7d1f0c2b9e"

// upstream is a fake model endpoint that records the Authorization of
// every request it gets.
type upstream struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
	paths []string
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.auths, u.paths = append(u.auths, r.Header.Get("Authorization")), append(u.paths, r.URL.Path)
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"tiny-7b"}]}`)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) seen() ([]string, []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.auths...), append([]string(nil), u.paths...)
}

// relayGet sends one request to the relay over c and returns its status.
func relayGet(t *testing.T, c *http.Client, method, url, auth string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestRelayRefusesWhatIsNotItsBaseline: on loopback (an unconfined
// baseline) anyone can connect, so every request must carry the run's
// token and name an API route; the endpoint sees only the requests that
// do, with the operator's key and never the token.
func TestRelayRefusesWhatIsNotItsBaseline(t *testing.T) {
	up := newUpstream(t)
	rl, err := startRelay(up.URL+"/v1", operatorKey, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.close()
	base := "http://" + rl.addr
	c := http.DefaultClient
	good := "Bearer " + rl.token
	sameLength := "Bearer " + strings.Repeat("x", len(rl.token))
	for _, r := range []struct {
		method, path, auth string
		want               int
	}{
		{"GET", "/v1/models", "", 401},
		{"GET", "/v1/models", sameLength, 401},
		{"GET", "/v1/models", "Bearer " + operatorKey, 401},
		{"GET", "/v1/models", rl.token, 401}, // not a bearer token
		{"POST", "/v1/chat/completions", good + "0", 401},
		{"GET", "/v1/../admin", good, 404},
		{"GET", "/v1/%2e%2e/v1/models", good, 404},
		{"GET", "/v1/%6dodels", good, 404},
		{"GET", "/v1/models/../../secret", good, 404},
		{"GET", "//v1/models", good, 404},
		{"GET", "/v1/embeddings", good, 404},
		{"DELETE", "/v1/models", good, 404},
		{"GET", "/v1/chat/completions", good, 404},
	} {
		if got := relayGet(t, c, r.method, base+r.path, r.auth); got != r.want {
			t.Errorf("%s %s (auth %q): %d, want %d", r.method, r.path, r.auth, got, r.want)
		}
	}
	if auths, paths := up.seen(); len(auths) != 0 {
		t.Fatalf("refused requests reached the endpoint: %q %q", paths, auths)
	}
	if got := relayGet(t, c, "GET", base+"/v1/models", good); got != 200 {
		t.Fatalf("the baseline's own request: %d", got)
	}
	if got := relayGet(t, c, "POST", base+"/v1/chat/completions", good); got != 200 {
		t.Fatalf("the baseline's chat completion: %d", got)
	}
	auths, paths := up.seen()
	if len(auths) != 2 || auths[0] != "Bearer "+operatorKey || paths[0] != "/v1/models" || paths[1] != "/v1/chat/completions" {
		t.Errorf("the endpoint saw %q %q", paths, auths)
	}
	for _, a := range auths {
		if strings.Contains(a, rl.token) {
			t.Errorf("the relay's token reached the endpoint: %q", a)
		}
	}
	other, err := startRelay(up.URL+"/v1", operatorKey, false)
	if err != nil {
		t.Fatal(err)
	}
	defer other.close()
	if other.token == rl.token || len(rl.token) < 40 {
		t.Errorf("tokens %q and %q: want a fresh long one per run", rl.token, other.token)
	}
}

// relayProbeEnv makes the test binary a client of a relay (TestMain):
// the value is "tcp ADDR" or "unix PATH". It prints the status of a model
// list request without a token and with a guessed one, or why it could
// not connect.
const relayProbeEnv = "GUILDHALL_TEST_RELAY_PROBE"

func relayProbe() int {
	network, addr, _ := strings.Cut(os.Getenv(relayProbeEnv), " ")
	var d net.Dialer
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx, network, addr) }}}
	for _, auth := range []string{"", "Bearer ghrelay-guess"} {
		req, _ := http.NewRequest("GET", "http://relay/v1/models", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := c.Do(req)
		if err != nil {
			fmt.Printf("connect: %v\n", err)
			continue
		}
		resp.Body.Close()
		fmt.Printf("status %d\n", resp.StatusCode)
	}
	return 0
}

// TestRelayRefusesAnotherUser reproduces the attack: another user of the
// host (uid 65534) sends GET /v1/models to the relay. On loopback it is
// refused for want of the token; on the socket a confined baseline's proxy
// dials, it cannot even connect. The endpoint never hears of it.
func TestRelayRefusesAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a client as another user needs root")
	}
	// The test binary, where uid 65534 can run it.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "relay-probe-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(dir, "probe")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(probe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func(target string) string {
		t.Helper()
		cmd := exec.Command(probe)
		cmd.Dir = dir
		cmd.Env = []string{relayProbeEnv + "=" + target}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the probe as uid 65534: %v\n%s", err, out)
		}
		return string(out)
	}
	up := newUpstream(t)

	tcp, err := startRelay(up.URL+"/v1", operatorKey, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.close()
	if out := asNobody("tcp " + tcp.addr); out != "status 401\nstatus 401\n" {
		t.Errorf("another user on the loopback relay got:\n%s", out)
	}

	sock, err := startRelay(up.URL+"/v1", operatorKey, true)
	if err != nil {
		t.Fatal(err)
	}
	defer sock.close()
	if sock.addr != "" {
		t.Errorf("the relay of a confined baseline listens on %s", sock.addr)
	}
	out := asNobody("unix " + sock.sock)
	if strings.Count(out, "permission denied") != 2 {
		t.Errorf("another user reached the relay's socket:\n%s", out)
	}
	if auths, _ := up.seen(); len(auths) != 0 {
		t.Errorf("another user's requests reached the endpoint with %q", auths)
	}
	// The operator's own baseline, through the proxy's dial (which is
	// given the address modelHost resolved to), gets through.
	reach := sock.dial("127.0.0.1:" + relayPort)
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return reach(ctx, network, "127.0.0.1:"+relayPort)
	}}}
	if got := relayGet(t, c, "GET", "http://"+modelHost+":"+relayPort+"/v1/models", "Bearer "+sock.token); got != 200 {
		t.Errorf("the baseline through the socket: %d", got)
	}
	if _, err := reach(t.Context(), "tcp", "127.0.0.1:22"); err == nil {
		t.Error("the relay's dial reached another address")
	}
	sock.close()
	if _, err := os.Stat(sock.sockDir); err == nil {
		t.Error("the relay's socket folder outlived the run")
	}
}
