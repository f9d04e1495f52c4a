package provider

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// endlessServer streams head, then body over and over until the client
// goes away or limit bytes are sent, then tail (a proper end: a client
// with no bound would take the whole of it as a reply). sent reports the
// bytes written.
func endlessServer(t *testing.T, head, body, tail string, limit int64) (*fake, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		write := func(s string) bool {
			n, err := io.WriteString(w, s)
			sent.Add(int64(n))
			return err == nil && r.Context().Err() == nil
		}
		if !write(head) {
			return
		}
		chunk := strings.Repeat(body, max(1, (64<<10)/len(body)))
		for sent.Load() < limit {
			if !write(chunk) {
				return
			}
			fl.Flush()
		}
		write(tail)
	})
	return f, &sent
}

// peakHeap samples the live heap every millisecond until stop is closed
// and returns the largest sample.
func peakHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// TestEndlessRepliesFailAsMalformed plays an endpoint that streams one
// reply forever, in each wire format and in each part of a reply (text,
// reasoning, tool-call arguments), and one that sends a single event that
// never ends. Every call must fail as a malformed reply, having read a
// bounded part of the stream with a bounded heap. (Without the bound the
// server's 256 MiB would be assembled into one reply.)
func TestEndlessRepliesFailAsMalformed(t *testing.T) {
	const serverLimit = 256 << 20
	chatDelta := func(d string) string { return "data: " + chatChunk(d, "") + "\n\n" }
	chatEnd := "data: " + chatChunk(`{}`, "stop") + "\n\ndata: [DONE]\n\n"
	resp := func(typ, body string) string {
		f := typedEvent(typ, body)
		return "event: " + f.Event + "\ndata: " + f.Data + "\n\n"
	}
	respHead := resp("response.created", `"sequence_number":0,"response":{"id":"r","object":"response","status":"in_progress","model":"m","output":[]}`)
	respEnd := resp("response.completed", `"sequence_number":9,"response":{"id":"r","object":"response","status":"completed","model":"m","output":[],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`)
	anth := func(typ, body string) string {
		f := typedEvent(typ, body)
		return "event: " + f.Event + "\ndata: " + f.Data + "\n\n"
	}
	anthHead := anth("message_start", `"message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude","usage":{"input_tokens":1,"output_tokens":1}}`)
	anthEnd := anth("message_delta", `"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}`) + anth("message_stop", "")
	newChat := func(url string) Provider { return NewOpenAIChat(Config{BaseURL: url}) }
	newResp := func(url string) Provider { return NewOpenAIResponses(Config{BaseURL: url}) }
	newAnth := func(url string) Provider { return NewAnthropic(Config{BaseURL: url}) }
	cases := []struct {
		name             string
		provider         func(url string) Provider
		head, body, tail string
	}{
		{"chat content", newChat, "", chatDelta(`{"content":"all work and no play "}`), chatEnd},
		{"chat reasoning", newChat, "", chatDelta(`{"reasoning_content":"thinking about thinking "}`), chatEnd},
		{"chat tool arguments", newChat, chatDelta(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"write_file","arguments":"{\"content\":\""}}]}`),
			chatDelta(`{"tool_calls":[{"index":0,"function":{"arguments":"aaaaaaaaaaaaaaaa"}}]}`), chatDelta(`{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}`) + chatEnd},
		{"chat tool calls without end", newChat, "", chatDelta(`{"tool_calls":[{"index":7,"id":"c","type":"function","function":{"name":"x"}}]}`) +
			chatDelta(`{"tool_calls":[{"index":8,"id":"d","type":"function","function":{"name":"y"}}]}`), chatEnd},
		{"chat empty chunks", newChat, "", chatDelta(`{}`), chatEnd},
		{"chat one event that never ends", newChat, "", "data: " + strings.Repeat("x", 1000) + "\n", "\n" + chatEnd},
		{"responses text", newResp, respHead, resp("response.output_text.delta", `"item_id":"msg","output_index":0,"content_index":0,"delta":"all work and no play "`), respEnd},
		{"responses reasoning", newResp, respHead, resp("response.reasoning_text.delta", `"item_id":"rs","output_index":0,"content_index":0,"delta":"thinking about thinking "`), respEnd},
		{"responses tool arguments", newResp, respHead + resp("response.output_item.added", `"output_index":0,"item":{"id":"fc","type":"function_call","call_id":"c","name":"write_file","arguments":""}`),
			resp("response.function_call_arguments.delta", `"item_id":"fc","output_index":0,"delta":"aaaaaaaaaaaaaaaa"`), respEnd},
		{"responses one event that never ends", newResp, respHead, "data: " + strings.Repeat("x", 1000) + "\n", "\n" + respEnd},
		{"anthropic text", newAnth, anthHead + anth("content_block_start", `"index":0,"content_block":{"type":"text","text":""}`),
			anth("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":"all work and no play "}`), anthEnd},
		{"anthropic thinking", newAnth, anthHead + anth("content_block_start", `"index":0,"content_block":{"type":"thinking","thinking":""}`),
			anth("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"thinking about thinking "}`), anthEnd},
		{"anthropic tool input", newAnth, anthHead + anth("content_block_start", `"index":0,"content_block":{"type":"tool_use","id":"t","name":"write_file","input":{}}`),
			anth("content_block_delta", `"index":0,"delta":{"type":"input_json_delta","partial_json":"aaaaaaaaaaaaaaaa"}`), anthEnd},
		{"anthropic one event that never ends", newAnth, anthHead, "data: " + strings.Repeat("x", 1000) + "\n", "\n" + anthEnd},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, sent := endlessServer(t, c.head, c.body, c.tail, serverLimit)
			stop := make(chan struct{})
			peak := peakHeap(stop)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var streamed atomic.Int64
			_, err := c.provider(f.URL+"/v1").Complete(ctx, Request{Model: "m", MaxTokens: 4096,
				Messages: []Message{{Role: "user", Content: "go on"}}}, func(d Delta) { streamed.Add(int64(len(d.Content) + len(d.Reasoning))) })
			close(stop)
			pe := AsError(err)
			if pe == nil || pe.Category != CategoryMalformed {
				t.Fatalf("Complete = %v, want a malformed-reply failure", err)
			}
			if !strings.Contains(err.Error(), "does not end its reply") {
				t.Errorf("the failure does not say what happened: %v", err)
			}
			// What was read is bounded: a stream event (32 MiB) at most,
			// plus what the connection held.
			if n := sent.Load(); n > 48<<20 {
				t.Errorf("the server sent %d MiB before the call gave up", n>>20)
			}
			if n := streamed.Load(); n > 2<<20 {
				t.Errorf("%d KiB of reply were streamed to the caller", n>>10)
			}
			if p := <-peak; p > 256<<20 {
				t.Errorf("the heap peaked at %d MiB", p>>20)
			}
		})
	}
}

