package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
)

// rawGet asks for path with the given Accept-Encoding and reads the
// answer whole, as rawDo leaves it.
func rawGet(t *testing.T, ts *testServer, path, accept string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", ts.http.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := rawDo(t, ts, req, accept)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, raw
}

// rawDo sends req with the server's token and the given Accept-Encoding,
// and does not decompress the answer (Go's client would, and hide the
// header).
func rawDo(t *testing.T, ts *testServer, req *http.Request, accept string) *http.Response {
	t.Helper()
	if accept != "" {
		req.Header.Set("Accept-Encoding", accept)
	}
	ts.authorize(req)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestJSONIsCompressedForClientsThatAcceptIt: the flow snapshot of a long
// run comes compressed to a client that sends Accept-Encoding: gzip, and
// decompresses to exactly the JSON a client without it gets; a client that
// refuses gzip (q=0) or does not mention it gets plain JSON.
func TestJSONIsCompressedForClientsThatAcceptIt(t *testing.T) {
	ts := newTestServer(t)
	id := synthLive(ts.srv, 200, 4)
	path := "/api/runs/" + id + "/flow?version=0"

	plainRes, plain := rawGet(t, ts, path, "")
	if plainRes.Header.Get("Content-Encoding") != "" || !json.Valid(plain) {
		t.Fatalf("without Accept-Encoding: Content-Encoding %q, valid JSON %v", plainRes.Header.Get("Content-Encoding"), json.Valid(plain))
	}
	for _, accept := range []string{"gzip", "gzip, deflate, br", "br;q=1.0, GZIP;q=0.5"} {
		res, raw := rawGet(t, ts, path, accept)
		if res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("%q: Content-Encoding %q, Vary %q", accept, res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
			continue
		}
		if got := gunzip(t, raw); !bytes.Equal(got, plain) {
			t.Errorf("%q: the decompressed body differs from the plain one (%d vs %d bytes)", accept, len(got), len(plain))
		}
		if len(raw)*5 > len(plain) {
			t.Errorf("%q: %d bytes compressed from %d: less than 5x", accept, len(raw), len(plain))
		}
	}
	for _, accept := range []string{"gzip;q=0", "gzip; q=0.000", "deflate, br", "identity"} {
		res, raw := rawGet(t, ts, path, accept)
		if res.Header.Get("Content-Encoding") != "" || !bytes.Equal(raw, plain) {
			t.Errorf("%q: Content-Encoding %q", accept, res.Header.Get("Content-Encoding"))
		}
	}
	// Errors are JSON too, and compress like any answer.
	res, raw := rawGet(t, ts, "/api/runs/run-20990101-000000", "gzip")
	if res.StatusCode != http.StatusNotFound || res.Header.Get("Content-Encoding") != "gzip" || !bytes.Contains(gunzip(t, raw), []byte("unknown_run")) {
		t.Errorf("error answer: %d %q", res.StatusCode, res.Header.Get("Content-Encoding"))
	}
}

// TestEventStreamIsNotCompressed: the event stream's messages must arrive
// as they are written, so it is never compressed, whatever the client
// accepts.
func TestEventStreamIsNotCompressed(t *testing.T) {
	ts := newTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Not rawGet: the stream never ends, so its body cannot be read whole.
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.http.URL+"/api/events", nil)
	res := rawDo(t, ts, req, "gzip")
	defer res.Body.Close()
	if res.Header.Get("Content-Encoding") != "" {
		t.Fatalf("the event stream is sent with Content-Encoding %q", res.Header.Get("Content-Encoding"))
	}
	id, err := ts.sess.Submit(ctx, runner.Submission{Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ts.sess.Emit(t, event.RunStarted, event.RunStartedPayload{RunID: id, Task: "t"})
	buf := make([]byte, 4096)
	var got []byte
	for !bytes.Contains(got, []byte("run_started")) {
		n, err := res.Body.Read(buf)
		if err != nil {
			t.Fatalf("read the stream: %v (so far %q)", err, got)
		}
		got = append(got, buf[:n]...)
	}
}
