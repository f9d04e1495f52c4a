package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// relay is the model endpoint as a baseline program sees it: a reverse
// proxy that forwards to the real endpoint, adds the API key (so the key
// never enters the baseline's sandbox or environment), asks streamed chat
// completions to report usage, and counts model calls, tokens and tool
// calls from what passes through.
//
// The relay hands out the operator's key, so it answers only its own
// baseline. A confined baseline reaches it through its sandbox's proxy,
// which dials the relay's Unix socket in a folder only this user can
// enter: there is no port for another user of the host to try. An
// unconfined baseline has to dial loopback, where anyone can; there the
// per-run token is what refuses them. Either way every request must carry
// the token (the baseline's API key), and only the API routes a baseline
// needs are forwarded.
type relay struct {
	srv   *http.Server
	ln    net.Listener
	mu    sync.Mutex
	st    relayStats
	token string
	// addr is the loopback address (host:port) or, on a socket, "".
	addr string
	// sock is the Unix socket's path, and sockDir its private folder.
	sock, sockDir string
}

type relayStats struct {
	calls     int
	tokens    Tokens
	toolCalls int
}

// maxRelayBody bounds how much of a request body the relay parses.
const maxRelayBody = 16 << 20

// relayRoutes are the API routes a baseline uses, by escaped path, with
// their method. Anything else (another path, a traversal, an encoded
// variant of these) is refused before it reaches the endpoint.
var relayRoutes = map[string]string{
	"/v1/chat/completions": http.MethodPost,
	"/v1/responses":        http.MethodPost,
	"/v1/models":           http.MethodGet,
}

// startRelay starts a relay to endpoint that adds key. With onSocket it
// listens on a Unix socket in a private folder (a confined baseline's
// proxy dials it); otherwise on a loopback port.
func startRelay(endpoint, key string, onSocket bool) (*relay, error) {
	target, err := url.Parse(strings.TrimRight(endpoint, "/"))
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, errors.New("the model endpoint must be an http:// or https:// URL")
	}
	token, err := relayToken()
	if err != nil {
		return nil, err
	}
	r := &relay{token: token}
	if err := r.listen(onSocket); err != nil {
		return nil, err
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// The baseline addresses the relay's /v1 root; the target's own
			// path (…/v1) replaces it.
			pr.Out.URL.Path = target.Path + strings.TrimPrefix(pr.In.URL.Path, "/v1")
			pr.Out.URL.RawPath = ""
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("X-Api-Key")
			if key != "" {
				pr.Out.Header.Set("Authorization", "Bearer "+key)
			}
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Body = &usageReader{r: resp.Body, relay: r}
			return nil
		},
	}
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !r.admit(w, req) {
			return
		}
		r.request(req)
		rp.ServeHTTP(w, req)
	})}
	go func() { _ = r.srv.Serve(r.ln) }()
	return r, nil
}

// relayToken is a fresh random token: the baseline's API key for one run.
func relayToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("relay token: %w", err)
	}
	return "ghrelay-" + hex.EncodeToString(b[:]), nil
}

func (r *relay) listen(onSocket bool) error {
	if !onSocket {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		r.ln, r.addr = ln, ln.Addr().String()
		return nil
	}
	// MkdirTemp makes the folder 0700: no other user can reach the socket
	// inside, whatever the socket's own mode.
	dir, err := os.MkdirTemp("", "guildhall-relay-")
	if err != nil {
		return err
	}
	sock := filepath.Join(dir, "relay.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		_ = os.RemoveAll(dir)
		return err
	}
	r.ln, r.sock, r.sockDir = ln, sock, dir
	return nil
}

// admit answers a request that is not the baseline's own API call and
// reports whether it may pass: the token must be the run's (compared in
// constant time), and the route one of relayRoutes.
func (r *relay) admit(w http.ResponseWriter, req *http.Request) bool {
	want := "Bearer " + r.token
	if subtle.ConstantTimeCompare([]byte(req.Header.Get("Authorization")), []byte(want)) != 1 {
		relayRefuse(w, http.StatusUnauthorized, "the relay answers only its own baseline run: send its token as the API key")
		return false
	}
	if m, ok := relayRoutes[req.URL.EscapedPath()]; !ok || req.Method != m {
		relayRefuse(w, http.StatusNotFound, "the relay forwards only POST /v1/chat/completions, POST /v1/responses and GET /v1/models")
		return false
	}
	return true
}

