// Package web is Guildhall's browser companion: an HTTP server over one
// runner session that serves the browser client (web/static) and a JSON API
// of the same run the terminal shows.
//
// The server never sends pre-rendered HTML of agent content: every route
// but the page itself answers JSON, and the client renders agent prose only
// through its sanitized Markdown pipeline. It binds to loopback by default,
// checks Host (DNS rebinding) and Origin (cross-site writes), caps request
// bodies, and requires a per-process access token on every route, on
// loopback too (auth.go). See docs/api.md for every route.
package web

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/render/labelset"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/web/assets"
	"github.com/guildhall/guildhall/web/static"
)

// Session is what the server needs of a runner session; *runner.Session
// satisfies it. It is not tui.Session, though the two look alike: each
// client names what it uses, and neither imports the other.
type Session interface {
	SubscribeLossless(buffer int) ([]event.Event, *runner.Subscription)
	Submit(ctx context.Context, sub runner.Submission) (string, error)
	Active() (string, bool)
	Answer(id, answer, source string) error
	Questions() []runner.Question
	Interrupt(runID, kind, message string) error
	InterruptPending(runID string) bool
	Pause(runID string) error
	Resume(runID string) error
	Terminate(runID string) error
	Health() runner.HealthView
	Workspace() store.Workspace
	// Changes is what a run changed in the workspace (the result's "What
	// changed"); ModelInfo names the session's model (the meters).
	Changes(ctx context.Context, runID string) (runner.Changes, error)
	ModelInfo() runner.ModelInfo
}

var _ Session = (*runner.Session)(nil)

// maxBody caps every request body.
const maxBody = 1 << 20

// Server is the browser companion of one session. Build it with New, then
// Serve it (or mount Handler and call Start). It is safe for concurrent use.
type Server struct {
	sess    Session
	guild   *runner.Guild
	version string
	labels  render.LabelSet
	assets  *assets.Assets
	files   fs.FS

	views *viewCache
	hub   *hub
	// streamHub feeds GET /api/stream, the whole events (stream.go).
	streamHub *streamHub

	// queue is the optional task queue (WithQueue); nil without one.
	queue Queue
	// summaries makes thread summaries in the background (WithSummarizer).
	summaries *summaries
	// setup is what /api/config says the session runs with (WithSetup).
	setup []string

	startOnce sync.Once

	// gzip compresses the API's JSON answers (compress.go).
	gzip gzipPool

	// token is the access token, drawn by New; every route requires it.
	token string
	// prefix is the browser's path prefix, drawn by New (prefix.go).
	prefix string

	mu    sync.Mutex
	guard *guard // until bound: loopback names on any port, with the token
}

// Option configures optional parts of a Server.
type Option func(*Server)

// WithQueue serves the task queue (the /api/queue routes) through q, and
// makes POST /api/runs queue a task while a run is live instead of
// refusing it. *runner.Scheduler satisfies Queue.
func WithQueue(q Queue) Option {
	return func(s *Server) { s.queue = q }
}

// WithSetup gives the lines /api/config reports under "setup": the sandbox
// policy and the workspace trust decision, shown in the browser's header.
func WithSetup(lines ...string) Option {
	return func(s *Server) { s.setup = append(s.setup, lines...) }
}

// WithSummarizer lets GET /api/runs/:id/thread offer a generated title
// and description of the thread, made by p with model in the background
// and cached with the run (runner.ThreadSummary). Neither p nor model is
// ever served. Without it, only a summary already cached on disk is shown.
func WithSummarizer(p provider.Provider, model string) Option {
	return func(s *Server) { s.summaries.p, s.summaries.model = p, model }
}

// New builds a server for sess running guild; version is the build version
// /api/config reports. A guild whose visualization section does not parse
// is an error.
func New(sess Session, guild *runner.Guild, version string, opts ...Option) (*Server, error) {
	if sess == nil || guild == nil {
		return nil, errors.New("web: a session and a guild are required")
	}
	labels, err := labelset.FromGuild(guild)
	if err != nil {
		return nil, fmt.Errorf("web: labels: %w", err)
	}
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	prefix, err := newPrefix()
	if err != nil {
		return nil, err
	}
	files := static.Files()
	s := &Server{
		sess: sess, guild: guild, version: version, labels: labels,
		assets: assets.New(files), files: files,
		views: newViewCache(sess.Workspace(), labels), hub: newHub(), streamHub: newStreamHub(),
		summaries: newSummaries(sess.Workspace()),
		token:     token, prefix: prefix, guard: unboundGuard(token, prefix),
	}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Start begins following the session's events (the live run's model and
// the event stream) until ctx ends. Serve calls it; a caller that mounts
// Handler itself must call it too. Later calls do nothing.
func (s *Server) Start(ctx context.Context) {
	s.startOnce.Do(func() {
		s.summaries.start(ctx)
		backlog, sub := s.sess.SubscribeLossless(1024)
		s.views.resetLive(backlog)
		go s.follow(ctx, sub)
		if s.queue != nil {
			go s.followQueue(ctx)
		}
	})
}

// follow applies every session event to the live model and tells the event
// stream's clients about it. It never blocks on a client: the subscription
// is lossless, so the run waits for this loop.
func (s *Server) follow(ctx context.Context, sub *runner.Subscription) {
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-sub.C:
			if !ok {
				return
			}
			runID := s.views.applyLive(e)
			if n, ok := noticeFor(e, runID); ok {
				s.hub.send(n)
			}
			if se, ok := streamEntryOf(e, runID); ok {
				s.streamHub.send(se)
			}
		}
	}
}

