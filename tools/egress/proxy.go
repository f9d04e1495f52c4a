package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proxy is the HTTP/HTTPS proxy that sandboxed commands reach the network
// through (CONNECT host:port, and absolute-URI HTTP requests). It decides
// on the host name the client asked for, before resolving or connecting,
// reports every decision through OnDecision, and answers a refusal with a
// 403 whose body says why and how to allow the host. Connections go
// through Guard, so a name never leads to a private or loopback address
// the allowlist does not name.
type Proxy struct {
	Guard Guard
	// OnDecision, when set, is called once per request with the decision,
	// from the goroutine serving it.
	OnDecision func(Decision)

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	server *http.Server
	closed bool
}

// Guard connects to allowed destinations only. Policy says which hosts;
// Resolver (default net.DefaultResolver) and Dial (default a net.Dialer
// with a 10 s timeout) are injectable for tests.
type Guard struct {
	Policy   Policy
	Resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// RefusedError is a connection Guard would not make, with the reason.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

// Connect opens a TCP connection to host:port, which the caller has
// already checked against the policy by name. An IP literal is dialled as
// it is (the policy allowed that address). A name is resolved once, and
// only its public addresses are dialled, by address, so a second lookup
// cannot point it elsewhere: loopback, private, link-local (cloud metadata),
// CGNAT, multicast and unspecified addresses are skipped unless an
// allowlist rule names that address itself.
func (g *Guard) Connect(ctx context.Context, host string, port int) (net.Conn, error) {
	dial := g.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second}
		dial = d.DialContext
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return dial(ctx, "tcp", netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
	}
	var resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	} = net.DefaultResolver
	if g.Resolver != nil {
		resolver = g.Resolver
	}
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	var skipped []string
	var lastErr error
	for _, a := range addrs {
		a = a.Unmap()
		if internal(a) {
			if ok, _ := g.Policy.Allows(a.String(), port); !ok {
				skipped = append(skipped, a.String())
				continue
			}
		}
		c, err := dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	if lastErr != nil {
		return nil, lastErr
	}
	if len(skipped) > 0 {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s resolves only to internal addresses (%s); an allowlist entry for a host name never reaches loopback, private or link-local addresses unless the address itself is allowed too",
			host, strings.Join(skipped, ", "))}
	}
	return nil, fmt.Errorf("resolve %s: no addresses", host)
}

// internal reports addresses a host name must not lead to: loopback,
// private (RFC 1918, unique local), link-local (including 169.254.169.254,
// cloud metadata), shared CGNAT space, this-network, multicast,
// unspecified, and IPv6 forms that embed an IPv4 address (NAT64, 6to4).
func internal(a netip.Addr) bool {
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range internalPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

var internalPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("::/96"),
}

// Serve answers proxy requests on l until Close.
func (p *Proxy) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return net.ErrClosed
	}
	p.server = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          nil,
	}
	srv := p.server
	p.mu.Unlock()
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops serving and cuts every open tunnel.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	srv := p.server
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	if srv != nil {
		return srv.Close()
	}
	return nil
}

// track registers a hijacked or upstream connection so that Close cuts
// it; it refuses once the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if p.conns == nil {
		p.conns = map[net.Conn]struct{}{}
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// ServeHTTP handles one proxy request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, port, err := target(r)
	if err != nil {
		http.Error(w, "guildhall proxy: "+err.Error()+"\n", http.StatusBadRequest)
		return
	}
	d := p.Guard.Policy.Decide(host, port, "proxy")
	if d.Allowed {
		// Decided by name; the connection itself may still be refused.
		if r.Method == http.MethodConnect {
			p.tunnel(w, r, d)
			return
		}
		p.forward(w, r, d)
		return
	}
	p.report(d)
	refuse(w, d)
}

func (p *Proxy) report(d Decision) {
	if p.OnDecision != nil {
		p.OnDecision(d)
	}
}

// target is the host and port a proxy request asks for.
func target(r *http.Request) (string, int, error) {
	if r.Method == http.MethodConnect {
		host, portText, err := net.SplitHostPort(r.Host)
		if err != nil {
			return "", 0, fmt.Errorf("CONNECT needs host:port, got %q", r.Host)
		}
		port, err := strconv.Atoi(portText)
		if err != nil || port < 1 || port > 65535 {
			return "", 0, fmt.Errorf("CONNECT port %q is not a number from 1 to 65535", portText)
		}
		return host, port, nil
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		return "", 0, errors.New("this is a proxy: send an absolute http:// URL, or CONNECT host:port for https")
	}
	host, port := r.URL.Hostname(), 80
	if ps := r.URL.Port(); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("port %q is not a number from 1 to 65535", ps)
		}
		port = n
	}
	return host, port, nil
}

// refuse answers a denied request.
func refuse(w http.ResponseWriter, d Decision) {
	name := d.Host
	if strings.Contains(name, ":") {
		name = "[" + name + "]"
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Guildhall-Egress", "denied")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "guildhall sandbox: %s (port %d) is not on the network allowlist, so the request was refused before any connection was made.\n"+
		"To allow it, the operator adds it to sandbox.allow in deployment.json, e.g.\n"+
		"  \"sandbox\": {\"network\": \"allowlist\", \"allow\": [\"%s:%d\"]}\n", name, d.Port, name, d.Port)
}

// refused answers an allowed name whose connection Guard refused or could
// not make, and reports the final decision.
func (p *Proxy) refused(w http.ResponseWriter, d Decision, err error) {
	var re *RefusedError
	if errors.As(err, &re) {
		d.Allowed, d.Reason = false, re.Reason
		p.report(d)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Guildhall-Egress", "denied")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "guildhall sandbox: %s\n", re.Reason)
		return
	}
	d.Reason = "allowed, but the connection failed: " + err.Error()
	p.report(d)
	http.Error(w, "guildhall proxy: could not connect to "+d.Host+": "+err.Error()+"\n", http.StatusBadGateway)
}

// tunnel serves an allowed CONNECT.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request, d Decision) {
	up, err := p.Guard.Connect(r.Context(), d.Host, d.Port)
	if err != nil {
		p.refused(w, d, err)
		return
	}
	p.report(d)
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "guildhall proxy: cannot tunnel on this connection", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(client) || !p.track(up) {
		client.Close()
		up.Close()
		return
	}
	defer p.untrack(client)
	defer p.untrack(up)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	pipe(client, up, buf.Reader)
}

// pipe copies both ways until either side ends; from carries bytes the
// client sent after its request, already buffered.
func pipe(client, up net.Conn, from *bufio.Reader) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, from); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, up); closeWrite(client); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// forward serves an allowed absolute-URI HTTP request.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, d Decision) {
	up, err := p.Guard.Connect(r.Context(), d.Host, d.Port)
	if err != nil {
		p.refused(w, d, err)
		return
	}
	p.report(d)
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.untrack(up)
	used := false
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			pr.Out.Host = pr.In.URL.Host
			pr.Out.Header.Del("Proxy-Authorization")
			pr.Out.Header.Del("Proxy-Connection")
		},
		// One request, one upstream connection: the one Guard made.
		Transport: &http.Transport{
			Proxy: nil,
			DialContext: func(context.Context, string, string) (net.Conn, error) {
				if used {
					return nil, errors.New("the checked connection was already used")
				}
				used = true
				return up, nil
			},
			DisableKeepAlives:     true,
			ResponseHeaderTimeout: 60 * time.Second,
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "guildhall proxy: "+err.Error()+"\n", http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(w, r)
}
