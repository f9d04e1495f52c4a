package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// The helper protocol: length-prefixed JSON frames over the helper's
// stdin (requests) and stdout (the hello, then one response per request).
// A frame is a 4-byte big-endian length and that many bytes of JSON. The
// helper runs inside the sandbox with the workspace's programs as its
// children, so Guildhall reads its frames as untrusted input: bounded in
// size and strictly decoded.

// protocolVersion changes whenever a frame changes shape.
const protocolVersion = 1

// maxFrame bounds a frame: a response carries two streams capped at a few
// thousand characters each, so anything near this is not a response.
const maxFrame = 8 << 20

// hello is the helper's first frame.
type hello struct {
	Version   int    `json:"version"`
	ProxyPort int    `json:"proxyPort,omitempty"`
	Error     string `json:"error,omitempty"`
}

// request is one command to interpret.
type request struct {
	Dir       string   `json:"dir"`
	Command   string   `json:"command"`
	Env       []string `json:"env"`
	TimeoutMs int64    `json:"timeoutMs"`
	MaxChars  int      `json:"maxChars"`
}

// response is what the command did. Failure is set when the interpreter
// could not be set up (the result fields are then empty).
type response struct {
	ExitCode  int    `json:"exitCode"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	TimedOut  bool   `json:"timedOut"`
	StdoutCut bool   `json:"stdoutCut"`
	Failure   string `json:"failure,omitempty"`
}

func writeFrame(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	if len(b) > maxFrame {
		return fmt.Errorf("frame of %d bytes exceeds the limit", len(b))
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	_, err = w.Write(buf)
	return err
}

func readFrame(r io.Reader, v any) error {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxFrame {
		return fmt.Errorf("frame of %d bytes exceeds the limit", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return fmt.Errorf("short frame: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode frame: %w", err)
	}
	return nil
}
