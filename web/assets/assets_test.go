package assets

import (
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/guildhall/guildhall/web/static"
)

func get(t *testing.T, h http.Handler, target string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestVendorServedVerbatim(t *testing.T) {
	h := New(static.Files()).Handler()
	for _, tc := range []struct{ path, ctype string }{
		{"/vendor/showdown.js", "text/javascript; charset=utf-8"},
		{"/vendor/highlight.js", "text/javascript; charset=utf-8"},
		{"/vendor/hyperapp.js", "text/javascript; charset=utf-8"},
		{"/vendor/github.css", "text/css; charset=utf-8"},
		{"/vendor/showdown.LICENSE", "text/plain; charset=utf-8"},
	} {
		res := get(t, h, tc.path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", tc.path, res.StatusCode)
		}
		if got := res.Header.Get("Content-Type"); got != tc.ctype {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, got, tc.ctype)
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q", tc.path, got)
		}
		if got := res.Header.Get("Content-Security-Policy"); got != ContentSecurityPolicy {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, got)
		}
		want, err := fs.ReadFile(static.Files(), strings.TrimPrefix(tc.path, "/"))
		if err != nil {
			t.Fatal(err)
		}
		if body(t, res) != string(want) {
			t.Errorf("GET %s: body differs from the vendored file", tc.path)
		}
	}
}

func TestBundleTranspilesAndKeepsVendorExternal(t *testing.T) {
	h := New(static.Files()).Handler()
	res := get(t, h, "/markdown-render.js")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /markdown-render.js: %d %s", res.StatusCode, body(t, res))
	}
	if got := res.Header.Get("Content-Type"); got != "text/javascript; charset=utf-8" {
		t.Errorf("Content-Type %q", got)
	}
	js := body(t, res)
	if !strings.Contains(js, `from "./vendor/hyperapp.js"`) {
		t.Errorf("bundle does not import the vendored hyperapp by URL:\n%s", js[:min(len(js), 400)])
	}
	for _, ts := range []string{"interface SafeElement", ": SafeNode[]", "import type"} {
		if strings.Contains(js, ts) {
			t.Errorf("bundle still contains TypeScript %q", ts)
		}
	}
	if !strings.Contains(js, "function sanitize(") {
		t.Error("bundle lacks markdown.ts's sanitize: imports between .ts files were not bundled")
	}
}

func TestNestedEntryImportsVendorRelatively(t *testing.T) {
	fsys := fstest.MapFS{
		"vendor/hyperapp.js":    {Data: []byte("export var h = 1\n")},
		"ts/hyperapp.ts":        {Data: []byte(`export { h } from "../vendor/hyperapp.js";` + "\n")},
		"ts/run-stage/index.ts": {Data: []byte(`import { h } from "../hyperapp.js"; console.log(h);` + "\n")},
	}
	js, err := New(fsys).Get("run-stage/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"../vendor/hyperapp.js"`) {
		t.Errorf("nested bundle imports hyperapp wrongly:\n%s", js)
	}
}

func TestCachingAndRevalidation(t *testing.T) {
	a := New(static.Files())
	h := a.Handler()
	first := get(t, h, "/markdown.js")
	firstBody := body(t, first)
	etag := first.Header.Get("ETag")
	if etag == "" || first.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", etag, first.Header.Get("Cache-Control"))
	}
	second := get(t, h, "/markdown.js")
	if body(t, second) != firstBody || second.Header.Get("ETag") != etag {
		t.Error("a second request got a different bundle")
	}
	if a.builds != 1 {
		t.Errorf("esbuild ran %d times for one entry, want 1", a.builds)
	}
	revalidate := get(t, h, "/markdown.js", "If-None-Match", etag)
	if revalidate.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag: %d, want 304", revalidate.StatusCode)
	}
	vendor := get(t, h, "/vendor/showdown.js")
	if vendor.Header.Get("ETag") == "" {
		t.Error("vendored file has no ETag")
	}
	if res := get(t, h, "/vendor/showdown.js", "If-None-Match", vendor.Header.Get("ETag")); res.StatusCode != http.StatusNotModified {
		t.Errorf("vendored file revalidation: %d, want 304", res.StatusCode)
	}
}

