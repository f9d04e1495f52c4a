// Package client is a Guildhall console's remote session: it speaks the
// HTTP API of a running Guildhall (docs/api.md) with the access token of
// its discovery file, and offers what the terminal console needs of a
// session — events, answers, interrupts, pause, resume, terminate, submit
// and the queue — so that `guildhall attach` opens the same console on a
// run another process is running.
//
// Events come whole from GET /api/stream and are republished on a local
// runner.Bus, so the console folds, sanitises and renders them exactly as
// it does for a run in its own process: nothing here renders or trusts
// event text. A stream that drops is resumed with Last-Event-ID, so no
// event is lost or repeated.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

// Config is what Dial needs.
type Config struct {
	// URL is the console's address without the token
	// (http://127.0.0.1:PORT/), as its discovery file holds it.
	URL string
	// Token is the access token, sent as "Authorization: Bearer".
	Token string
	// Workspace is the attached workspace's records, read for History,
	// replays, plans and transcripts as the console that runs it reads
	// them: the operator's own files on this host.
	Workspace store.Workspace
	// HTTP is the client to use (tests); http.DefaultTransport otherwise.
	HTTP *http.Client
	// RequestTimeout bounds every call but the stream (10 s by default).
	RequestTimeout time.Duration
	// IdleTimeout ends a stream that sent nothing, not even its keep-alive
	// comment, for this long (45 s by default); it is then resumed.
	IdleTimeout time.Duration
	// GiveUp is how long the stream keeps trying to reconnect to a console
	// that stopped answering before the session ends (5 s by default).
	GiveUp time.Duration
}

// ErrUnauthorized is a console that refused the token: its discovery file
// is stale, or another Guildhall now serves that port.
var ErrUnauthorized = errors.New("the console refused the access token (its discovery file is stale, or another program now serves that port)")

// ErrConsoleGone is a console that stopped answering: its process ended.
var ErrConsoleGone = errors.New("the console stopped answering: its process has ended")

// APIError is an error answer of the API: {"ok": false, "error": code}.
type APIError struct {
	Method, Path string
	Status       int
	Code         string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, e.Code)
}

// Is maps the API's codes to the runner's errors, so the console reacts to
// a remote refusal as it does to a local one.
func (e *APIError) Is(target error) bool {
	switch e.Code {
	case "already_answered":
		return target == runner.ErrAlreadyAnswered
	case "unknown_question":
		return target == runner.ErrUnknownQuestion
	case "run_not_active":
		return target == runner.ErrRunNotActive
	case "run_in_progress":
		return target == runner.ErrRunInProgress
	case "unauthorized":
		return target == ErrUnauthorized
	}
	return false
}

// apiCode is what an error code may look like; anything else a server
// sends is not shown.
var apiCode = regexp.MustCompile(`^[a-z][a-z_]{0,47}$`)

// maxAnswer bounds a JSON answer read from the server.
const maxAnswer = 64 << 20

// Session is a remote session over a console's HTTP API. Build it with
// Dial; it is safe for concurrent use.
type Session struct {
	cfg  Config
	base *url.URL
	hc   *http.Client
	bus  *runner.Bus
	ctx  context.Context
	stop context.CancelFunc

	mu       sync.Mutex
	run      string // the run the stream follows
	seq      int64  // the last event of run received
	active   bool
	queue    bool
	labels   render.LabelSet
	setup    []string
	health   runner.HealthView
	subs     []*runner.Subscription
	ended    chan struct{}
	endErr   error
	endOnce  sync.Once
	streamUp chan struct{}
}