// TestLargeRepliesWithinTheBoundPass: the bound is far above any real
// reply. A reply of 900 KiB (under the 1 MiB a 4096-token budget gets)
// and one of 3 MiB with a 65536-token budget come through whole, in each
// wire format.
func TestLargeRepliesWithinTheBoundPass(t *testing.T) {
	for _, tc := range []struct {
		size, maxTokens int
	}{{900 << 10, 4096}, {3 << 20, 65536}} {
		word := "lorem ipsum "
		n := tc.size / len(word)
		chat := make([]frame, 0, n/100+2)
		resp := []frame{typedEvent("response.created", `"sequence_number":0,"response":{"id":"r","object":"response","status":"in_progress","model":"m","output":[]}`)}
		anth := []frame{typedEvent("message_start", `"message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude","usage":{"input_tokens":1,"output_tokens":1}}`),
			typedEvent("content_block_start", `"index":0,"content_block":{"type":"text","text":""}`)}
		piece := strings.Repeat(word, 100)
		for i := 0; i < n/100; i++ {
			chat = append(chat, frame{Data: chatChunk(`{"content":"`+piece+`"}`, "")})
			resp = append(resp, typedEvent("response.output_text.delta", `"item_id":"msg","output_index":0,"content_index":0,"delta":"`+piece+`"`))
			anth = append(anth, typedEvent("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":"`+piece+`"}`))
		}
		chat = append(chat, frame{Data: chatChunk(`{}`, "stop")}, frame{Data: "[DONE]"})
		resp = append(resp, typedEvent("response.completed", `"sequence_number":9,"response":{"id":"r","object":"response","status":"completed","model":"m","output":[],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`))
		anth = append(anth, typedEvent("message_delta", `"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}`), typedEvent("message_stop", ""))
		want := len(piece) * (n / 100)
		for name, p := range map[string]Provider{
			"chat":      NewOpenAIChat(Config{BaseURL: newFake(t, sseHandler(chat)).URL + "/v1"}),
			"responses": NewOpenAIResponses(Config{BaseURL: newFake(t, sseHandler(resp)).URL + "/v1"}),
			"anthropic": NewAnthropic(Config{BaseURL: newFake(t, sseHandler(anth)).URL}),
		} {
			r, err := p.Complete(context.Background(), Request{Model: "m", MaxTokens: tc.maxTokens, Messages: []Message{{Role: "user", Content: "write"}}}, nil)
			if err != nil || len(r.Content) != want {
				t.Errorf("%s, %d KiB with %d tokens: %v (%d bytes of %d)", name, tc.size>>10, tc.maxTokens, err, contentLen(r), want)
			}
		}
	}
}

func contentLen(r *Response) int {
	if r == nil {
		return 0
	}
	return len(r.Content)
}

func TestReplyBudget(t *testing.T) {
	for _, c := range []struct{ maxTokens, limit int }{
		{0, maxReplyBytes}, {1, minReplyBytes}, {4096, minReplyBytes}, {65536, 4 << 20}, {1 << 20, maxReplyBytes}, {1 << 40, maxReplyBytes}, {-5, maxReplyBytes},
	} {
		if got := newReplyBudget(c.maxTokens).limit; got != c.limit {
			t.Errorf("budget of %d tokens: %d bytes, want %d", c.maxTokens, got, c.limit)
		}
	}
	b := newReplyBudget(4096)
	if err := b.spend(minReplyBytes - eventCost); err != nil {
		t.Errorf("a reply at its bound: %v", err)
	}
	if err := b.spend(1); AsError(err) == nil || !strings.Contains(err.Error(), fmt.Sprintf("output budget of %d tokens", 4096)) {
		t.Errorf("a reply past its bound: %v", err)
	}
}

// TestEventBoundFindsBlankLines: events end at a blank line however the
// reads cut the stream, "\r\n" endings included.
func TestEventBoundFindsBlankLines(t *testing.T) {
	stream := "data: a\r\n\r\ndata: bb\n\ndata: ccc\r\n\n"
	for cut := 1; cut < len(stream); cut++ {
		var b eventBound
		b.note([]byte(stream[:cut]))
		b.note([]byte(stream[cut:]))
		if b.event != 0 {
			t.Errorf("cut at %d: %d bytes of an event left over", cut, b.event)
		}
	}
	var b eventBound
	b.note([]byte("data: x\n"))
	if b.event != len("data: x\n") {
		t.Errorf("an unfinished event counts %d bytes", b.event)
	}
}

// BenchmarkChatStreamChunksBounded is BenchmarkChatStreamChunks through
// the event bound every model call's body now passes: the cost of finding
// the events' ends.
func BenchmarkChatStreamChunksBounded(b *testing.B) {
	benchChatStream(b, func(r io.Reader) io.ReadCloser { return &eventBound{ReadCloser: io.NopCloser(r)} })
}
