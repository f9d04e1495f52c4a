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
//   - Host must name the bound address: its port, and a host that is the
//     bound IP, a loopback equivalent (localhost, 127.0.0.1, ::1), or — when
//     bound to a wildcard address — any IP literal. A DNS name other than
//     localhost is refused, so a rebinding attacker's name never reaches an
//     API route.
//   - A state-changing request (POST, PUT, PATCH, DELETE) with an Origin
//     other than the page's own, or Sec-Fetch-Site cross-site/same-site, is
//     refused.
//   - Every request must carry the access token, loopback or not (see
//     auth.go).
//   - Bodies are capped at maxBody.
type guard struct {
	ip       net.IP // the bound IP; nil for "any loopback name" (unbound)
	port     string // "" accepts any port (unbound)
	wildcard bool
	token    string // never empty
}

// unboundGuard is the guard of a server not yet bound (Handler mounted by
// the caller): loopback names on any port, and still the token.
func unboundGuard(token string) *guard {
	return &guard{token: token}
}

func newGuard(addr *net.TCPAddr, token string) *guard {
	return &guard{ip: addr.IP, port: strconv.Itoa(addr.Port), wildcard: addr.IP.IsUnspecified(), token: token}
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
	if g.port != "" && port != g.port {
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
