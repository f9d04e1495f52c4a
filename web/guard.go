package web

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// guard is the server's front door:
//
//   - Host must be a loopback name (localhost, a loopback IP such as
//     127.0.0.1 or [::1]) on any port, or, on the bound port only, the
//     bound IP or — when bound to a wildcard address — any IP literal. Any
//     port for loopback names, because a port forward (ssh -L 19000:…,
//     VS Code's forwarding) makes the browser name its own local port; the
//     token is the credential, and DNS-rebinding protection only needs to
//     refuse names an attacker controls. Every other DNS name is refused on
//     every port, so a rebinding attacker's name never reaches an API route.
//   - A state-changing request (POST, PUT, PATCH, DELETE) with an Origin
//     other than the page's own (the Origin's host and port equal the Host
//     header, which passed the rule above), or Sec-Fetch-Site
//     cross-site/same-site, is refused. Through a forward, Origin and Host
//     both name the forward's port, so they still agree; an Origin naming
//     another loopback port is another page, and is refused.
//   - Every request must carry the access token, loopback or not (see
//     auth.go).
//   - The browser's pages live under the server's prefix (prefix.go),
//     which is stripped before routing.
//   - Bodies are capped at maxBody.
type guard struct {
	ip       net.IP // the bound IP; nil for "any loopback name" (unbound)
	port     string // "" accepts any port (unbound)
	wildcard bool
	token    string // never empty
	prefix   string // "/s/RANDOM", the page's home and the cookie's path
}

// unboundGuard is the guard of a server not yet bound (Handler mounted by
// the caller): loopback names on any port, and still the token.
func unboundGuard(token, prefix string) *guard {
	return &guard{token: token, prefix: prefix}
}

func newGuard(addr *net.TCPAddr, token, prefix string) *guard {
	return &guard{ip: addr.IP, port: strconv.Itoa(addr.Port), wildcard: addr.IP.IsUnspecified(), token: token, prefix: prefix}
}

// baseURL is the address of the console, without the token.
func (g *guard) baseURL() string {
	host := "127.0.0.1"
	if g.ip != nil && !g.ip.IsUnspecified() {
		host = g.ip.String()
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, g.port), Path: "/"}
	return u.String()
}

// url is the address to open in a browser: the first visit with the token.
func (g *guard) url() string {
	return g.baseURL() + "?" + tokenParam + "=" + g.token
}

func (g *guard) hostAllowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if port == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	switch {
	case ip.IsLoopback():
		return true
	case g.port != "" && port != g.port:
		return false
	case g.ip == nil:
		return false
	case g.wildcard:
		return true
	default:
		return ip.Equal(g.ip)
	}
}

func stateChanging(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// originAllowed reports whether a state-changing request comes from the
// page itself: no foreign Origin, and no cross-site fetch metadata.
func originAllowed(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser, or a same-origin GET-like request
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Path != "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

func (g *guard) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if !g.hostAllowed(r.Host) {
		writeError(w, http.StatusForbidden, "forbidden_host")
		return
	}
	if stateChanging(r.Method) && !originAllowed(r) {
		writeError(w, http.StatusForbidden, "forbidden_origin")
		return
	}
	// No page, answer or redirect of this server may hand its URL to
	// another site in a Referer, nor be framed by one.
	h := w.Header()
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	if r.URL.Path == g.prefix {
		// The page's own address needs its slash, for the relative URLs.
		// The asker already names the prefix, so this tells it nothing.
		u := url.URL{Path: g.prefix + "/", RawQuery: r.URL.RawQuery}
		http.Redirect(w, r, u.String(), http.StatusMovedPermanently)
		return
	}
	r, _ = stripPrefix(r, g.prefix)
	switch g.authenticate(w, r) {
	case authRefused:
		refuse(w, r)
		return
	case authAnswered:
		return
	}
	if r.ContentLength > maxBody {
		writeError(w, http.StatusRequestEntityTooLarge, "body_too_large")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	next.ServeHTTP(w, r)
}

// isTooLarge reports whether err came from the body cap.
func isTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
