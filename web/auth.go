package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Every server requires its access token on every route, loopback or not.
// Loopback is not a boundary on a shared host: any process of any user can
// connect to 127.0.0.1, and a workspace script can leave a daemon behind
// that reads the port from Guildhall's command line. The token is drawn in
// this process and never passed on a command line.
//
// A request proves it holds the token in one of three ways:
//
//   - the first visit of the page, GET /?token=T, as in the printed URL: the
//     answer sets the access cookie and redirects to the same URL without
//     the token, so it leaves the address bar;
//   - the access cookie, which the browser then sends with every same-origin
//     request under the console's prefix (fetch, EventSource, scripts,
//     styles);
//   - Authorization: Bearer T, for programmatic clients.
//
// The query form is accepted on GET / only: a token in an API or asset URL
// would end up in logs and history, so there it is no credential at all.
//
// The cookie's path is a prefix drawn per server start, /s/RANDOM/ (see
// prefix.go): cookies are scoped by host, not port, so a cookie with path
// "/" would go to every server on 127.0.0.1 — among them a hostile one on
// another port that the operator's browser visits. The first visit
// redirects to the prefix, and the browser client uses relative URLs, so
// the page, its assets, its API calls and its event stream all live under
// it. Programmatic clients (attach, web/client) send the token as a Bearer
// header and use the routes at the root.
//
// No route is exempt, not even the favicon or the vendored assets: the
// browser sends the cookie with those requests anyway, and an open route
// would only tell a scanner on the host that a Guildhall listens here.

const (
	// tokenBytes is the token's entropy: 256 bits, hex-encoded.
	tokenBytes = 32
	// tokenParam is the query parameter of the printed URL.
	tokenParam = "token"
	// cookiePrefix starts the access cookie's name; the port follows.
	cookiePrefix = "guildhall_token_"
)

// newToken draws a fresh access token.
func newToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("web: access token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// cookieName is the access cookie's name for a server on port. Cookies are
// scoped by host, not by port, so two Guildhall servers on one host would
// overwrite each other's cookie under a shared name.
func cookieName(port string) string {
	return cookiePrefix + port
}

// accessCookie is the cookie a first visit sets. It is HttpOnly (no script
// can read it), SameSite=Strict (no other site's page can make the browser
// send it) and a session cookie (the token dies with the process anyway).
// It cannot be Secure: the console is plain http on loopback, and a Secure
// cookie would never be sent back.
// Its path is the server's prefix, so no other server on the host gets it.
func accessCookie(name, token, prefix string) *http.Cookie {
	return &http.Cookie{Name: name, Value: token, Path: prefix + "/", HttpOnly: true, SameSite: http.SameSiteStrictMode}
}

// tokenEqual compares in constant time. The length is not secret (every
// token is 64 hex digits), so a length mismatch may return early.
func tokenEqual(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// authOutcome is what authenticate decided.
type authOutcome int

const (
	authRefused authOutcome = iota
	authOK
	authAnswered // the first visit: the redirect has been written
)

// authenticate checks the request's credential. An explicit credential
// that is wrong (a bad Authorization header, a bad ?token= on the page) is
// refused even when a good cookie is also present: a client that sends a
// credential means that one.
func (g *guard) authenticate(w http.ResponseWriter, r *http.Request) authOutcome {
	if h, ok := r.Header["Authorization"]; ok {
		if len(h) == 1 && tokenEqual(bearer(h[0]), g.token) {
			return authOK
		}
		return authRefused
	}
	if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return authRefused
		}
		if got, ok := q[tokenParam]; ok {
			if len(got) != 1 || !tokenEqual(got[0], g.token) {
				return authRefused
			}
			g.firstVisit(w, r, q)
			return authAnswered
		}
	}
	// Every cookie of this name counts, not just the first: another server
	// on this host (any port) can set a decoy of the same name with a
	// longer path, which the browser sends first.
	for _, c := range r.CookiesNamed(g.cookieName(r)) {
		if tokenEqual(c.Value, g.token) {
			return authOK
		}
	}
	return authRefused
}

// bearer is the credential of an "Authorization: Bearer T" header, "" for
// any other form. The scheme is case-insensitive (RFC 9110 §11.1); the
// token is not.
func bearer(h string) string {
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return cred
}

// cookieName is the access cookie's name: by the bound port, or — before
// the server is bound — by the port the (already checked) Host names.
func (g *guard) cookieName(r *http.Request) string {
	if g.port != "" {
		return cookieName(g.port)
	}
	_, port, _ := net.SplitHostPort(r.Host)
	return cookieName(port)
}

// firstVisit sets the access cookie and sends the browser to the page
// under the prefix, without the token (303, so a reload does not resend
// it). The other query parameters are kept.
func (g *guard) firstVisit(w http.ResponseWriter, r *http.Request, q url.Values) {
	http.SetCookie(w, accessCookie(g.cookieName(r), g.token, g.prefix))
	q.Del(tokenParam)
	clean := url.URL{Path: g.prefix + "/", RawQuery: q.Encode()}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, clean.String(), http.StatusSeeOther)
}

// unauthorizedPage is what a browser without the token sees. It names no
// token, cookie or parameter: it only says where the way in is.
const unauthorizedPage = `Guildhall: this console needs its access link.

Open the URL that Guildhall printed when it started (in its terminal, or on
its standard error). That link lets this browser in; a bookmark or a copied
address without it does not, and neither does a link from a previous run.
`

// refuse answers a request without a valid credential: JSON for the API,
// a short plain page for everything else.
func refuse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="guildhall"`)
	if r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/") {
		writeError(w, http.StatusUnauthorized, "unauthorized")
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'")
	h.Set("Cache-Control", "no-store")
	page := unauthorizedPage
	if crossSiteNavigation(r) {
		h.Set("Content-Type", "text/html; charset=utf-8")
		page = retryPage
	} else {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(http.StatusUnauthorized)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, page)
	}
}

// crossSiteNavigation reports a top-level navigation of the page that
// another site started. The browser withholds a SameSite=Strict cookie on
// such a navigation and on the redirects that follow it, so the operator
// who follows the printed URL from a chat or a wiki page arrives at / from
// the first visit's redirect without the cookie that visit just set.
func crossSiteNavigation(r *http.Request) bool {
	return r.URL.Path == "/" && r.Header.Get("Sec-Fetch-Site") == "cross-site" &&
		r.Header.Get("Sec-Fetch-Mode") == "navigate"
}

// retryPage is the refusal of a cross-site navigation: it reloads itself
// once. The reload is started by this origin, so the browser sends the
// Strict cookie if it has one; if it has none, the reload is same-origin
// and gets the plain refusal, so there is no loop. Nothing in it comes
// from the request. A meta refresh is no script, so the CSP stays
// default-src 'none'.
var retryPage = `<!doctype html>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0">
<title>Guildhall</title>
<pre>` + unauthorizedPage + `</pre>
`
