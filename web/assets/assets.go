// Package assets serves the browser client: the vendored libraries verbatim,
// and the client's TypeScript bundled to JavaScript at serve time with
// esbuild's Go API.
//
// The file tree is the one package web/static embeds (vendor/, ts/). A request
// for /NAME.js builds the entry point ts/NAME.ts (imports between .ts files
// are bundled from the same tree) once per process; the tree is immutable,
// so the result is cached, errors included. Imports of ../vendor/*.js stay
// external: the bundle imports the verbatim vendored file by a relative URL,
// so hyperapp is fetched as its own ES module, never inlined.
package assets

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// ContentSecurityPolicy is the policy for the client's pages: scripts, styles
// and connections from the serving origin only, nothing inline, no plugins, no
// framing. Handler sets it on every response; the page that loads the client
// (index.html) must be served with it too.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self'; font-src 'self'; connect-src 'self'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors 'none'; object-src 'none'"

// contentType is the allowlist of files Handler serves, by extension. Any
// other file (TypeScript sources, READMEs, Go files) is not found.
func contentType(ext string) (string, bool) {
	switch ext {
	case ".js":
		return "text/javascript; charset=utf-8", true
	case ".css":
		return "text/css; charset=utf-8", true
	case ".html":
		return "text/html; charset=utf-8", true
	case ".json":
		return "application/json", true
	case ".svg":
		return "image/svg+xml", true
	case ".png":
		return "image/png", true
	case ".ico":
		return "image/x-icon", true
	case ".woff2":
		return "font/woff2", true
	case ".txt", ".LICENSE":
		return "text/plain; charset=utf-8", true
	}
	return "", false
}

// Option configures New.
type Option func(*Assets)

// WithTestSuites makes the in-browser test files (ts/*.test.ts and
// ts/testing*.ts) available as entry points. Production servers leave it out.
func WithTestSuites() Option {
	return func(a *Assets) { a.tests = true }
}

// Assets serves one immutable client tree. Its zero value is not usable; call
// New. It is safe for concurrent use.
type Assets struct {
	fsys  fs.FS
	tests bool

	mu     sync.Mutex
	cache  map[string]*asset // by served name: "app.js", "vendor/showdown.js"
	builds int               // esbuild runs, for tests
}

// asset is one cached response body, computed once, and its gzip form
// for the text types (nil when it would not be smaller).
type asset struct {
	once        sync.Once
	body        []byte
	etag        string
	gz          []byte
	gzEtag      string
	contentType string
	err         error
}

// New returns the assets of fsys, a tree laid out as web/static (see
// static.Files).
func New(fsys fs.FS, opts ...Option) *Assets {
	a := &Assets{fsys: fsys, cache: make(map[string]*asset)}
	for _, o := range opts {
		o(a)
	}
	return a
}

// ErrNotFound is returned for a name that is no servable asset.
var ErrNotFound = errors.New("asset not found")

// Handler serves the assets at the root of its URL space: /vendor/showdown.js,
// /app.js (built from ts/app.ts). Mount it under a prefix with
// http.StripPrefix("/static", a.Handler()).
//
// Every response carries X-Content-Type-Options: nosniff, the client's
// Content-Security-Policy, a strong ETag (the sha256 of the body) and
// Cache-Control: no-cache, so a browser revalidates and gets 304 while the
// binary is unchanged. A TypeScript build error is a 500 whose plain-text body
// lists each esbuild message as file:line:column.
func (a *Assets) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/")
		got, err := a.get(name)
		if errors.Is(err, ErrNotFound) {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			h.Set("Cache-Control", "no-store")
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h.Set("Content-Type", got.contentType)
		h.Set("Cache-Control", "no-cache")
		body, etag := got.body, got.etag
		if got.gz != nil {
			h.Add("Vary", "Accept-Encoding")
			if AcceptsGzip(r) {
				body, etag = got.gz, got.gzEtag
				h.Set("Content-Encoding", "gzip")
			}
		}
		h.Set("ETag", etag)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
	})
}

