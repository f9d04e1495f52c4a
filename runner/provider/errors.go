package provider

// Failure classification shared by every network provider.
//
// HTTP error responses are intercepted by a client middleware before the SDKs
// see them, so the status, headers and a bounded copy of the body are
// classified here the same way for every wire format (the SDKs would read an
// unbounded body and lose non-JSON bodies such as a proxy's HTML 502).
//
// Context-length rejections are recognised by the messages real servers send:
//   - OpenAI: code "context_length_exceeded", "maximum context length is N
//     tokens. However, your messages resulted in M tokens", and on the
//     Responses API "Your input exceeds the context window of this model";
//   - llama.cpp: type "exceed_context_size_error" with n_prompt_tokens/n_ctx
//     (HTTP 400), "request (M tokens) exceeds the available context size";
//     older builds "the request exceeds the available context size",
//     "prompt is too long", "input is larger than the max context size";
//   - Ollama: "the input length exceeds the context length", "the prompt is
//     longer than the context length" (sometimes with a llama.cpp body
//     JSON-encoded inside its "error" string);
//   - vLLM: "This model's maximum context length is N tokens. However, you
//     requested M tokens (P in the messages, C in the completion)" and "your
//     request has M input tokens";
//   - LM Studio: "the model is loaded with context length of only N tokens";
//   - Anthropic: "prompt is too long: N tokens > M maximum".

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// classifyReadLimit bounds how much of an error body is read to classify it.
const classifyReadLimit = 64 << 10

// ClassifyHTTP classifies an HTTP error response. body may be longer than
// MaxBodyBytes; the Error keeps a bounded copy.
func ClassifyHTTP(status int, header http.Header, body []byte) *Error {
	return classifyHTTPAt(status, header, body, time.Now())
}

func classifyHTTPAt(status int, header http.Header, body []byte, now time.Time) *Error {
	e := &Error{StatusCode: status, Body: boundBody(body)}
	e.RetryAfterSeconds = retryAfter(header, now)
	msg := errorMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
		if msg == "" {
			msg = "HTTP " + strconv.Itoa(status)
		}
	}
	e.Err = errors.New(msg)

	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Category = CategoryAuth
	case status == http.StatusTooManyRequests:
		e.Category = CategoryRateLimit
	case isContextLength(body):
		e.Category = CategoryContextLength
		e.PromptTokens = reportedPromptTokens(body)
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		e.Category = CategoryTimeout
	case status >= 500:
		e.Category = CategoryServer
	default:
		e.Category = CategoryBadRequest
	}
	return e
}

