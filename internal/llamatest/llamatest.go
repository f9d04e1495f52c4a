// Package llamatest starts a real llama.cpp llama-server for integration
// tests: the CPU build and tiny random-weight models kept beside the
// repository (../shared/llamacpp from the module root) or named by
// GUILDHALL_LLAMA_SERVER. The models answer nonsense; what the tests check
// is the server's real wire: /v1/models and /props, streamed chunks and
// usage, streamed tool calls, and the real context-overflow error.
//
// A test calls Start; when the binary is not there, or does not run on
// this machine, the test is skipped with a message saying why (under
// CI=true a binary that is present but does not run fails the test: the
// CI script installs its libraries). It is imported only by _test files.
package llamatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/sharedir"
)

// The tiny models (see ../shared/llamacpp/README.md).
const (
	// Steered replies with 10–30 tokens of nonsense, then ends its turn.
	Steered = "tiny-qwen2-steered.gguf"
	// ToolCall opens tool calls; with --jinja the server turns them into
	// schema-valid tool_calls with nonsense arguments.
	ToolCall = "tiny-qwen2-toolcall.gguf"
)

// EnvServer names the llama-server binary to use instead of the one beside
// the repository; its models are looked for in the same folder, or in
// GUILDHALL_LLAMA_MODELS.
const (
	EnvServer = "GUILDHALL_LLAMA_SERVER"
	EnvModels = "GUILDHALL_LLAMA_MODELS"
)

// Server is one running llama-server on a loopback port.
type Server struct {
	// URL is the server root (http://127.0.0.1:PORT); BaseURL adds /v1.
	URL string
	// Ctx is the context size it was started with (-c).
	Ctx  int
	cmd  *exec.Cmd
	logs *bytes.Buffer
	mu   *sync.Mutex
}

// BaseURL is the OpenAI-compatible base (…/v1).
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Log is what the server printed so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// install is where llama-server is and whether it runs here.
type install struct {
	bin, models string
	// err says why it cannot be used; absent is set when it is not there
	// at all (rather than there but failing).
	err    error
	absent bool
}

var (
	checkOnce sync.Once
	checked   install
)

// locate finds the binary and the models folder.
func locate() (bin, models string, err error) {
	if b := os.Getenv(EnvServer); b != "" {
		models = os.Getenv(EnvModels)
		if models == "" {
			models = filepath.Dir(b)
		}
		return b, models, nil
	}
	dir, err := sharedir.Path("llamacpp")
	if err != nil {
		return "", "", err
	}
	return filepath.Join(dir, "llama-server"), dir, nil
}

// available checks once that the binary is there and runs.
func available() install {
	checkOnce.Do(func() {
		bin, models, err := locate()
		checked = install{bin: bin, models: models}
		if err != nil {
			checked.err, checked.absent = err, true
			return
		}
		if _, err := os.Stat(bin); err != nil {
			checked.err, checked.absent = fmt.Errorf("no llama-server at %s (set %s to one): %w", bin, EnvServer, err), true
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput(); err != nil {
			checked.err = fmt.Errorf("%s does not run here (%v; it needs libgomp1 and libstdc++6, see ldd): %s", bin, err, strings.TrimSpace(string(out)))
		}
	})
	return checked
}

// Start runs llama-server with model at context size ctx on a free
// loopback port, waits until /health answers, and stops it (by its
// process) when the test ends. extra are more server arguments.
func Start(t testing.TB, model string, ctx int, extra ...string) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("starts llama-server")
	}
	in := available()
	switch {
	case in.err != nil && (in.absent || os.Getenv("CI") != "true"):
		t.Skipf("llama.cpp integration test skipped: %v", in.err)
	case in.err != nil:
		t.Fatalf("llama.cpp integration test: %v", in.err)
	}
	gguf := filepath.Join(in.models, model)
	if _, err := os.Stat(gguf); err != nil {
		t.Skipf("llama.cpp integration test skipped: model %s: %v", gguf, err)
	}
	var lastErr error
	for range 3 { // a port taken between the check and the bind is retried
		s, err := start(t, in.bin, gguf, ctx, extra)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("llama-server did not start: %v", lastErr)
	return nil
}

func start(t testing.TB, bin, gguf string, ctx int, extra []string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"-m", gguf, "-c", strconv.Itoa(ctx), "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--jinja", "--no-webui", "-t", "2"}, extra...)
	cmd := exec.Command(bin, args...)
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Ctx: ctx, cmd: cmd, logs: &bytes.Buffer{}, mu: &sync.Mutex{}}
	w := &lockedWriter{s: s}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			return nil, fmt.Errorf("llama-server exited (%v):\n%s", err, tail(s.Log()))
		default:
		}
		if healthy(s.URL) {
			t.Cleanup(stop)
			return s, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("llama-server did not become healthy in 60 s:\n%s", tail(s.Log()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type lockedWriter struct{ s *Server }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.logs.Write(p)
}

func healthy(root string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(root + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// Proxy serves target (a server root) through a loopback reverse proxy
// that lets rewrite change each model call's JSON body before it reaches
// the server; other requests (the model list, /props) pass unchanged.
// Tests use it to ask the real server for what a run never sends (such as
// tool_choice "required", so a random model calls a tool every time) or
// to replay a history the real server refuses. It returns the proxy's
// root URL.
func Proxy(t testing.TB, target string, rewrite func(body map[string]any)) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		FlushInterval: -1, // stream chunks as they come
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			r := pr.Out
			// llama-server drops kept-alive connections after a slow reply
			// without saying so: let the proxy's transport replay a call
			// on a fresh one, as Guildhall's own client does.
			r.Header["X-Idempotency-Key"] = nil
			if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
				return
			}
			raw, err := io.ReadAll(r.Body)
			r.Body.Close()
			var body map[string]any
			if err == nil && json.Unmarshal(raw, &body) == nil {
				rewrite(body)
				if b, err := json.Marshal(body); err == nil {
					raw = b
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(raw))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
			r.ContentLength = int64(len(raw))
			r.Header.Set("Content-Length", strconv.Itoa(len(raw)))
		},
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}
