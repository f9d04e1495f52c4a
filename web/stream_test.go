package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
)

// streamReader reads GET /api/stream messages.
type streamReader struct {
	t    *testing.T
	res  *http.Response
	br   *bufio.Reader
	stop context.CancelFunc
}

func (ts *testServer) openStream(lastID string) *streamReader {
	ts.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.http.URL+"/api/stream", nil)
	ts.authorize(req)
	req.Header.Set("Accept-Encoding", "gzip")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := ts.http.Client().Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { cancel(); res.Body.Close() })
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "" {
		ts.t.Fatalf("stream: %d, encoding %q", res.StatusCode, res.Header.Get("Content-Encoding"))
	}
	return &streamReader{t: ts.t, res: res, br: bufio.NewReaderSize(res.Body, 1<<20), stop: cancel}
}

// next returns the next message's name, id and entry (ok false at the end
// of the stream).
func (sr *streamReader) next() (name, id string, se StreamEntry, ok bool) {
	sr.t.Helper()
	for {
		line, err := sr.br.ReadString('\n')
		if err != nil {
			return "", "", se, false
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && name != "":
			return name, id, se, true
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: ") && (name == "log" || name == "delta"):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &se); err != nil {
				sr.t.Fatalf("data %q: %v", line, err)
			}
		}
	}
}

// untilReady reads the catch-up: the log events before "ready".
func (sr *streamReader) untilReady() []StreamEntry {
	sr.t.Helper()
	var out []StreamEntry
	for {
		name, id, se, ok := sr.next()
		if !ok {
			sr.t.Fatal("the stream ended before ready")
		}
		switch name {
		case "ready":
			return out
		case "log":
			if id != fmt.Sprintf("%s:%d", se.RunID, se.Seq) {
				sr.t.Errorf("id %q for %s #%d", id, se.RunID, se.Seq)
			}
			out = append(out, se)
		}
	}
}

func toolCalls(t *testing.T, f *fakeSession, n, size int) {
	for i := 0; i < n; i++ {
		f.Emit(t, event.ToolCall, event.ToolCallPayload{Tool: "read_file", Arguments: strings.Repeat("x", size)})
	}
}

func TestStreamCatchesUpFromLastEventID(t *testing.T) {
	ts := newTestServer(t)
	id, _ := ts.sess.Submit(context.Background(), runner.Submission{Task: "task"})
	ts.sess.Emit(t, event.RunStarted, event.RunStartedPayload{RunID: id, Task: "task", Model: "secret-model-name"})
	toolCalls(t, ts.sess, 5, 10)
	waitFor(t, "the live view", func() bool { return ts.srv.views.liveID() == id })

	all := ts.openStream("").untilReady()
	if len(all) != 6 || all[0].Type != event.RunStarted || all[5].Seq != 5 {
		t.Fatalf("catch-up from the start: %+v", all)
	}
	if strings.Contains(string(all[0].Payload), "secret-model-name") {
		t.Error("the stream serves the model name")
	}
	sr := ts.openStream(id + ":2")
	rest := sr.untilReady()
	if len(rest) != 3 || rest[0].Seq != 3 {
		t.Fatalf("catch-up after #2: %+v", rest)
	}
	// Live events follow, once each.
	toolCalls(t, ts.sess, 2, 10)
	for want := int64(6); want < 8; want++ {
		name, _, se, ok := sr.next()
		if !ok || name != "log" || se.Seq != want {
			t.Fatalf("live: %s %+v %v, want #%d", name, se, ok, want)
		}
	}
}

func TestStreamRefusesBadCursors(t *testing.T) {
	ts := newTestServer(t)
	for _, c := range []string{"x", "../../etc:1", "run-20250101-000000", "run-20250101-000000:x", "run-20250101-000000:-2"} {
		req, _ := http.NewRequest(http.MethodGet, ts.http.URL+"/api/stream", nil)
		ts.authorize(req)
		req.Header.Set("Last-Event-ID", c)
		if res := sent(t, ts.http.Client(), req); res.StatusCode != http.StatusBadRequest {
			t.Errorf("cursor %q: %d, want 400", c, res.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, ts.http.URL+"/api/stream?after=run-20250101-000000%1B:1", nil)
	ts.authorize(req)
	if res := sent(t, ts.http.Client(), req); res.StatusCode != http.StatusBadRequest {
		t.Errorf("?after with an escape: %d, want 400", res.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodGet, ts.http.URL+"/api/stream", nil)
	if res := sent(t, ts.http.Client(), req); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", res.StatusCode)
	}
}

// A run that ended while the client was away: the rest of it, then the
// new live run from its start.
func TestStreamCatchesUpAcrossRuns(t *testing.T) {
	ts := newTestServer(t)
	a, _ := ts.sess.Submit(context.Background(), runner.Submission{Task: "a"})
	ts.sess.Emit(t, event.RunStarted, event.RunStartedPayload{RunID: a, Task: "a"})
	toolCalls(t, ts.sess, 3, 10)
	ts.sess.SetActive("")
	time.Sleep(1100 * time.Millisecond) // run ids are per second
	b, _ := ts.sess.Submit(context.Background(), runner.Submission{Task: "b"})
	ts.sess.Emit(t, event.RunStarted, event.RunStartedPayload{RunID: b, Task: "b"})
	toolCalls(t, ts.sess, 1, 10)
	waitFor(t, "the live view", func() bool { return ts.srv.views.liveID() == b })

	got := ts.openStream(a + ":1").untilReady()
	var ids []string
	for _, se := range got {
		ids = append(ids, fmt.Sprintf("%s:%d", se.RunID, se.Seq))
	}
	want := []string{a + ":2", a + ":3", b + ":0", b + ":1"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("catch-up %v, want %v", ids, want)
	}
}

// A client that stops reading falls behind: the server ends its stream
// rather than skip events, and a resume from its last id gets them all.
func TestStreamEndsForAClientThatFallsBehind(t *testing.T) {
	ts := newTestServer(t)
	id, _ := ts.sess.Submit(context.Background(), runner.Submission{Task: "big"})
	ts.sess.Emit(t, event.RunStarted, event.RunStartedPayload{RunID: id, Task: "big"})
	waitFor(t, "the live view", func() bool { return ts.srv.views.liveID() == id })
	sr := ts.openStream("")
	sr.untilReady()
	const n = 1500
	toolCalls(t, ts.sess, n, 16<<10) // ~24 MB: more than the socket buffers and the queue hold
	last := int64(0)
	ended := false
	for {
		name, _, se, ok := sr.next()
		if !ok {
			ended = true
			break
		}
		if name != "log" {
			continue
		}
		if se.Seq != last+1 {
			t.Fatalf("the stream skipped from #%d to #%d", last, se.Seq)
		}
		last = se.Seq
		if last == n {
			break
		}
	}
	if !ended {
		t.Skip("the client kept up: the buffers held every event (nothing to test on this machine)")
	}
	rest := ts.openStream(fmt.Sprintf("%s:%d", id, last)).untilReady()
	if len(rest) != int(n-last) || rest[0].Seq != last+1 {
		t.Fatalf("resume after #%d got %d events from #%d, want %d", last, len(rest), rest[0].Seq, n-last)
	}
}
