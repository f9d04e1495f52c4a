package provider

import (
	"context"
	"net/http"
	"sync"
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
