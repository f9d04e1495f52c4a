package web

import (
	"compress/gzip"
	"net/http"
	"strings"
	"sync"

	"github.com/guildhall/guildhall/web/assets"
)

// The API's JSON answers are compressed with gzip for a client that
// accepts it: a 10,000-operation run's flow snapshot is 3.7 MB of JSON and
// about a tenth of that compressed. The event stream is left alone (its
// messages must arrive as they are written), and so is everything that is
// not JSON. No answer carries a secret (the access token is never in a
// body), so compressing next to data a workspace may influence reveals
// nothing (BREACH needs a secret in the compressed body).

// gzipPool reuses compressors: each holds about a megabyte of state.
type gzipPool struct{ p sync.Pool }

func (g *gzipPool) get(w http.ResponseWriter) *gzip.Writer {
	if z, ok := g.p.Get().(*gzip.Writer); ok {
		z.Reset(w)
		return z
	}
	z, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	return z
}

func (g *gzipPool) put(z *gzip.Writer) { g.p.Put(z) }

// compressJSON wraps an API handler: JSON answers are gzip-compressed when
// the client accepts it.
func (g *gzipPool) compressJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/events" || r.URL.Path == "/api/stream" || r.Method == http.MethodHead || !assets.AcceptsGzip(r) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Accept-Encoding")
		gw := &gzipWriter{ResponseWriter: w, pool: g}
		defer gw.close()
		next.ServeHTTP(gw, r)
	})
}

// gzipWriter compresses the body once the header says it is JSON.
type gzipWriter struct {
	http.ResponseWriter
	pool    *gzipPool
	z       *gzip.Writer
	started bool
}

func (w *gzipWriter) WriteHeader(code int) {
	if w.started {
		return
	}
	w.started = true
	h := w.Header()
	if code >= 200 && code != http.StatusNoContent && code != http.StatusNotModified &&
		strings.HasPrefix(h.Get("Content-Type"), "application/json") && h.Get("Content-Encoding") == "" {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		w.z = w.pool.get(w.ResponseWriter)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *gzipWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if w.z != nil {
		return w.z.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

func (w *gzipWriter) close() {
	if w.z != nil {
		_ = w.z.Close()
		w.pool.put(w.z)
		w.z = nil
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *gzipWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
