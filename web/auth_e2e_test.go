package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/web/webtest"
)

// TestBrowserTokenBecomesAnHttpOnlyCookie opens the printed URL in
// headless Chromium: the console loads, the token leaves the address bar
// and the tab's history, the browser holds it only as an HttpOnly,
// SameSite=Strict cookie that page script cannot read, and a reload
// without the token still runs the live console on that cookie. A browser
// without the cookie gets the refusal page, and its script cannot reach
// the API.
func TestBrowserTokenBecomesAnHttpOnlyCookie(t *testing.T) {
	browser := webtest.Browser(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, url, token := demoServerToken(t, ctx)
	base, _, _ := strings.Cut(url, "?")
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/"))
	if _, err := sess.Submit(ctx, runner.Submission{Task: seed.DemoTask()}); err != nil {
		t.Fatal(err)
	}

	page := webtest.OpenPage(t, browser, 2*time.Minute)
	defer page.Close()
	page.Do(chromedp.Navigate(url))
	page.Poll("the console", `document.querySelector(".top-bar") !== null`)
	home := page.Eval(`location.href`)
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(base) + `s/[0-9a-f]{32}/$`).MatchString(home) {
		t.Errorf("address bar %q, want %ss/RANDOM/ (no token)", home, base)
	}
	prefix := strings.TrimSuffix(strings.TrimPrefix(home, strings.TrimSuffix(base, "/")), "/")
	if got := page.Eval(`document.cookie`); strings.Contains(got, token) || got != "" {
		t.Errorf("document.cookie exposes %q", got)
	}
	if n := len(page.Cookies(base)); n != 0 {
		t.Errorf("the browser holds %d cookies for the root: the cookie must be scoped to the prefix", n)
	}
	cookies := page.Cookies(home)
	if len(cookies) != 1 {
		t.Fatalf("cookies %+v", cookies)
	}
	c := cookies[0]
	if c.Name != "guildhall_token_"+port || c.Value != token || !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict ||
		c.Path != prefix+"/" || !c.Session || c.Secure || c.Domain != "127.0.0.1" {
		t.Errorf("cookie %+v", c)
	}

	page.Do(chromedp.Reload())
	page.Poll("flow graph nodes after the reload", `document.querySelectorAll(".flow-graph .graph-node").length >= 2`)
	page.Poll("the question after the reload", `document.querySelector(".question-modal .question-text") !== null`)
	if got := page.Eval(`location.href`); got != home {
		t.Errorf("address bar after the reload %q", got)
	}
	hist, err := chromedp.Run(page.Ctx, chromedp.NavigationEntries())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hist.Entries {
		if strings.Contains(e.URL, token) {
			t.Errorf("the tab's history holds the token: %s", e.URL)
		}
	}

	// The cookie goes (the server restarted, say): the next request is
	// refused, the page says how to get back in, and the answer it tried
	// to send did not count.
	if _, err := chromedp.Call(page.Ctx, network.DeleteCookies, network.DeleteCookiesParams{Name: c.Name, URL: home}); err != nil {
		t.Fatal(err)
	}
	page.Do(chromedp.Click(`//button[contains(@class,"option")][.//span[text()="Only fix the failing tests"]]`))
	page.Poll("the lost-access banner", `document.querySelector(".auth-banner") !== null`)
	if got := page.Eval(`document.querySelector(".auth-banner").textContent`); !strings.Contains(got, "Open the URL that Guildhall printed") {
		t.Errorf("banner %q", got)
	}
	if qs := sess.Questions(); len(qs) != 1 {
		t.Errorf("the question was answered without the cookie: %d pending", len(qs))
	}
	for _, p := range page.Close() {
		if !strings.Contains(p, "status of 401") {
			t.Errorf("console: %s", p)
		}
	}

	// Another browser, with the address but not the token.
	stranger := webtest.OpenIsolatedPage(t, browser, time.Minute)
	defer stranger.Close()
	stranger.Do(chromedp.Navigate(base))
	stranger.Poll("the refusal page", `document.body !== null && document.body.innerText.includes("Open the URL that Guildhall printed")`)
	if got := stranger.Eval(`document.body.innerText`); strings.Contains(got, token) {
		t.Error("the refusal page shows the token")
	}
	for _, u := range []string{base + "api/questions", home + "api/questions"} {
		res, err := chromedp.Run(stranger.Ctx, chromedp.NavigateResponse(u))
		if err != nil || res.Status != http.StatusUnauthorized {
			t.Errorf("a browser without the cookie opened %s: %v %v", u, res, err)
		}
	}
	if n := len(stranger.Cookies(base, home)); n != 0 {
		t.Errorf("the stranger was given %d cookies", n)
	}
	stranger.Close() // its own console errors are the expected 401s
}

