package provider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tidwall/gjson"
)

// chatStream reads a chat completion's Server-Sent Events and decodes each
// event's data as a chunk, once.
//
// It replaces the SDK's ssestream for this one stream, whose every chunk
// cost four passes: a scanner's copy of each line, a search for an error
// member, json.Unmarshal's validation, and then the lenient decode of
// UnmarshalJSON, which validated again and copied the chunk. Here the line
// buffer and the event's data buffer are reused from chunk to chunk.
//
// The framing is ssestream's: "data:" lines (one optional space after the
// colon) are joined with newlines, a blank line ends an event, "event:"
// and other fields and ":" comments are ignored, a "[DONE]" event ends the
// stream, an event whose data has an "error" member fails it, and an event
// the body ends in the middle of is dropped.
type chatStream struct {
	body io.ReadCloser
	r    *bufio.Reader
	data []byte // the current event's data
	line []byte // a line longer than the reader's buffer, assembled
	// keepRaw copies each chunk's text into the chunk, for a reasoning
	// field only known from the configuration (customReasoning).
	keepRaw bool
	err     error
}

// maxEventLine bounds one line of the stream, as ssestream's scanner did.
const maxEventLine = 32 << 20

func newChatStream(body io.ReadCloser, keepRaw bool) *chatStream {
	return &chatStream{body: body, r: bufio.NewReaderSize(body, 16<<10), keepRaw: keepRaw}
}

// next decodes the next chunk into c. It returns false at the end of the
// stream or on an error (see err).
func (s *chatStream) next(c *chatStreamChunk) bool {
	if s.err != nil {
		return false
	}
	data, ok := s.event()
	if !ok {
		return false
	}
	if bytes.HasPrefix(data, []byte("[DONE]")) {
		s.err = io.EOF
		return false
	}
	if ep := gjson.GetBytes(data, "error"); ep.Exists() {
		s.err = &streamError{msg: "received error while streaming: " + ep.String(), data: append([]byte(nil), data...)}
		return false
	}
	*c = chatStreamChunk{}
	if err := c.decode(data, s.keepRaw); err != nil {
		s.err = err
		return false
	}
	return true
}

// event reads up to the blank line that ends the next event with data.
func (s *chatStream) event() ([]byte, bool) {
	s.data = s.data[:0]
	for {
		line, err := s.readLine()
		if err != nil {
			if err != io.EOF {
				s.err = err
			} else {
				s.err = io.EOF
			}
			return nil, false
		}
		if len(line) == 0 {
			if len(s.data) > 0 {
				return s.data, true
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if string(name) != "data" {
			continue // a comment, "event", "id", "retry"
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		s.data = append(append(s.data, value...), '\n')
	}
}

// readLine returns the next line without its line ending (\n or \r\n),
// valid until the next call. A last line without a newline still counts.
func (s *chatStream) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.line = append(s.line[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = s.r.ReadSlice('\n')
			s.line = append(s.line, line...)
			if len(s.line) > maxEventLine {
				return nil, fmt.Errorf("stream: a line longer than %d bytes", maxEventLine)
			}
		}
		line = s.line
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

// Err is the stream's error: nil after a clean end.
func (s *chatStream) Err() error {
	if errors.Is(s.err, io.EOF) {
		return nil
	}
	return s.err
}

func (s *chatStream) Close() error { return s.body.Close() }

// streamError is an error object a server sent inside the stream.
type streamError struct {
	msg  string
	data []byte
}

func (e *streamError) Error() string { return e.msg }

// decode decodes data leniently, as the SDK's decoder did: a field of an
// unexpected type (say, content sent as an array of parts) is left empty
// rather than failing the whole stream; a syntax error fails it.
func (c *chatStreamChunk) decode(data []byte, keepRaw bool) error {
	type plain chatStreamChunk // the same fields without UnmarshalJSON
	err := json.Unmarshal(data, (*plain)(c))
	if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		err = nil
	}
	if keepRaw {
		// The stream's buffer is reused after this returns, so copy.
		c.raw = append([]byte(nil), data...)
	}
	return err
}

// customReasoningField reports a reasoning field name that only the raw
// chunk can answer for.
func customReasoningField(field string) bool {
	return field != "" && field != "reasoning_content" && field != "reasoning"
}