// Get returns the body of a served name ("app.js", "vendor/showdown.js"), as
// Handler would serve it. A build failure is a *BuildError.
func (a *Assets) Get(name string) ([]byte, error) {
	got, err := a.get(name)
	if err != nil {
		return nil, err
	}
	return got.body, nil
}

// Entries lists the names of the bundles that can be served ("app.js",
// "run-stage/index.js"), sorted.
func (a *Assets) Entries() ([]string, error) {
	var names []string
	err := fs.WalkDir(a.fsys, "ts", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && a.isEntry(p) {
			names = append(names, strings.TrimSuffix(strings.TrimPrefix(p, "ts/"), ".ts")+".js")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list entry points: %w", err)
	}
	sort.Strings(names)
	return names, nil
}

// Check builds every entry point and returns their build errors joined, so a
// server can refuse to start with a broken client and a test can fail on one.
func (a *Assets) Check() error {
	names, err := a.Entries()
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		if _, err := a.get(n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// isEntry reports whether the source file p (under ts/) may be an entry point.
func (a *Assets) isEntry(p string) bool {
	if !strings.HasSuffix(p, ".ts") || strings.HasSuffix(p, ".d.ts") {
		return false
	}
	base := path.Base(p)
	if !a.tests && (strings.HasSuffix(base, ".test.ts") || strings.HasPrefix(base, "testing")) {
		return false
	}
	return true
}

func (a *Assets) get(name string) (*asset, error) {
	if name == "" || !fs.ValidPath(name) {
		return nil, ErrNotFound
	}
	ext := path.Ext(name)
	ctype, ok := contentType(ext)
	if !ok {
		return nil, ErrNotFound
	}
	var load func() ([]byte, error)
	if src := "ts/" + strings.TrimSuffix(name, ".js") + ".ts"; ext == ".js" && a.isEntry(src) && exists(a.fsys, src) {
		load = func() ([]byte, error) { return a.build(src) }
	} else if top, _, _ := strings.Cut(name, "/"); top != "ts" && exists(a.fsys, name) {
		load = func() ([]byte, error) { return fs.ReadFile(a.fsys, name) }
	} else {
		return nil, ErrNotFound
	}

	a.mu.Lock()
	got, ok := a.cache[name]
	if !ok {
		got = &asset{contentType: ctype}
		a.cache[name] = got
	}
	a.mu.Unlock()

	got.once.Do(func() {
		got.body, got.err = load()
		sum := sha256.Sum256(got.body)
		got.etag = `"` + hex.EncodeToString(sum[:16]) + `"`
		if got.err == nil && compressible(ctype) {
			got.gz = gzipped(got.body)
			if got.gz != nil {
				got.gzEtag = `"` + hex.EncodeToString(sum[:16]) + `-gz"`
			}
		}
	})
	return got, got.err
}

// compressible: the text types are worth compressing; images and fonts are
// compressed already.
func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "application/json") || strings.HasPrefix(ctype, "image/svg")
}

// gzipped is body compressed once, at the best ratio (assets are cached),
// or nil when that saves less than a tenth.
func gzipped(body []byte) []byte {
	if len(body) < 1024 {
		return nil
	}
	var buf bytes.Buffer
	z, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil
	}
	if _, err := z.Write(body); err != nil || z.Close() != nil || buf.Len() > len(body)*9/10 {
		return nil
	}
	return buf.Bytes()
}

// AcceptsGzip reports whether the request's Accept-Encoding lists gzip
// without refusing it (q=0). The API's answers use it too.
func AcceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return !strings.HasPrefix(q, "q=0") || strings.TrimRight(strings.TrimPrefix(q, "q=0"), "0.") != ""
	}
	return false
}

func exists(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && st.Mode().IsRegular()
}