// relayRefuse answers with an OpenAI-style error body, which both
// baselines show as it is.
func relayRefuse(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": msg, "type": "guildhall_relay"}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// dial connects to the relay: the sandbox proxy's Dial for a confined
// baseline, which maps the one address the baseline may reach to the
// socket and refuses every other.
func (r *relay) dial(reach string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != reach {
			return nil, fmt.Errorf("dial %s: only the model endpoint is reachable from a baseline run", addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, "unix", r.sock)
	}
}

func (r *relay) close() {
	_ = r.srv.Shutdown(context.Background())
	if r.sockDir != "" {
		_ = os.RemoveAll(r.sockDir)
	}
}

func (r *relay) stats() relayStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

// request counts a model call and the tool results its history holds
// (the conversation grows, so the largest count is the run's), and asks a
// streamed chat completion for its usage.
func (r *relay) request(req *http.Request) {
	if req.Method != http.MethodPost || req.Body == nil {
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxRelayBody+1))
	req.Body.Close()
	if err != nil || len(body) > maxRelayBody {
		req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{}))
		return
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) == nil {
		tools := countToolResults(doc)
		if strings.HasSuffix(req.URL.Path, "/chat/completions") && string(doc["stream"]) == "true" && doc["stream_options"] == nil {
			doc["stream_options"] = json.RawMessage(`{"include_usage":true}`)
			if b, err := json.Marshal(doc); err == nil {
				body = b
			}
		}
		r.mu.Lock()
		r.st.calls++
		r.st.toolCalls = max(r.st.toolCalls, tools)
		r.mu.Unlock()
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Del("Content-Length")
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) {
	return 0, errors.New("request body too large for the relay")
}

// countToolResults counts tool results in a Chat Completions "messages"
// or a Responses "input" list.
func countToolResults(doc map[string]json.RawMessage) int {
	var items []struct {
		Role string `json:"role"`
		Type string `json:"type"`
	}
	src := doc["messages"]
	if src == nil {
		src = doc["input"]
	}
	if json.Unmarshal(src, &items) != nil {
		return 0
	}
	n := 0
	for _, it := range items {
		if it.Role == "tool" || it.Type == "function_call_output" {
			n++
		}
	}
	return n
}

// usageReader passes a response through and picks the usage out of it:
// a JSON body's "usage", or that of each "data:" line of a stream.
type usageReader struct {
	r     io.ReadCloser
	relay *relay
	buf   bytes.Buffer
	done  bool
}

func (u *usageReader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if n > 0 && u.buf.Len() < maxRelayBody {
		u.buf.Write(p[:n])
	}
	if err != nil && !u.done {
		u.done = true
		u.relay.addUsage(usageOf(u.buf.Bytes()))
	}
	return n, err
}

func (u *usageReader) Close() error {
	if !u.done {
		u.done = true
		u.relay.addUsage(usageOf(u.buf.Bytes()))
	}
	return u.r.Close()
}

func (r *relay) addUsage(t Tokens) {
	r.mu.Lock()
	r.st.tokens = r.st.tokens.Add(t)
	r.mu.Unlock()
}

// usageOf reads the token usage out of a response body, streamed or not.
// A stream may repeat cumulative usage; the last report counts.
func usageOf(body []byte) Tokens {
	if t, ok := usageIn(body); ok {
		return t
	}
	var last Tokens
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), maxRelayBody)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		if t, ok := usageIn([]byte(strings.TrimSpace(line))); ok {
			last = t
		}
	}
	return last
}

func usageIn(doc []byte) (Tokens, bool) {
	type usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		InputTokens      int `json:"input_tokens"`
		OutputTokens     int `json:"output_tokens"`
	}
	var v struct {
		Usage    *usage `json:"usage"`
		Response *struct {
			Usage *usage `json:"usage"`
		} `json:"response"`
	}
	if json.Unmarshal(doc, &v) != nil {
		return Tokens{}, false
	}
	u := v.Usage
	if u == nil && v.Response != nil {
		u = v.Response.Usage
	}
	if u == nil {
		return Tokens{}, false
	}
	t := Tokens{Prompt: u.PromptTokens + u.InputTokens, Completion: u.CompletionTokens + u.OutputTokens}
	t.Total = t.Prompt + t.Completion
	return t, true
}
