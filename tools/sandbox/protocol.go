package sandbox

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/guildhall/guildhall/tools/shell"
)

// The helper protocol: authenticated, length-prefixed JSON frames over
// one socket, the helper's channel. Guildhall first writes the helper's
// secret (secretSize random bytes, made per helper start and never put in
// an argument or a variable a command could read); then the helper sends
// its hello, and one response per request.
//
// A frame is a 4-byte big-endian length of what follows, an 8-byte
// big-endian sequence number, a 32-byte HMAC-SHA256 and the JSON
// payload. The HMAC, keyed with the secret, covers the frame's direction
// (so a request cannot be sent back as a response), its sequence number
// (so a frame cannot be replayed, dropped or reordered unnoticed) and the
// payload. The helper runs inside the sandbox with the workspace's
// programs as its children, so Guildhall reads its frames as untrusted
// input: bounded in size, authenticated, then strictly decoded. A frame
// that fails its HMAC or its sequence number means something else wrote
// on the channel: the sandbox is broken (TamperedError), not merely gone.

// protocolVersion changes whenever a frame changes shape.
const protocolVersion = 2

// maxFrame bounds a frame: a response carries two streams capped at a few
// thousand characters each, so anything near this is not a response.
const maxFrame = 8 << 20

// secretSize is the length of the helper's secret, the HMAC key.
const secretSize = 32

// frameHeader is the sequence number and the HMAC after the length.
const frameHeader = 8 + sha256.Size

// The directions a frame's HMAC covers.
const (
	toHelper   byte = 'Q' // requests
	fromHelper byte = 'R' // the hello and the responses
)

// hello is the helper's first frame.
type hello struct {
	Version   int    `json:"version"`
	ProxyPort int    `json:"proxyPort,omitempty"`
	Error     string `json:"error,omitempty"`
}

// request is one command to run.
type request struct {
	Dir       string   `json:"dir"`
	Command   string   `json:"command"`
	Env       []string `json:"env"`
	TimeoutMs int64    `json:"timeoutMs"`
	MaxChars  int      `json:"maxChars"`
	// Limits bound the command's resources (sandbox.limits).
	Limits shell.Limits `json:"limits"`
}

// response is what the command did. Failure is set when the shell could
// not start (the result fields are then empty).
type response struct {
	ExitCode  int    `json:"exitCode"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	TimedOut  bool   `json:"timedOut"`
	StdoutCut bool   `json:"stdoutCut"`
	Failure   string `json:"failure,omitempty"`
}

// TamperedError is a helper channel on which a frame failed its HMAC or
// its sequence number, or broke the framing: a process other than the
// helper wrote on it, so no result read from it can be believed. The run
// stops (see runner), and the sandbox refuses every later command.
type TamperedError struct{ Msg string }

func (e *TamperedError) Error() string {
	return "the sandbox's helper channel was tampered with (" + e.Msg + "); its results cannot be trusted, so the run stops"
}

func tampered(format string, a ...any) *TamperedError {
	return &TamperedError{Msg: fmt.Sprintf(format, a...)}
}

// newSecret makes a helper's secret.
func newSecret() ([]byte, error) {
	b := make([]byte, secretSize)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("make the helper's secret: %w", err)
	}
	return b, nil
}

// channel is one end of the helper protocol: it signs what it sends with
// the next send sequence number and checks what it receives against the
// next receive sequence number. A channel is used by one goroutine per
// direction at a time.
type channel struct {
	send, recv       byte // directions
	sendSeq, recvSeq uint64
	sendMac, recvMac hash.Hash
}

// newChannel returns the end that sends in direction send.
func newChannel(secret []byte, send byte) *channel {
	recv := fromHelper
	if send == fromHelper {
		recv = toHelper
	}
	return &channel{send: send, recv: recv,
		sendMac: hmac.New(sha256.New, secret), recvMac: hmac.New(sha256.New, secret)}
}

func frameMAC(m hash.Hash, dir byte, seq []byte, payload []byte) []byte {
	m.Reset()
	m.Write([]byte{dir})
	m.Write(seq)
	m.Write(payload)
	return m.Sum(nil)
}

// write sends v as the next frame.
func (c *channel) write(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	if len(b) > maxFrame {
		return fmt.Errorf("frame of %d bytes exceeds the limit", len(b))
	}
	buf := make([]byte, 4+frameHeader+len(b))
	binary.BigEndian.PutUint32(buf, uint32(frameHeader+len(b)))
	binary.BigEndian.PutUint64(buf[4:], c.sendSeq)
	copy(buf[4+frameHeader:], b)
	copy(buf[12:4+frameHeader], frameMAC(c.sendMac, c.send, buf[4:12], b))
	c.sendSeq++
	_, err = w.Write(buf)
	return err
}

// read receives the next frame into v. The channel ending (io.EOF, a
// short frame) is an I/O error; a frame that is not what this helper
// sent is a *TamperedError.
func (c *channel) read(r io.Reader, v any) error {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxFrame+frameHeader || size < frameHeader {
		return tampered("a frame of %d bytes, which the helper never sends", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("short frame: %w", err)
	}
	seq, mac, payload := b[:8], b[8:frameHeader], b[frameHeader:]
	if !hmac.Equal(mac, frameMAC(c.recvMac, c.recv, seq, payload)) {
		return tampered("frame %d failed its authentication", c.recvSeq)
	}
	if got := binary.BigEndian.Uint64(seq); got != c.recvSeq {
		return tampered("frame number %d arrived where %d was due (a replayed or dropped frame)", got, c.recvSeq)
	}
	c.recvSeq++
	if err := json.Unmarshal(payload, v); err != nil {
		return fmt.Errorf("decode frame: %w", err)
	}
	return nil
}
