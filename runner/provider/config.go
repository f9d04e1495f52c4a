package provider

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Config is how a deployment reaches one model endpoint.
//
// BaseURL is the API base as users write it: "http://127.0.0.1:8080/v1" for
// llama.cpp, "http://127.0.0.1:11434/v1" for Ollama, "https://api.openai.com/v1",
// or "https://api.anthropic.com" (a trailing "/v1" is accepted there too).
// APIKey is optional: local servers need none, and no credential header is
// sent when it is empty. Keys are never read from the environment here; the
// caller resolves them.
type Config struct {
	BaseURL string
	APIKey  string
	Model   string
	// ReasoningField names the delta field that carries reasoning on
	// Chat Completions ("reasoning_content" for llama.cpp and DeepSeek,
	// "reasoning" for Ollama and OpenRouter). Empty means try both.
	ReasoningField string
	// HTTPClient is used for every request; nil means a fresh client with
	// no overall timeout (streams may legitimately run for minutes).
	HTTPClient *http.Client
	// RequestTimeout bounds silence, not duration: the wait for the response
	// to start and every gap between streamed events. A slow model that
	// keeps streaming is never cut off; a server that hangs is. Zero means
	// no bound beyond the caller's context.
	RequestTimeout time.Duration
}

const (
	defaultOpenAIBase    = "https://api.openai.com/v1"
	defaultAnthropicBase = "https://api.anthropic.com"
)

func (c Config) httpClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return &http.Client{}
}

func (c Config) model(req Request) string {
	if req.Model != "" {
		return req.Model
	}
	return c.Model
}

// openAIBase returns the API base with no trailing slash.
func (c Config) openAIBase() string {
	b := strings.TrimRight(strings.TrimSpace(c.BaseURL), "/")
	if b == "" {
		return defaultOpenAIBase
	}
	return b
}

// serverRoot is the base URL minus a trailing /v1: where llama.cpp serves
// /props and Ollama serves /api/*.
func serverRoot(base string) string {
	b := strings.TrimRight(base, "/")
	return strings.TrimSuffix(b, "/v1")
}

// isOpenAIHost reports whether base points at OpenAI's own API, which wants
// max_completion_tokens (local servers accept only max_tokens).
func isOpenAIHost(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Hostname(), "api.openai.com")
}

// errIdle is the cancellation cause when RequestTimeout passes with no
// progress on the stream.
var errIdle = errors.New("no response from the server within the request timeout")

// idleWatch cancels a call's context when no progress is reported for d.
type idleWatch struct {
	mu     sync.Mutex
	timer  *time.Timer
	d      time.Duration
	cancel context.CancelCauseFunc
}

// watchIdle derives a context that is cancelled with errIdle after d of
// silence. kick reports progress; stop releases the timer and the context.
func watchIdle(ctx context.Context, d time.Duration) (context.Context, *idleWatch) {
	cctx, cancel := context.WithCancelCause(ctx)
	w := &idleWatch{d: d, cancel: cancel}
	if d > 0 {
		w.timer = time.AfterFunc(d, func() { cancel(errIdle) })
	}
	return cctx, w
}

func (w *idleWatch) kick() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	w.timer.Reset(w.d)
	w.mu.Unlock()
}

func (w *idleWatch) stop() {
	if w.timer != nil {
		w.mu.Lock()
		w.timer.Stop()
		w.mu.Unlock()
	}
	w.cancel(nil)
}