// otherSite serves the HTML page(r) answers every request with on a fresh
// loopback port, until the test ends, and returns its host:port: a site
// other than the console's, on this machine.
func otherSite(t *testing.T, page func(r *http.Request) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := page(r)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestBrowserLinkFromAnotherSite: the operator follows the printed URL from
// a page of another site (a chat, a wiki). The cookie is SameSite=Strict,
// which a browser withholds on a cross-site navigation and its redirects,
// so the console must still come up, and a page of that other site must
// not get in by linking to the console without the token.
func TestBrowserLinkFromAnotherSite(t *testing.T) {
	browser := webtest.Browser(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, url, token := demoServerToken(t, ctx)
	base, _, _ := strings.Cut(url, "?")

	// localhost and 127.0.0.1 are different sites to the browser.
	_, otherPort, _ := net.SplitHostPort(otherSite(t, func(r *http.Request) string {
		target := base
		if r.URL.Path == "/with-token" {
			target = url
		}
		return fmt.Sprintf(`<!doctype html><a id="go" href="%s">the console</a>`, target)
	}))

	for _, tc := range []struct {
		from   string
		wantIn bool
	}{
		{"/with-token", true},
		{"/without", false},
	} {
		page := webtest.OpenIsolatedPage(t, browser, time.Minute)
		page.Do(chromedp.Navigate("http://localhost:" + otherPort + tc.from))
		page.Poll("the link", `document.getElementById("go") !== null`)
		page.Eval(`(() => { document.getElementById("go").click(); return ""; })()`)
		if tc.wantIn {
			page.PollNavigating("the console from a cross-site link", `location.origin + "/" === "`+base+`" && document.querySelector(".top-bar") !== null`)
			if got := page.Eval(`location.href`); strings.Contains(got, token) {
				t.Errorf("address bar %q keeps the token", got)
			}
			// The one expected error: the redirected navigation's 401,
			// before the refresh that carries the cookie.
			for _, p := range page.Close() {
				if !strings.Contains(p, "status of 401") || !strings.Contains(p, "("+base+"s/") {
					t.Errorf("console: %s", p)
				}
			}
			continue
		}
		page.PollNavigating("the refusal page", `location.origin + "/" === "`+base+`" && document.body.innerText.includes("Open the URL that Guildhall printed")`)
		page.Close()
	}
}

// TestBrowserCookieStaysWithItsPrefix: a hostile server on another
// loopback port, which the operator's browser visits after opening the
// console, never receives the access cookie. Cookies ignore ports, so
// only the cookie's path, the console's random prefix, keeps it there: the
// same browser visiting that server under the prefix does send it, which
// shows the check below can fail.
func TestBrowserCookieStaysWithItsPrefix(t *testing.T) {
	browser := webtest.Browser(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, url, token := demoServerToken(t, ctx)
	base, _, _ := strings.Cut(url, "?")

	got := make(chan string, 64) // the Cookie headers the hostile server saw, by path
	hostile := "http://" + otherSite(t, func(r *http.Request) string {
		got <- r.URL.Path + " " + r.Header.Get("Cookie")
		return `<!doctype html><title>hostile</title><img src="/s/guess/pixel.png"><p>hello</p>`
	})

	page := webtest.OpenPage(t, browser, time.Minute)
	defer page.Close()
	page.Do(chromedp.Navigate(url))
	page.Poll("the console", `document.querySelector(".top-bar") !== null`)
	home := page.Eval(`location.href`)
	prefix := strings.TrimPrefix(home, strings.TrimSuffix(base, "/"))
	if !strings.HasPrefix(prefix, "/s/") || len(page.Cookies(home)) != 1 {
		t.Fatalf("the console did not set its cookie under a prefix: %s %+v", home, page.Cookies(home))
	}
	seen := func() []string {
		var out []string
		for {
			select {
			case s := <-got:
				out = append(out, s)
			case <-time.After(300 * time.Millisecond):
				return out
			}
		}
	}
	for _, path := range []string{"/", "/api/questions", "/s/", "/static/app.js"} {
		page.Do(chromedp.Navigate(hostile + path))
		page.Poll("the hostile page", `document.body !== null && document.title === "hostile"`)
	}
	requests := seen()
	if len(requests) < 4 {
		t.Fatalf("the hostile server saw %d requests: %q", len(requests), requests)
	}
	for _, r := range requests {
		if strings.Contains(r, token) || strings.Contains(r, "guildhall_token_") {
			t.Errorf("the hostile server on another port received the cookie: %s", r)
		}
	}
	// The control: the same server, told the prefix, gets the cookie.
	page.Do(chromedp.Navigate(hostile + prefix))
	page.Poll("the hostile page under the prefix", `document.body !== null && document.title === "hostile"`)
	leaked := false
	for _, r := range seen() {
		leaked = leaked || strings.Contains(r, token)
	}
	if !leaked {
		t.Error("under the prefix the browser did not send the cookie to the other port: the check above proves nothing")
	}
}
