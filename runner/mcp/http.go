package mcp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/guildhall/guildhall/tools/egress"
)

// maxResponseBytes bounds one HTTP response body from a server.
const maxResponseBytes = 8 << 20

// httpClient is the client of one HTTP server. It takes no proxy from the
// environment, follows no redirect (a redirect would carry the headers,
// an Authorization among them, somewhere unconfigured), caps headers and
// bodies, and reports every connection as an egress decision of the
// server. The operator's own server is an endpoint the operator chose, as
// the model endpoint is, and is dialled directly; a server a workspace's
// file declared must pass the run's egress policy (sandbox.allow), with
// the same address checks as fetch_url: its URL is a destination the
// workspace chose.
func (m *Manager) httpClient(name string, c Config) *http.Client {
	via := "mcp:" + name
	report := func(d egress.Decision) {
		if m.opts.OnEgress != nil {
			m.opts.OnEgress(name, d)
		}
	}
	var dial egress.DialFunc
	if c.FromWorkspace {
		guard := &egress.Dialer{Policy: m.opts.Egress, Via: via, Resolver: m.opts.Resolver, Dial: m.opts.Dial, OnRefused: report}
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, port, ok := splitHostPort(addr); ok {
				if d := m.opts.Egress.Decide(host, port, via); d.Allowed {
					report(d)
				}
			}
			return guard.DialContext(ctx, network, addr)
		}
	} else {
		base := m.opts.Dial
		if base == nil {
			base = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
		}
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, port, ok := splitHostPort(addr); ok {
				report(egress.Decision{Host: host, Port: port, Allowed: true, Via: via, Rule: "mcpServers." + name + ".url (your configuration)"})
			}
			return base(ctx, network, addr)
		}
	}
	tr := &http.Transport{
		Proxy: nil, DialContext: dial, ForceAttemptHTTP2: true,
		TLSHandshakeTimeout: 10 * time.Second, MaxResponseHeaderBytes: 64 << 10, IdleConnTimeout: 90 * time.Second,
	}
	return &http.Client{
		Transport: &headerTransport{base: tr, headers: c.Headers},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("the MCP server answered with a redirect, which is not followed; configure the URL it redirects to")
		},
	}
}

func splitHostPort(addr string) (string, int, bool) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, false
	}
	port, err := strconv.Atoi(p)
	return host, port, err == nil
}

// headerTransport adds the configured headers to every request and caps
// every response body.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: maxResponseBytes}
	return resp, nil
}

// cappedBody fails a read past its limit: a response larger than that is
// an error, not a partial message.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 && err != nil {
			return 0, err // the body ended exactly at the cap
		}
		return 0, errors.New("the MCP server's response is larger than 8 MiB")
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
