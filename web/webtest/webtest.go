// Package webtest runs the browser client's in-browser tests (*.test.ts under
// web/static/ts) in headless Chromium and reports each as a Go subtest.
//
// A test file registers tests with test() from ts/testing.ts. For each file,
// the harness serves the client assets (built by web/assets, test entry
// points included) and a page that loads the vendored showdown and
// highlight.js as deferred classic scripts and then the file's bundle; the
// page runs the tests one after another and publishes window.__results.
// Console errors and uncaught exceptions of the page fail the file.
//
// The page runs under the client's Content-Security-Policy, as the console
// does, unless the file's leading comment holds the directive
// "// webtest: no-csp": files that feed hostile markup use it, so that a
// handler which slipped through would really run (and be caught), instead
// of being blocked by the CSP and reported as a violation.
//
// Chromium is /usr/bin/chromium. Without it the tests skip, except under
// CI=true, where they fail.
package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guildhall/guildhall/web/assets"
	"github.com/guildhall/guildhall/web/static"
)

// ChromiumPath is where the harness expects Debian's chromium package.
const ChromiumPath = "/usr/bin/chromium"

// suiteTimeout bounds one file's run, so that a hung page fails rather than
// stalling the test binary. It is a safety net, not an assertion.
const suiteTimeout = 5 * time.Minute

// Suite is a set of in-browser test files and what their page needs.
type Suite struct {
	// Files are test files under web/static/ts, such as "markdown.test.ts".
	// Each runs in its own fresh tab.
	Files []string
	// Data maps URL prefixes ("/testdata/xss/") to local directories, served
	// read-only to the page (fetch("/testdata/xss/x.json")).
	Data map[string]string
}

// RunBrowserTests runs the test files, each in-browser test as a subtest of t
// named FILE/TEST.
func RunBrowserTests(t *testing.T, files ...string) {
	t.Helper()
	Run(t, Suite{Files: files})
}

// RequireChromium returns ChromiumPath, or skips t when it is missing (fails
// under CI=true, where a missing browser must not pass silently).
func RequireChromium(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("webtest: %s is required under CI=true: %v", ChromiumPath, err)
		}
		t.Skipf("webtest: %s not found (apt-get install chromium); skipping browser tests", ChromiumPath)
	}
	return ChromiumPath
}

// Browser starts headless Chromium with a fresh profile and returns a
// chromedp context for it; the browser stops when t ends. Derive a tab with
// chromedp.NewContext(ctx). It skips t when Chromium is missing (see
// RequireChromium).
func Browser(t testing.TB) context.Context {
	t.Helper()
	exe := RequireChromium(t)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("webtest: start %s: %v", exe, err)
	}
	return ctx
}

// Run runs a suite; see Suite and RunBrowserTests.
func Run(t *testing.T, s Suite) {
	t.Helper()
	if len(s.Files) == 0 {
		t.Fatal("webtest: no test files")
	}
	browser := Browser(t)
	srv := httptest.NewServer(newHandler(t, s))
	t.Cleanup(srv.Close)
	for _, file := range s.Files {
		t.Run(file, func(t *testing.T) {
			runFile(t, browser, srv.URL, file)
		})
	}
}

// results is what ts/testing.ts publishes as window.__results.
type results struct {
	Done      bool   `json:"done"`
	LoadError string `json:"loadError"`
	Tests     []struct {
		Name  string `json:"name"`
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	} `json:"tests"`
}

func runFile(t *testing.T, browser context.Context, base, file string) {
	tab, cancelTab := chromedp.NewContext(browser)
	defer cancelTab()
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("open tab: %v", err)
	}

	console := WatchConsole(tab)

	ctx, cancel := context.WithTimeout(tab, suiteTimeout)
	defer cancel()
	page := base + "/__webtest/page?suite=" + strings.TrimSuffix(file, ".ts")
	raw, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (string, error) {
		if _, err := chromedp.Navigate(page)(ctx, tg); err != nil {
			return "", err
		}
		if _, err := chromedp.Poll[bool]("window.__results !== undefined && window.__results.done === true",
			chromedp.WithPollingTimeout(0), chromedp.WithPollingInterval(50*time.Millisecond))(ctx, tg); err != nil {
			return "", err
		}
		return chromedp.Evaluate[string]("JSON.stringify(window.__results)")(ctx, tg)
	})
	// Stop the console reader: cancel the tab and wait for the iterator to end.
	cancelTab()
	problems := console.Problems()
	if err != nil {
		t.Fatalf("run %s: %v\nconsole: %s", file, err, strings.Join(problems, "\n"))
	}

	var res results
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatalf("decode results of %s: %v", file, err)
	}
	if res.LoadError != "" {
		t.Fatalf("load %s: %s", file, res.LoadError)
	}
	if len(res.Tests) == 0 {
		t.Fatalf("%s registered no tests", file)
	}
	for _, tr := range res.Tests {
		t.Run(tr.Name, func(t *testing.T) {
			if !tr.OK {
				t.Error(tr.Error)
			}
		})
	}
	for _, p := range problems {
		t.Errorf("console: %s", p)
	}
}