// classifyStreamError classifies an error object a server sent inside a
// stream (after a 200 status): llama.cpp's {"error":{"code":500,...}},
// OpenAI's and Anthropic's {"type":"error","error":{"type":...}}, a Responses
// API "error" event or a failed response's error.
func classifyStreamError(data []byte) *Error {
	status := http.StatusInternalServerError
	var env struct {
		Code  json.RawMessage `json:"code"`
		Type  string          `json:"type"`
		Error json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(data, &env)
	var inner struct {
		Code json.RawMessage `json:"code"`
		Type string          `json:"type"`
	}
	if len(env.Error) > 0 && env.Error[0] == '{' {
		_ = json.Unmarshal(env.Error, &inner)
	} else {
		inner.Code, inner.Type = env.Code, env.Type
	}
	if n, err := strconv.Atoi(strings.Trim(string(inner.Code), `"`)); err == nil && n >= 400 && n < 600 {
		status = n
	} else {
		kind := strings.ToLower(inner.Type + " " + strings.Trim(string(inner.Code), `"`))
		switch {
		case strings.Contains(kind, "rate_limit"):
			status = http.StatusTooManyRequests
		case strings.Contains(kind, "authentication"), strings.Contains(kind, "invalid_api_key"):
			status = http.StatusUnauthorized
		case strings.Contains(kind, "permission"):
			status = http.StatusForbidden
		case strings.Contains(kind, "invalid_request"), strings.Contains(kind, "not_found"):
			status = http.StatusBadRequest
		}
	}
	e := ClassifyHTTP(status, nil, data)
	e.StatusCode = 0 // the HTTP status was a success; the failure came in-stream
	return e
}

// boundBody returns at most MaxBodyBytes of body, cut on a rune boundary.
func boundBody(body []byte) string {
	return string(body[:runeCut(body, MaxBodyBytes)])
}

// runeCut is the length of the longest prefix of s that has at most n bytes
// and does not split a rune.
func runeCut[T string | []byte](s T, n int) int {
	if len(s) <= n {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// errorMessage extracts the human message from the error bodies servers
// send: {"error":{"message":...}}, {"error":"..."} (Ollama), {"message":...},
// {"detail":...}. Otherwise the (bounded) body text itself.
func errorMessage(body []byte) string {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &env) == nil {
		if len(env.Error) > 0 {
			var s string
			if json.Unmarshal(env.Error, &s) == nil && s != "" {
				// Ollama may nest a llama.cpp error body in the string.
				if inner := errorMessage([]byte(s)); inner != "" {
					return inner
				}
				return clip(s, 500)
			}
			var obj struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(env.Error, &obj) == nil && obj.Message != "" {
				return clip(obj.Message, 500)
			}
		}
		if env.Message != "" {
			return clip(env.Message, 500)
		}
		if len(env.Detail) > 0 {
			var s string
			if json.Unmarshal(env.Detail, &s) == nil && s != "" {
				return clip(s, 500)
			}
			return clip(string(env.Detail), 500)
		}
	}
	s := strings.TrimSpace(string(body))
	if s == "" || s[0] == '{' || s[0] == '[' {
		return ""
	}
	return clip(s, 500)
}

// clip cuts s to at most n bytes on a rune boundary, marking a cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeCut(s, n)] + "…"
}

// contextMarkers are lower-case fragments that mark a context-length
// rejection in an error body.
var contextMarkers = []string{
	"context_length_exceeded",
	"exceed_context_size",
	"exceeds the available context size",
	"maximum context length",
	"context length exceeded",
	"exceeds the context length",
	"longer than the context length",
	"greater than the context length",
	"exceeds the context window",
	"context window of this model",
	"context length of only",
	"larger than the max context size",
	"prompt is too long",
	"input is too long",
	"too many input tokens",
}

func isContextLength(body []byte) bool {
	lower := strings.ToLower(string(body))
	for _, m := range contextMarkers {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}

// promptTokenPatterns extract the prompt size a rejection reports, most
// specific first. `\\?"` tolerates a body JSON-encoded inside a string.
var promptTokenPatterns = []*regexp.Regexp{
	regexp.MustCompile(`n_prompt_tokens\\?"\s*:\s*(\d+)`),
	regexp.MustCompile(`resulted in (\d+) tokens`),
	regexp.MustCompile(`\((\d+) in the messages`),
	regexp.MustCompile(`has (\d+) input tokens`),
	regexp.MustCompile(`request \((\d+) tokens\)`),
	regexp.MustCompile(`prompt is too long: (\d+) tokens`),
	regexp.MustCompile(`you requested (\d+) tokens`),
}

func reportedPromptTokens(body []byte) int {
	for _, re := range promptTokenPatterns {
		if m := re.FindSubmatch(body); m != nil {
			if n, err := strconv.Atoi(string(m[1])); err == nil {
				return n
			}
		}
	}
	return 0
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After as seconds or an
// HTTP date. 0 when absent or unparsable.
func retryAfter(h http.Header, now time.Time) float64 {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return ms / 1000
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 {
			return 0
		}
		return s
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now).Seconds(); d > 0 {
			return d
		}
	}
	return 0
}

// classifyMiddleware turns every HTTP error response into a classified
// *Error before an SDK reads it, and lets a successful one's connection be
// reused (drainingBody). Its signature matches both SDKs'
// option.Middleware.
func classifyMiddleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	replayOnDeadConnection(req)
	resp, err := sendAgainOnWriteFailure(req, next)
	if err != nil || resp == nil {
		return resp, err
	}
	if resp.StatusCode < 400 {
		if resp.Body != nil {
			resp.Body = drainingBody{&eventBound{ReadCloser: resp.Body}}
		}
		return resp, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, classifyReadLimit))
	_ = resp.Body.Close()
	return nil, ClassifyHTTP(resp.StatusCode, resp.Header, body)
}

