package provider

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestACallIsReplayedOnAConnectionTheServerDropped: llama-server closes a
// kept-alive connection after a slow reply without saying so, and the next
// call on it reads EOF. Such a call goes out again on a fresh connection
// instead of failing; a call the server answered is never sent twice.
func TestACallIsReplayedOnAConnectionTheServerDropped(t *testing.T) {
	var mu sync.Mutex
	perConn := map[string]int{}
	calls := 0
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		perConn[r.RemoteAddr]++
		n := perConn[r.RemoteAddr]
		mu.Unlock()
		if n == 2 { // the second request on a connection: drop it unanswered
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		mu.Lock()
		calls++
		mu.Unlock()
		writeSSE(w, []frame{{Data: chatChunk(`{"content":"hi"}`, "")}, {Data: chatChunk(`{}`, "stop")}, {Data: `[DONE]`}})
	})
	p := NewOpenAIChat(Config{BaseURL: f.URL + "/v1"})
	for i := range 4 {
		resp, err := p.Complete(context.Background(), sampleRequest(), nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if resp.Content != "hi" {
			t.Fatalf("call %d: %+v", i, resp)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 4 || len(perConn) < 2 {
		t.Errorf("%d answered calls over %d connections, want 4 calls and a fresh connection after each drop", calls, len(perConn))
	}
	for _, r := range f.requests() {
		if _, sent := r.Header["X-Idempotency-Key"]; sent {
			t.Errorf("the replay marker went on the wire: %v", r.Header)
		}
	}
}

// TestACallIsSentAgainWhenItsReusedConnectionBrokeWhileWriting: the same
// dead connection, seen while the call was still being written, is sent
// once more with the whole body; a fresh connection's failure, a failure
// reading the answer, or a body that cannot be read again is not.
func TestACallIsSentAgainWhenItsReusedConnectionBrokeWhileWriting(t *testing.T) {
	writeErr := &net.OpError{Op: "readfrom", Net: "tcp", Err: net.ErrClosed}
	readErr := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	tests := []struct {
		name      string
		reused    bool
		err       error
		noGetBody bool
		sends     int
	}{
		{"reused, write failed", true, writeErr, false, 2},
		{"reused, broken pipe", true, &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}, false, 2},
		{"fresh connection", false, writeErr, false, 1},
		{"reading the answer failed", true, readErr, false, 1},
		{"body cannot be read again", true, writeErr, true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const payload = `{"model":"m","messages":[]}`
			req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/v1/chat/completions", strings.NewReader(payload))
			if err != nil {
				t.Fatal(err)
			}
			if tc.noGetBody {
				req.GetBody = nil
			}
			var bodies []string
			next := func(r *http.Request) (*http.Response, error) {
				b, _ := io.ReadAll(r.Body)
				bodies = append(bodies, string(b))
				if trace := httptrace.ContextClientTrace(r.Context()); trace != nil && trace.GotConn != nil {
					trace.GotConn(httptrace.GotConnInfo{Reused: tc.reused && len(bodies) == 1})
				}
				if len(bodies) == 1 {
					return nil, tc.err
				}
				return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok"))}, nil
			}
			resp, err := sendAgainOnWriteFailure(req, next)
			if len(bodies) != tc.sends {
				t.Fatalf("sent %d times, want %d", len(bodies), tc.sends)
			}
			if tc.sends == 2 {
				if err != nil || resp.StatusCode != 200 || bodies[1] != payload {
					t.Errorf("second send: %v, body %q", err, bodies[1])
				}
			} else if err != tc.err {
				t.Errorf("error %v, want the first send's %v", err, tc.err)
			}
		})
	}
}