// newHandler serves the client assets under /static/, the test page and its
// starter script under /__webtest/, and the suite's data directories.
func newHandler(t testing.TB, s Suite) http.Handler {
	a := assets.New(static.Files(), assets.WithTestSuites())
	noCSP := make(map[string]bool, len(s.Files)) // by suite name: "markdown.test"
	for _, f := range s.Files {
		if !strings.HasSuffix(f, ".ts") || !fs.ValidPath(f) {
			t.Fatalf("webtest: bad test file name %q (want a path under web/static/ts ending in .ts)", f)
		}
		src, err := fs.ReadFile(static.Files(), "ts/"+f)
		if err != nil {
			t.Fatalf("webtest: %v", err)
		}
		noCSP[strings.TrimSuffix(f, ".ts")] = hasDirective(string(src), "no-csp")
	}

	mux := http.NewServeMux()
	mux.Handle("/static/", http.StripPrefix("/static", a.Handler()))
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	suiteOf := func(w http.ResponseWriter, r *http.Request) (string, bool) {
		suite := r.URL.Query().Get("suite")
		if _, ok := noCSP[suite]; !ok {
			http.Error(w, "unknown suite", http.StatusNotFound)
			return "", false
		}
		return suite, true
	}
	mux.HandleFunc("/__webtest/page", func(w http.ResponseWriter, r *http.Request) {
		suite, ok := suiteOf(w, r)
		if !ok {
			return
		}
		if !noCSP[suite] {
			w.Header().Set("Content-Security-Policy", assets.ContentSecurityPolicy)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, testPage(suite))
	})
	mux.HandleFunc("/__webtest/start.js", func(w http.ResponseWriter, r *http.Request) {
		suite, ok := suiteOf(w, r)
		if !ok {
			return
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, startScript(suite))
	})
	for prefix, dir := range s.Data {
		if !strings.HasPrefix(prefix, "/") || !strings.HasSuffix(prefix, "/") {
			t.Fatalf("webtest: data prefix %q must start and end with /", prefix)
		}
		mux.Handle(prefix, http.StripPrefix(prefix, http.FileServer(http.Dir(dir))))
	}
	return mux
}

// hasDirective reports whether the leading comment lines of a test file hold
// "// webtest: NAME".
func hasDirective(src, name string) bool {
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "//") {
			return false
		}
		rest, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(line, "//")), "webtest:")
		if ok && strings.Fields(rest) != nil && strings.Fields(rest)[0] == name {
			return true
		}
	}
	return false
}

func testPage(suite string) string {
	q := html.EscapeString(suite)
	return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>webtest: ` + q + `</title>
<link rel="stylesheet" href="/static/vendor/github.css">
<script defer src="/static/vendor/showdown.js"></script>
<script defer src="/static/vendor/highlight.js"></script>
<script type="module" src="/__webtest/start.js?suite=` + q + `"></script>
</head>
<body></body>
</html>
`
}

// startScript imports the suite's bundle (waiting for its top-level await)
// and runs the registered tests. Module scripts run after the deferred
// classic scripts, so window.showdown and window.hljs exist by then.
func startScript(suite string) string {
	url, _ := json.Marshal("/static/" + suite + ".js")
	return `const g = globalThis;
const fail = (msg) => { g.__results = { done: true, loadError: msg, tests: [] }; };
try {
  await import(` + string(url) + `);
  if (g.__webtest === undefined) {
    fail("the suite registered no tests (does it import ./testing.js?)");
  } else {
    await g.__webtest.run();
  }
} catch (err) {
  fail(String((err && err.stack) || err));
}
`
}
