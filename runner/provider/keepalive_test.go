package provider

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Consecutive calls reuse keep-alive connections in every wire format: a
// local server should not see a new TCP connection (and the client a new
// dial) per turn. The fake ends each response a moment after its last
// event, as a server that flushes event by event does, so a client that
// closes the body as soon as it has read the last event loses the
// connection.
func TestProvidersReuseTheConnection(t *testing.T) {
	cases := []struct {
		name   string
		frames []frame
		new    func(base string) Provider
	}{
		{"openai", chatToolCallStream(), func(base string) Provider { return NewOpenAIChat(Config{BaseURL: base + "/v1"}) }},
		{"openai-responses", responsesToolCallStream(), func(base string) Provider { return NewOpenAIResponses(Config{BaseURL: base + "/v1"}) }},
		{"anthropic", anthropicToolUseStream(), func(base string) Provider { return NewAnthropic(Config{BaseURL: base, Model: "m"}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w, c.frames)
				time.Sleep(5 * time.Millisecond)
			})
			var mu sync.Mutex
			conns := 0
			f.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					mu.Lock()
					conns++
					mu.Unlock()
				}
			}
			p := c.new(f.URL)
			for i := 0; i < 10; i++ {
				if _, err := p.Complete(context.Background(), sampleRequest(), nil); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			// One, or two when a call starts before the transport has put
			// the previous connection back in its pool (it does so
			// asynchronously).
			if conns > 2 {
				t.Errorf("10 calls opened %d connections, want one or two kept alive", conns)
			}
		})
	}
}