func TestBuildErrorsAreReportedWithPositions(t *testing.T) {
	fsys := fstest.MapFS{
		"ts/bad.ts":     {Data: []byte("const x: number = ;\n")},
		"ts/bare.ts":    {Data: []byte(`import { debounce } from "lodash";` + "\ndebounce();\n")},
		"ts/missing.ts": {Data: []byte(`import { x } from "./nowhere.js";` + "\nx();\n")},
	}
	a := New(fsys)
	h := a.Handler()
	for _, tc := range []struct{ path, want string }{
		{"/bad.js", "ts/bad.ts:1:19: error: Unexpected \";\""},
		{"/bare.js", `import "lodash": only relative imports`},
		{"/missing.js", `import "./nowhere.js": no file ts/nowhere.js`},
	} {
		res := get(t, h, tc.path)
		text := body(t, res)
		if res.StatusCode != http.StatusInternalServerError {
			t.Errorf("GET %s: %d, want 500", tc.path, res.StatusCode)
		}
		if !strings.Contains(text, tc.want) {
			t.Errorf("GET %s: error body %q lacks %q", tc.path, text, tc.want)
		}
	}
	err := a.Check()
	var be *BuildError
	if !errors.As(err, &be) {
		t.Fatalf("Check() = %v, want a *BuildError", err)
	}
	if got := strings.Count(err.Error(), "build ts/"); got != 3 {
		t.Errorf("Check() reports %d failed entries, want 3:\n%v", got, err)
	}
}

func TestNotServed(t *testing.T) {
	h := New(static.Files()).Handler()
	for _, p := range []string{
		"/ts/markdown.ts",      // sources are not served
		"/markdown.ts",         //
		"/vendor/README.md",    // not an allowlisted type
		"/embed.go",            //
		"/nosuch.js",           // no such entry
		"/markdown.test.js",    // test entries need WithTestSuites
		"/testing.js",          //
		"/../go.mod",           // traversal
		"/vendor/../../go.mod", //
		"/",                    //
	} {
		if res := get(t, h, p); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
		}
	}
	if res := get(t, New(static.Files(), WithTestSuites()).Handler(), "/markdown.test.js"); res.StatusCode != http.StatusOK {
		t.Errorf("GET /markdown.test.js WithTestSuites: %d", res.StatusCode)
	}
	req := httptest.NewRequest(http.MethodPost, "/vendor/showdown.js", strings.NewReader("x"))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", rec.Code)
	}
}

func TestClientBuilds(t *testing.T) {
	a := New(static.Files(), WithTestSuites())
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	names, err := a.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"markdown-render.js", "markdown.js", "markdown.test.js", "xss.test.js"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("entries %v lack %s", names, want)
		}
	}
}

// TestTextAssetsAreCompressed: a client that accepts gzip gets the text
// assets compressed, with an ETag of their own that revalidates to 304;
// the body decompresses to exactly what a client without gzip gets.
func TestTextAssetsAreCompressed(t *testing.T) {
	h := New(static.Files()).Handler()
	for _, p := range []string{"/vendor/highlight.js", "/app.js", "/css/app.css"} {
		plain := get(t, h, p)
		plainBody := body(t, plain)
		zipped := get(t, h, p, "Accept-Encoding", "gzip, br")
		if zipped.Header.Get("Content-Encoding") != "gzip" || zipped.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s: Content-Encoding %q, Vary %q", p, zipped.Header.Get("Content-Encoding"), zipped.Header.Get("Vary"))
			continue
		}
		z, err := gzip.NewReader(strings.NewReader(body(t, zipped)))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		unzipped, _ := io.ReadAll(z)
		if string(unzipped) != plainBody {
			t.Errorf("%s: the decompressed body differs", p)
		}
		etag := zipped.Header.Get("ETag")
		if etag == "" || etag == plain.Header.Get("ETag") {
			t.Errorf("%s: the compressed ETag %q is not its own (plain %q)", p, etag, plain.Header.Get("ETag"))
		}
		if res := get(t, h, p, "Accept-Encoding", "gzip", "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
			t.Errorf("%s: revalidating the compressed body: %d, want 304", p, res.StatusCode)
		}
		if res := get(t, h, p, "Accept-Encoding", "gzip;q=0"); res.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: gzip;q=0 still compressed", p)
		}
	}
}
