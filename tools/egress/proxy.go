package egress

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
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
// through Dialer, the same guard the web tools use, so a name never leads
// to a private, loopback or metadata address the allowlist does not name.
type Proxy struct {
	// Dialer holds the policy and makes every upstream connection; its
	// Via names the proxy's clients in decisions ("proxy" when empty: the
	// shell's sandbox; "mcp:NAME" for a server's own).
	Dialer Dialer
	// OnDecision, when set, is called once per request with the decision,
	// from the goroutine serving it.
	OnDecision func(Decision)

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	server *http.Server
	closed bool
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
	d := p.Dialer.Policy.Decide(host, port, cmp.Or(p.Dialer.Via, "proxy"))
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

// refused answers an allowed name whose connection the dialer refused or
// could not make, and reports the final decision.
func (p *Proxy) refused(w http.ResponseWriter, d Decision, err error) {
	var re *RefusedError
	if errors.As(err, &re) {
		d.Allowed, d.Reason = false, re.Decision.Reason
		p.report(d)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Guildhall-Egress", "denied")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "guildhall sandbox: %s\n", re.Decision.Reason)
		return
	}
	d.Reason = "allowed, but the connection failed: " + err.Error()
	p.report(d)
	http.Error(w, "guildhall proxy: could not connect to "+d.Host+": "+err.Error()+"\n", http.StatusBadGateway)
}

// dial connects to an allowed destination and reports the decision; a
// connection the dialer refused or could not make is answered (refused).
func (p *Proxy) dial(w http.ResponseWriter, r *http.Request, d Decision) (net.Conn, bool) {
	up, err := p.Dialer.DialContext(r.Context(), "tcp", net.JoinHostPort(d.Host, strconv.Itoa(d.Port)))
	if err != nil {
		p.refused(w, d, err)
		return nil, false
	}
	p.report(d)
	return up, true
}

// tunnel serves an allowed CONNECT.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request, d Decision) {
	up, ok := p.dial(w, r, d)
	if !ok {
		return
	}
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
	Pipe(client, up, buf.Reader)
}

// Pipe copies bytes both ways between client and up, half-closing each
// side as the other's stream ends, and returns when both have: the
// proxy's CONNECT tunnel and the sandbox's bridge to this proxy.
// from is what to read the client's bytes from: client itself, or a
// reader holding what it sent after its request, already buffered.
func Pipe(client, up net.Conn, from io.Reader) {
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
	up, ok := p.dial(w, r, d)
	if !ok {
		return
	}
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
		// One request, one upstream connection: the one the dialer checked.
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
