package provider

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// chatStream must frame a stream exactly as the SDK's ssestream, which it
// replaced for chat completions: both read the same bodies here, and must
// give the same chunks, the same end and the same kind of error.
func TestChatStreamFramesAsSSEStream(t *testing.T) {
	chunk := func(content string) string {
		return `{"model":"m","choices":[{"index":0,"delta":{"content":"` + content + `"}}]}`
	}
	long := strings.Repeat("x", 70<<10) // longer than the reader's buffer
	bodies := map[string]string{
		"plain":                 "data: " + chunk("a") + "\n\ndata: " + chunk("b") + "\n\ndata: [DONE]\n\n",
		"crlf":                  "data: " + chunk("a") + "\r\n\r\ndata: [DONE]\r\n\r\n",
		"no space after colon":  "data:" + chunk("a") + "\n\n",
		"two spaces":            "data:  " + chunk("a") + "\n\n",
		"comments and fields":   ": keep-alive\n\nevent: message\nid: 7\nretry: 10\ndata: " + chunk("a") + "\n\n",
		"data split over lines": "data: {\"model\":\"m\",\ndata: \"choices\":[]}\n\n",
		"blank lines first":     "\n\n\ndata: " + chunk("a") + "\n\n",
		"torn last event":       "data: " + chunk("a") + "\n\ndata: " + chunk("b"),
		"torn after newline":    "data: " + chunk("a") + "\n\ndata: " + chunk("b") + "\n",
		"no final blank line":   "data: " + chunk("a") + "\n\ndata: [DONE]",
		"an error object":       "data: " + chunk("a") + "\n\ndata: {\"error\":{\"message\":\"overloaded\",\"code\":529}}\n\n",
		"an error string":       "data: {\"error\":\"boom\"}\n\n",
		"not json":              "data: {nope\n\n",
		"wrong field types":     "data: {\"model\":7,\"choices\":[{\"index\":\"zero\",\"delta\":{\"content\":[1]}}]}\n\ndata: " + chunk("b") + "\n\n",
		"a long line":           "data: " + chunk(long) + "\n\n",
		"empty":                 "",
		"only a comment":        ": hi\n\n",
		"DONE with suffix":      "data: [DONE] bye\n\ndata: " + chunk("late") + "\n\n",
		"after DONE":            "data: [DONE]\n\ndata: " + chunk("late") + "\n\n",
		"cr only inside":        "data: " + chunk("a\\r") + "\n\n",
		"whitespace data":       "data: \n\ndata:  \n\n",
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			wantChunks, wantErr := readSSEStream(body)
			gotChunks, gotErr := readChatStream(body)
			if strings.Join(gotChunks, "|") != strings.Join(wantChunks, "|") {
				t.Errorf("chunks:\n got  %.200q\n want %.200q", gotChunks, wantChunks)
			}
			if (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("error %v, ssestream's %v", gotErr, wantErr)
			}
			var se *streamError
			var sse *ssestream.StreamError
			if errors.As(wantErr, &sse) != errors.As(gotErr, &se) {
				t.Fatalf("error %T %v, ssestream's %T %v", gotErr, gotErr, wantErr, wantErr)
			}
			if se != nil && (string(se.data) != string(sse.Event.Data) || se.Error() != sse.Error()) {
				t.Errorf("stream error %q %q, ssestream's %q %q", se.Error(), se.data, sse.Error(), sse.Event.Data)
			}
		})
	}
}

func readSSEStream(body string) ([]string, error) {
	res := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))}
	s := ssestream.NewStream[chatStreamChunk](ssestream.NewDecoder(res), nil)
	defer s.Close()
	var out []string
	for s.Next() {
		out = append(out, describeChunk(s.Current()))
	}
	return out, s.Err()
}

func readChatStream(body string) ([]string, error) {
	s := newChatStream(io.NopCloser(strings.NewReader(body)), false)
	defer s.Close()
	var out []string
	var c chatStreamChunk
	for s.next(&c) {
		out = append(out, describeChunk(c))
	}
	return out, s.Err()
}

func describeChunk(c chatStreamChunk) string {
	var b strings.Builder
	b.WriteString(c.Model)
	for _, ch := range c.Choices {
		b.WriteString("/" + ch.Delta.Content)
	}
	return b.String()
}

// A chunk is decoded afresh: nothing of the previous one survives into a
// chunk that lacks the field.
func TestChatStreamResetsTheChunk(t *testing.T) {
	body := "data: {\"model\":\"m\",\"usage\":{\"total_tokens\":3},\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" +
		"data: {\"choices\":[]}\n\n"
	s := newChatStream(io.NopCloser(strings.NewReader(body)), true)
	var c chatStreamChunk
	if !s.next(&c) || c.Usage == nil || c.raw == nil {
		t.Fatalf("first chunk %+v, %v", c, s.Err())
	}
	if !s.next(&c) {
		t.Fatal(s.Err())
	}
	if c.Model != "" || c.Usage != nil || len(c.Choices) != 0 || string(c.raw) != "{\"choices\":[]}\n" {
		t.Fatalf("the second chunk kept the first's fields: %+v raw %q", c, c.raw)
	}
}

// BenchmarkChatStreamChunks reads a reply's stream of 20 chunks as
// Complete does, and BenchmarkChatStreamChunksSSEStream as it did through
// the SDK's ssestream.
func BenchmarkChatStreamChunks(b *testing.B) { benchChatStream(b, io.NopCloser) }

// benchChatStream reads benchStreamBody with newChatStream, the body made
// by wrap.
func benchChatStream(b *testing.B, wrap func(io.Reader) io.ReadCloser) {
	body := benchStreamBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		s := newChatStream(wrap(strings.NewReader(body)), false)
		var c chatStreamChunk
		n := 0
		for s.next(&c) {
			n++
		}
		if n != 20 || s.Err() != nil {
			b.Fatal(n, s.Err())
		}
	}
}

func BenchmarkChatStreamChunksSSEStream(b *testing.B) {
	body := benchStreamBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		res := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))}
		s := ssestream.NewStream[chatStreamChunk](ssestream.NewDecoder(res), nil)
		n := 0
		for s.Next() {
			n++
		}
		if n != 20 || s.Err() != nil {
			b.Fatal(n, s.Err())
		}
	}
}

func benchStreamBody() string {
	var b strings.Builder
	for range 20 {
		b.WriteString("data: " + chunkBench + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}
