package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// The event stream (GET /api/stream) serves the session's log events
// whole, for the operator's own programs on the host (guildhall attach):
// the browser's /api/events only names each event and leaves the client to
// fetch views, while a terminal attached over HTTP folds the events itself,
// exactly as the console that started the run does.

// StreamEntry is one message of the event stream: a log event of a run
// (payload redacted as every route serves it), or a streamed delta
// (Seq -1, never in the log).
type StreamEntry struct {
	RunID     string          `json:"runId"`
	Seq       int64           `json:"seq"`
	Timestamp time.Time       `json:"timestamp"`
	Type      event.Type      `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// streamBuffer is each stream client's queue. A client that falls this
// far behind is disconnected; it reconnects with Last-Event-ID and reads
// what it missed from the log, so nothing is lost or repeated.
const streamBuffer = 1024

// streamHub fans session events out to the stream's clients.
type streamHub = fanout[StreamEntry]

func newStreamHub() *streamHub { return newFanout[StreamEntry](streamBuffer) }

// streamEntryOf is a session event of runID as the stream serves it; ok
// is false before any run.
func streamEntryOf(e event.Event, runID string) (se StreamEntry, ok bool) {
	if runID == "" {
		return se, false
	}
	se = StreamEntry{RunID: runID, Seq: e.Seq, Timestamp: e.Timestamp, Type: e.Type, Payload: redact(e)}
	if e.Ephemeral {
		se.Seq = -1
	}
	return se, true
}

// streamCursor is a position in the stream: the last event a client has,
// as "RUN_ID:SEQ".
type streamCursor struct {
	runID string
	seq   int64
}

// parseCursor reads a Last-Event-ID (or ?after=); "" is the start of the
// live run.
func parseCursor(s string) (streamCursor, error) {
	if s == "" {
		return streamCursor{seq: -1}, nil
	}
	id, n, ok := strings.Cut(s, ":")
	if !ok || store.CheckRunID(id) != nil {
		return streamCursor{}, fmt.Errorf("cursor is not RUN_ID:SEQ")
	}
	seq, err := strconv.ParseInt(n, 10, 64)
	if err != nil || seq < -1 {
		return streamCursor{}, fmt.Errorf("cursor is not RUN_ID:SEQ")
	}
	return streamCursor{runID: id, seq: seq}, nil
}

// streamWriter writes one client's stream and remembers the last event it
// sent per run, so that the catch-up from the log and the live feed never
// repeat an event.
type streamWriter struct {
	w    http.ResponseWriter
	run  string
	last int64
	// live is set once the catch-up is done: from then on every event of
	// the run must follow the last one (the log may skip a malformed line,
	// the feed never does).
	live bool
}

// errGap ends a stream whose live feed skipped events (the client fell
// behind and the hub dropped some): the client reconnects and reads them
// from the log.
var errGap = errors.New("stream: events were dropped")

func (sw *streamWriter) send(se StreamEntry) error {
	if se.Seq >= 0 {
		if se.RunID == sw.run && se.Seq <= sw.last {
			return nil
		}
		if se.RunID == sw.run && se.Seq != sw.last+1 && sw.live {
			return errGap
		}
		sw.run, sw.last = se.RunID, se.Seq
	}
	b, err := json.Marshal(se)
	if err != nil {
		return err
	}
	if se.Seq < 0 {
		_, err = fmt.Fprintf(sw.w, "event: delta\ndata: %s\n\n", b)
		return err
	}
	_, err = fmt.Fprintf(sw.w, "id: %s:%d\nevent: log\ndata: %s\n\n", se.RunID, se.Seq, b)
	return err
}

// catchUp sends run's log events after seq from disk.
func (s *Server) catchUp(sw *streamWriter, runID string, after int64) error {
	path, err := s.sess.Workspace().LogPath(runID)
	if err != nil {
		return err
	}
	_, err = store.ReadLog(path, func(seq int64, rec []byte) error {
		if seq <= after {
			return nil
		}
		var e event.Event
		if json.Unmarshal(rec, &e) != nil {
			return nil
		}
		e.Seq = seq
		return sw.send(StreamEntry{RunID: runID, Seq: seq, Timestamp: e.Timestamp, Type: e.Type, Payload: redact(e)})
	})
	return err
}

func (s *Server) handleStream(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming_unsupported")
		return
	}
	raw := r.Header.Get("Last-Event-ID")
	if raw == "" {
		raw = r.URL.Query().Get("after")
	}
	cur, err := parseCursor(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_query")
		return
	}
	// Join the feed before reading the log: an event is written to the log
	// before it is published, so between the two nothing falls in a gap.
	c := s.streamHub.add()
	defer s.streamHub.remove(c)

	beginEventStream(w)

	live, hello := s.hello()
	if err := writeSSE(w, hello); err != nil {
		return
	}
	sw := &streamWriter{w: w, last: -1}
	if cur.runID != "" && cur.runID != live {
		// The client's run ended while it was away: the rest of it first.
		sw.run, sw.last = cur.runID, cur.seq
		if s.catchUp(sw, cur.runID, cur.seq) != nil {
			return
		}
		cur = streamCursor{seq: -1}
	}
	if live != "" {
		if cur.runID == live {
			sw.run, sw.last = live, cur.seq
		}
		if s.catchUp(sw, live, cur.seq) != nil {
			return
		}
	}
	if err := writeSSE(w, notice{name: "ready", data: []byte("{}")}); err != nil {
		return
	}
	flusher.Flush()
	sw.live = true
	// Ending the stream is the resync: the client comes back with its
	// Last-Event-ID and reads the gap from the log.
	pumpSSE(r.Context(), w, flusher, c, func(se StreamEntry) error {
		if c.overflowed() {
			return errOverflowed
		}
		return sw.send(se)
	})
}

// errOverflowed ends a stream whose client fell behind the live feed.
var errOverflowed = errors.New("the client fell behind the live feed")
