package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// maxMessage bounds one stream message: a log event is whole, and a model
// reply can be megabytes, but a server sending more is not a console.
const maxMessage = 64 << 20

// errFatal marks a stream failure that reconnecting cannot mend.
type errFatal struct{ err error }

func (e errFatal) Error() string { return e.err.Error() }
func (e errFatal) Unwrap() error { return e.err }

// streamEntry is one log event or delta of GET /api/stream (web's
// StreamEntry as the wire carries it; see questionView).
type streamEntry struct {
	RunID     string          `json:"runId"`
	Seq       int64           `json:"seq"`
	Timestamp time.Time       `json:"timestamp"`
	Type      event.Type      `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// follow reads the stream until the session ends, reconnecting after a
// drop. first gets the outcome of the first connection's catch-up.
func (s *Session) follow(first chan<- error) {
	ready := false
	markReady := func() {
		if !ready {
			ready = true
			first <- nil
		}
	}
	var failingSince time.Time
	backoff := 100 * time.Millisecond
	for {
		connected, err := s.readStream(markReady)
		if s.ctx.Err() != nil {
			if !ready {
				first <- s.ctx.Err()
			}
			s.end(nil)
			return
		}
		var fatal errFatal
		if !ready || errors.Is(err, ErrUnauthorized) || errors.As(err, &fatal) {
			if !ready {
				first <- err
			}
			s.end(err)
			return
		}
		if connected {
			failingSince, backoff = time.Time{}, 100*time.Millisecond
		} else if failingSince.IsZero() {
			failingSince = time.Now()
		}
		if !failingSince.IsZero() && time.Since(failingSince) > s.cfg.GiveUp {
			if errors.Is(err, syscall.ECONNREFUSED) {
				err = ErrConsoleGone
			} else {
				err = fmt.Errorf("%w (last: %v)", ErrConsoleGone, err)
			}
			s.end(err)
			return
		}
		select {
		case <-time.After(backoff):
		case <-s.ctx.Done():
		}
		backoff = min(2*backoff, time.Second)
	}
}

// readStream makes one connection and folds its messages in until it
// ends; connected reports whether the server accepted it.
func (s *Session) readStream(ready func()) (connected bool, err error) {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, s.base.JoinPath("/api/stream").String(), nil)
	if err != nil {
		return false, errFatal{err}
	}
	req.Header.Set("Authorization", "Bearer "+s.cfg.Token)
	req.Header.Set("Accept", "text/event-stream")
	s.mu.Lock()
	if s.run != "" {
		req.Header.Set("Last-Event-ID", fmt.Sprintf("%s:%d", s.run, s.seq))
	}
	s.mu.Unlock()
	resp, err := s.hc.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return false, ErrUnauthorized
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return false, errFatal{apiError(http.MethodGet, "/api/stream", resp.StatusCode, data)}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, errFatal{fmt.Errorf("GET /api/stream: the answer is not an event stream (%q): is this a Guildhall console?", contentType(resp))}
	}
	// A stream that sends nothing, not even its keep-alive comment, is
	// dead: closing the body ends the read, and the loop reconnects.
	var silent atomic.Bool
	idle := time.AfterFunc(s.cfg.IdleTimeout, func() { silent.Store(true); resp.Body.Close() })
	defer idle.Stop()
	br := bufio.NewReaderSize(&touchReader{r: resp.Body, touch: func() { idle.Reset(s.cfg.IdleTimeout) }}, 64<<10)
	for {
		m, err := readMessage(br)
		if silent.Load() {
			return true, fmt.Errorf("GET /api/stream: the console sent nothing for %v", s.cfg.IdleTimeout)
		}
		if err != nil {
			return true, err
		}
		if err := s.handle(m, ready); err != nil {
			return true, errFatal{err}
		}
	}
}

// touchReader calls touch on every read that got data.
type touchReader struct {
	r     io.Reader
	touch func()
}

func (t *touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.touch()
	}
	return n, err
}

// sseMessage is one Server-Sent Events message.
type sseMessage struct {
	name string
	data []byte
}

// readMessage reads the next message, skipping comments; id lines are not
// needed (the entry carries its run and seq).
func readMessage(br *bufio.Reader) (sseMessage, error) {
	var m sseMessage
	var data bytes.Buffer
	for {
		line, err := readLine(br)
		if err != nil {
			return m, err
		}
		if len(line) == 0 {
			if m.name == "" && data.Len() == 0 {
				continue
			}
			m.data = data.Bytes()
			return m, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			m.name = string(value)
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			if data.Len()+len(value) > maxMessage {
				return m, errFatal{fmt.Errorf("GET /api/stream: a message is larger than %d bytes", maxMessage)}
			}
			data.Write(value)
		}
	}
}

// readLine reads one line without its end, bounded by maxMessage.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxMessage {
			return nil, errFatal{fmt.Errorf("GET /api/stream: a line is longer than %d bytes", maxMessage)}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}

// handle folds one message into the session.
func (s *Session) handle(m sseMessage, ready func()) error {
	switch m.name {
	case "hello":
		var h struct {
			RunID  string `json:"runId"`
			Active bool   `json:"active"`
		}
		if err := json.Unmarshal(m.data, &h); err != nil {
			return fmt.Errorf("GET /api/stream: hello does not parse: %w", err)
		}
		// The run id reaches the terminal (the attach notice) and paths:
		// a server that sends anything but a run id is not a console. What
		// it sent instead is not repeated.
		if h.RunID != "" && !store.ValidRunID(h.RunID) {
			return fmt.Errorf("GET /api/stream: the console's hello names no run id (run-YYYYMMDD-HHMMSS) but %d bytes of something else: is this a Guildhall console?", len(h.RunID))
		}
		s.mu.Lock()
		s.active = h.Active && h.RunID != ""
		if s.run == "" {
			s.run = h.RunID
		}
		s.mu.Unlock()
	case "ready":
		ready()
	case "log", "delta":
		var se streamEntry
		if err := json.Unmarshal(m.data, &se); err != nil {
			return fmt.Errorf("GET /api/stream: an event does not parse: %w", err)
		}
		if err := store.CheckRunID(se.RunID); err != nil {
			return fmt.Errorf("GET /api/stream: an event's %w", err)
		}
		s.publish(se, m.name == "delta")
	}
	// Other names are a newer server's: skipped.
	return nil
}

// publish puts one event on the local bus, once: a log event the session
// already has (the same run, an earlier seq) is dropped.
func (s *Session) publish(se streamEntry, delta bool) {
	e := event.Event{Seq: se.Seq, Timestamp: se.Timestamp, Type: se.Type, Payload: se.Payload}
	if delta {
		e.Seq, e.Ephemeral = -1, true
		s.bus.Publish(e)
		return
	}
	s.mu.Lock()
	if se.RunID == s.run && se.Seq <= s.seq {
		s.mu.Unlock()
		return
	}
	newRun := se.RunID != s.run || s.seq < 0
	s.run, s.seq = se.RunID, se.Seq
	switch se.Type {
	case event.RunStarted:
		s.active = true
	case event.RunStatus:
		var p event.RunStatusPayload
		if e.Decode(&p) == nil && store.Terminal(p.Status) {
			s.active = false
		}
	}
	s.mu.Unlock()
	if newRun {
		// The bus keeps the current run's events for a late subscriber.
		s.bus.Reset(nil)
	}
	s.bus.Publish(e)
}