// Token is the server's access token, for the caller's own clients (an
// attach discovery file, tests). Never put it on a command line.
func (s *Server) Token() string { return s.token }

// Serve listens on addr (host:port; loopback unless the host says
// otherwise) and serves in the background until ctx ends. It returns the
// URL to open, which carries the access token, and prints nothing itself.
func (s *Server) Serve(ctx context.Context, addr string) (string, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("web: listen %s: %w", addr, err)
	}
	return s.ServeListener(ctx, ln)
}

// ServeListener is Serve on an open listener, which it owns from then on.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) (string, error) {
	tcp, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		ln.Close()
		return "", fmt.Errorf("web: listener address %v is not TCP", ln.Addr())
	}
	g := newGuard(tcp, s.token, s.prefix)
	s.mu.Lock()
	s.guard = g
	s.mu.Unlock()
	s.Start(ctx)

	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	return g.url(), nil
}

// Handler is the server's whole HTTP surface behind its guard. Before the
// server is bound, the guard accepts loopback host names on any port; the
// access token is required either way.
func (s *Server) Handler() http.Handler {
	mux := s.gzip.compressJSON(s.routes())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		g := s.guard
		s.mu.Unlock()
		g.serve(w, r, mux)
	})
}

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.handleIndex)
	mux.Handle("GET /static/", http.StripPrefix("/static", s.assets.Handler()))
	mux.HandleFunc("GET /favicon.ico", s.handleFavicon)

	mux.HandleFunc("GET /api/config", s.handleConfig)
	mux.HandleFunc("GET /api/settings", s.handleGetSettings)
	mux.HandleFunc("PUT /api/settings", s.handlePutSettings)
	mux.HandleFunc("GET /api/health", s.handleHealth)

	mux.HandleFunc("POST /api/runs", s.handleCreateRun)
	mux.HandleFunc("GET /api/runs", s.handleListRuns)
	mux.HandleFunc("GET /api/run", s.handleLatestRun)
	mux.HandleFunc("GET /api/run/flow", s.handleLatestFlow)
	mux.HandleFunc("GET /api/runs/{id}", s.handleRun)
	mux.HandleFunc("GET /api/runs/{id}/log", s.handleLog)
	mux.HandleFunc("GET /api/runs/{id}/transcript", s.handleTranscript)
	mux.HandleFunc("GET /api/runs/{id}/flow", s.handleFlow)
	mux.HandleFunc("GET /api/runs/{id}/plan", s.handlePlan)
	mux.HandleFunc("GET /api/runs/{id}/thread", s.handleThread)
	mux.HandleFunc("GET /api/runs/{id}/changes", s.handleChanges)
	mux.HandleFunc("POST /api/runs/{id}/interrupt", s.handleInterrupt)
	mux.HandleFunc("POST /api/runs/{id}/pause", s.handleControl(s.sess.Pause))
	mux.HandleFunc("POST /api/runs/{id}/resume", s.handleResume)
	mux.HandleFunc("POST /api/runs/{id}/terminate", s.handleControl(s.sess.Terminate))

	mux.HandleFunc("GET /api/questions", s.handleQuestions)
	mux.HandleFunc("POST /api/answer", s.handleAnswer)
	mux.HandleFunc("GET /api/events", s.handleEvents)
	mux.HandleFunc("GET /api/stream", s.handleStream)

	mux.HandleFunc("GET /api/queue", s.handleQueueList)
	mux.HandleFunc("POST /api/queue", s.handleQueueAdd)
	mux.HandleFunc("GET /api/queue/{id}", s.handleQueueGet)
	mux.HandleFunc("PATCH /api/queue/{id}", s.handleQueueEdit)
	mux.HandleFunc("DELETE /api/queue/{id}", s.handleQueueCancel)
	mux.HandleFunc("POST /api/queue/{id}/answer", s.handleQueueAnswer)
	mux.HandleFunc("POST /api/queue/{id}/requeue", s.handleQueueRequeue)

	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found")
	})
	return mux
}

func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	page, err := fs.ReadFile(s.files, "index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", assets.ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	_, _ = w.Write(page)
}

// handleFavicon answers the browser's automatic request; the client sets
// its own state-reflecting icon from static/. The redirect is relative, so
// it stays under the prefix the request came through (http.Redirect would
// resolve it against the stripped path).
func (s *Server) handleFavicon(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Location", "static/css/favicon-idle.svg")
	w.WriteHeader(http.StatusFound)
}