// Dial connects to the console at cfg.URL, checks the token, and reads the
// followed run's events so far before it returns, so that the first
// Subscribe has the whole backlog. ctx bounds the dial only: the session
// ends when Close is called or when the console goes away (Ended, Err).
func Dial(ctx context.Context, cfg Config) (*Session, error) {
	base, err := url.Parse(cfg.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("console address %q is not an http URL", cfg.URL)
	}
	if cfg.Token == "" {
		return nil, errors.New("no access token for the console")
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 10 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 45 * time.Second
	}
	if cfg.GiveUp <= 0 {
		cfg.GiveUp = 5 * time.Second
	}
	hc := cfg.HTTP
	if hc == nil {
		// Never a proxy: the console is on this host, and a proxy from the
		// environment would be handed the token.
		hc = &http.Client{Transport: &http.Transport{Proxy: nil}}
	}
	// ctx bounds the dial; the session lives until Close or its console
	// goes away.
	sctx, stop := context.WithCancel(context.Background())
	s := &Session{cfg: cfg, base: base, hc: hc, bus: runner.NewBus(), ctx: sctx, stop: stop,
		seq: -1, ended: make(chan struct{}), streamUp: make(chan struct{}),
		health: runner.HealthView{State: runner.HealthOK}}
	var conf struct {
		Queue  bool            `json:"queue"`
		Labels render.LabelSet `json:"labels"`
		Setup  []string        `json:"setup"`
	}
	if err := s.call(ctx, http.MethodGet, "/api/config", nil, &conf); err != nil {
		stop()
		return nil, fmt.Errorf("console %s: %w", base.Redacted(), err)
	}
	s.queue, s.labels = conf.Queue, conf.Labels
	// Setup lines are shown as they are; they are the server's words, so
	// they are stripped of terminal control here as well as where shown.
	for _, l := range conf.Setup {
		s.setup = append(s.setup, render.SanitizeLine(l))
	}
	first := make(chan error, 1)
	go s.follow(first)
	select {
	case err := <-first:
		if err != nil {
			stop()
			return nil, fmt.Errorf("console %s: event stream: %w", base.Redacted(), err)
		}
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
	return s, nil
}

// Labels are the console's guild display labels (GET /api/config): the
// console shows them through its own sanitiser, as for a local guild.
func (s *Session) Labels() render.LabelSet { return s.labels }

// Setup is what the console says it runs with (the sandbox, the trust
// decision), one line each.
func (s *Session) Setup() []string { return append([]string(nil), s.setup...) }

// Close ends the session and every subscription.
func (s *Session) Close() error {
	s.end(nil)
	return nil
}

// Ended is closed when the session ends.
func (s *Session) Ended() <-chan struct{} { return s.ended }

// Err is why the session ended (nil while it runs or after Close).
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endErr
}

// end closes the session once, with its reason, and closes every
// subscription so the console learns of it.
func (s *Session) end(err error) {
	s.endOnce.Do(func() {
		s.mu.Lock()
		s.endErr = err
		subs := s.subs
		s.subs = nil
		s.mu.Unlock()
		s.stop()
		for _, sub := range subs {
			sub.Close()
		}
		close(s.ended)
	})
}

// call sends one API request and decodes its JSON answer into out (when
// not nil). A refusal is an *APIError; an answer that is not the API's JSON
// is an error saying so.
func (s *Session) call(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: encode: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base.JoinPath(path).String(), body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	s.authorize(req)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if len(data) > maxAnswer {
		return fmt.Errorf("%s %s: the answer is larger than %d bytes", method, path, maxAnswer)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return ErrUnauthorized
	}
	if resp.StatusCode >= 300 {
		return apiError(method, path, resp.StatusCode, data)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return fmt.Errorf("%s %s: the answer is not JSON (%d, %q): is this a Guildhall console?", method, path, resp.StatusCode, contentType(resp))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: the answer does not parse: %w", method, path, err)
	}
	return nil
}

func (s *Session) authorize(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+s.cfg.Token)
	req.Header.Set("Accept", "application/json")
}

// apiError reads an error answer; a body that is not the API's shape gives
// only the status.
func apiError(method, path string, status int, data []byte) error {
	var e struct {
		Error string `json:"error"`
	}
	code := "unexpected_answer"
	if json.Unmarshal(data, &e) == nil && apiCode.MatchString(e.Error) {
		code = e.Error
	}
	return &APIError{Method: method, Path: path, Status: status, Code: code}
}

// contentType is a response's media type, bounded and printable, for an
// error message.
func contentType(resp *http.Response) string {
	ct := resp.Header.Get("Content-Type")
	if len(ct) > 60 {
		ct = ct[:60]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, ct)
}
