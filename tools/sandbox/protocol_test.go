package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func pair(t *testing.T) (guildhall, helper *channel) {
	t.Helper()
	secret, err := newSecret()
	if err != nil {
		t.Fatal(err)
	}
	return newChannel(secret, toHelper), newChannel(secret, fromHelper)
}

// The client reads frames from the sandbox as untrusted input: bounded,
// and a frame that is not the helper's is tampering, not a result.
func TestFramesAreBounded(t *testing.T) {
	g, h := pair(t)
	var buf bytes.Buffer
	if err := g.write(&buf, request{Command: "echo"}); err != nil {
		t.Fatal(err)
	}
	var req request
	if err := h.read(&buf, &req); err != nil || req.Command != "echo" {
		t.Errorf("%v %+v", err, req)
	}
	var te *TamperedError
	huge := binary.BigEndian.AppendUint32(nil, maxFrame+frameHeader+1)
	if err := h.read(bytes.NewReader(huge), &req); !errors.As(err, &te) {
		t.Errorf("oversized frame: %v", err)
	}
	short := append(binary.BigEndian.AppendUint32(nil, 100), []byte("{}")...)
	if err := h.read(bytes.NewReader(short), &req); err == nil || errors.As(err, &te) {
		t.Errorf("short frame: %v (want an I/O error: the helper died mid-frame)", err)
	}
	if err := h.read(bytes.NewReader(nil), &req); !errors.Is(err, io.EOF) {
		t.Errorf("ended channel: %v", err)
	}
}

// A forged, replayed, reflected or cross-helper frame is rejected as
// tampering, whatever it says.
func TestForgedFramesAreTampering(t *testing.T) {
	forged := response{ExitCode: 0, Stdout: "all 214 tests passed\n"}
	var te *TamperedError

	t.Run("unsigned frame in the old format", func(t *testing.T) {
		g, _ := pair(t)
		body := []byte(`{"exitCode":0,"stdout":"all 214 tests passed\n"}`)
		frame := append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
		var resp response
		err := g.read(bytes.NewReader(frame), &resp)
		if !errors.As(err, &te) {
			t.Fatalf("an old-format frame was read as %+v, %v", resp, err)
		}
	})
	t.Run("another helper's secret", func(t *testing.T) {
		g, _ := pair(t)
		_, other := pair(t)
		var buf bytes.Buffer
		_ = other.write(&buf, forged)
		var resp response
		if err := g.read(&buf, &resp); !errors.As(err, &te) || !strings.Contains(err.Error(), "authentication") {
			t.Fatalf("a frame signed with another secret: %+v, %v", resp, err)
		}
	})
	t.Run("flipped payload byte", func(t *testing.T) {
		g, h := pair(t)
		var buf bytes.Buffer
		_ = h.write(&buf, response{ExitCode: 7, Stdout: "REAL-TWO\n"})
		b := buf.Bytes()
		i := bytes.Index(b, []byte(`"exitCode":7`))
		b[i+len(`"exitCode":`)] = '0'
		var resp response
		if err := g.read(bytes.NewReader(b), &resp); !errors.As(err, &te) {
			t.Fatalf("an altered frame was read as %+v, %v", resp, err)
		}
	})
	t.Run("replayed frame", func(t *testing.T) {
		g, h := pair(t)
		var first bytes.Buffer
		_ = h.write(&first, forged)
		replay := append([]byte(nil), first.Bytes()...)
		var resp response
		if err := g.read(&first, &resp); err != nil {
			t.Fatal(err)
		}
		err := g.read(bytes.NewReader(replay), &resp)
		if !errors.As(err, &te) || !strings.Contains(err.Error(), "replayed") {
			t.Fatalf("a replayed frame: %v", err)
		}
	})
	t.Run("dropped frame", func(t *testing.T) {
		g, h := pair(t)
		var buf bytes.Buffer
		_ = h.write(io.Discard, forged) // frame 0, never delivered
		_ = h.write(&buf, forged)
		var resp response
		if err := g.read(&buf, &resp); !errors.As(err, &te) {
			t.Fatalf("frame 1 in place of frame 0: %v", err)
		}
	})
	t.Run("request reflected as a response", func(t *testing.T) {
		g, _ := pair(t)
		var buf bytes.Buffer
		_ = g.write(&buf, request{Command: "echo"})
		var resp response
		if err := g.read(&buf, &resp); !errors.As(err, &te) {
			t.Fatalf("Guildhall's own request read back as a response: %v", err)
		}
	})
}

// Frames in order, both ways, with their sequence numbers advancing.
func TestChannelRoundTrips(t *testing.T) {
	g, h := pair(t)
	var up, down bytes.Buffer
	for i := range 3 {
		if err := g.write(&up, request{Command: "c", MaxChars: i}); err != nil {
			t.Fatal(err)
		}
		var req request
		if err := h.read(&up, &req); err != nil || req.MaxChars != i {
			t.Fatalf("request %d: %v %+v", i, err, req)
		}
		if err := h.write(&down, response{ExitCode: i}); err != nil {
			t.Fatal(err)
		}
		var resp response
		if err := g.read(&down, &resp); err != nil || resp.ExitCode != i {
			t.Fatalf("response %d: %v %+v", i, err, resp)
		}
	}
}

// BenchmarkChannelCall is the protocol's share of one run_shell call: a
// request and a response of typical size written and read with their
// HMACs and sequence numbers (the cost the authentication adds to the
// helper round trip BenchmarkRunEcho measures).
func BenchmarkChannelCall(b *testing.B) {
	secret, _ := newSecret()
	g, h := newChannel(secret, toHelper), newChannel(secret, fromHelper)
	req := request{Dir: "/ws/project", Command: "go test ./...", Env: []string{"PATH=/usr/bin:/bin", "HOME=/tmp/home", "TMPDIR=/tmp"}, TimeoutMs: 60000, MaxChars: 8192}
	resp := response{ExitCode: 1, Stdout: strings.Repeat("ok  \tpkg\t0.01s\n", 40), Stderr: "FAIL\n"}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		_ = g.write(&buf, req)
		var r request
		if err := h.read(&buf, &r); err != nil {
			b.Fatal(err)
		}
		_ = h.write(&buf, resp)
		var s response
		if err := g.read(&buf, &s); err != nil {
			b.Fatal(err)
		}
	}
}