// replayOnDeadConnection lets the transport send a model call again on a
// fresh connection when the kept-alive one it picked was closed by the
// server without an answer. llama-server closes a connection once a reply
// has taken longer than its keep-alive timeout (5 s), without saying so, so
// the next call on it read EOF and counted as a provider failure after
// every slow reply. Go replays only idempotent requests; an
// X-Idempotency-Key key with no value marks the request so without sending
// a header, and the transport replays it only when the server closed the
// reused connection before answering (net/http: shouldRetryRequest).
func replayOnDeadConnection(req *http.Request) {
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if _, ok := req.Header["X-Idempotency-Key"]; !ok {
		req.Header["X-Idempotency-Key"] = nil
	}
}

// sendAgainOnWriteFailure is next(req), sent once more when writing it
// failed on a kept-alive connection that turned out to be closed. That is
// the same dead connection as above, found a moment later: the server
// closed it before reading the call, and the transport saw the close while
// it was still writing the body. net/http replays a request only when not
// one byte of it was written, so it reports the write as a network failure
// of a call the server never saw.
func sendAgainOnWriteFailure(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	var reused atomic.Bool
	ctx := httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused.Store(info.Reused) },
	})
	resp, err := next(req.WithContext(ctx))
	if err == nil || !reused.Load() || req.GetBody == nil || req.Context().Err() != nil || !isWriteFailure(err) {
		return resp, err
	}
	body, berr := req.GetBody()
	if berr != nil {
		return resp, err
	}
	again := req.Clone(req.Context())
	again.Body = body
	return next(again)
}

// isWriteFailure reports an error writing a request to its connection.
func isWriteFailure(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && (op.Op == "write" || op.Op == "readfrom")
}

// classifyFailure turns any error from a call into a classified *Error.
// streaming reports whether the response had started: a broken connection
// then means a cut stream rather than an unreachable server. Cancellation by
// the caller is returned as the context's error, not as an *Error: the
// operator stopped the call and nothing should retry it.
func classifyFailure(parent, callCtx context.Context, err error, streaming bool) error {
	if err == nil {
		return nil
	}
	if pe := AsError(err); pe != nil {
		return pe
	}
	if cerr := parent.Err(); cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) {
			return &Error{Category: CategoryTimeout, Err: fmt.Errorf("model call deadline exceeded: %w", err)}
		}
		return fmt.Errorf("model call canceled: %w", cerr)
	}
	if callCtx != nil && errors.Is(context.Cause(callCtx), errIdle) {
		return &Error{Category: CategoryTimeout, Err: errIdle}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &Error{Category: CategoryTimeout, Err: err}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Category: CategoryTimeout, Err: err}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &Error{Category: CategoryMalformed, Err: fmt.Errorf("undecodable stream event: %w", err)}
	}
	if streaming {
		return &Error{Category: CategoryCutStream, Err: fmt.Errorf("stream broken: %w", err)}
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Category: CategoryNetwork, Err: err}
	}
	var oe *net.OpError
	var de *net.DNSError
	if errors.As(err, &oe) || errors.As(err, &de) {
		return &Error{Category: CategoryNetwork, Err: err}
	}
	return &Error{Category: CategoryNetwork, Err: err}
}

// cutStream is the failure for a stream that ended without its terminal
// event.
func cutStream(what string) *Error {
	return &Error{Category: CategoryCutStream, Err: fmt.Errorf("stream ended before %s", what)}
}

// unfinished is the failure for a stream that ended cleanly but without its
// terminal event: the call's cancellation or idle timeout when that ended
// it, else a cut stream.
func unfinished(parent, callCtx context.Context, what string) error {
	if err := classifyFailure(parent, callCtx, context.Cause(callCtx), true); err != nil {
		return err
	}
	return cutStream(what)
}
