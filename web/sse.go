package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/guildhall/guildhall/runner/event"
)

// notice is one Server-Sent Events message. Name is the SSE event name:
//
//   - "event": a new log event {seq, type, runId}; the client then asks the
//     flow endpoint for the delta since its version.
//   - "delta": streamed reply text of the active role {runId, roleId,
//     content} (ephemeral, never in the log).
//   - "resync": the client missed notices and should refetch what it shows.
//   - "hello": sent on connect {runId, active}.
type notice struct {
	name string
	data []byte
}

type eventNotice struct {
	Seq   int64      `json:"seq"`
	Type  event.Type `json:"type"`
	RunID string     `json:"runId"`
}

type deltaNotice struct {
	RunID   string `json:"runId"`
	RoleID  string `json:"roleId"`
	Content string `json:"content"`
}

// noticeFor turns a session event into its notice; ok is false for events
// the stream does not carry (reasoning-only deltas).
func noticeFor(e event.Event, runID string) (notice, bool) {
	if e.Type == event.LLMDelta {
		var p event.LLMDeltaPayload
		if e.Decode(&p) != nil || p.Content == "" {
			return notice{}, false
		}
		b, _ := json.Marshal(deltaNotice{RunID: runID, RoleID: p.RoleID, Content: p.Content})
		return notice{name: "delta", data: b}, true
	}
	if e.Type == event.Egress {
		// The decision itself rides along: the browser shows it without
		// fetching the log.
		var p event.EgressPayload
		if e.Decode(&p) != nil {
			return notice{}, false
		}
		b, _ := json.Marshal(egressNotice{RunID: runID, EgressPayload: p})
		return notice{name: "egress", data: b}, true
	}
	if e.Type == event.MCPServer {
		var p event.MCPServerPayload
		if e.Decode(&p) != nil {
			return notice{}, false
		}
		b, _ := json.Marshal(mcpNotice{RunID: runID, MCPServerPayload: p})
		return notice{name: "mcp", data: b}, true
	}
	b, _ := json.Marshal(eventNotice{Seq: e.Seq, Type: e.Type, RunID: runID})
	return notice{name: "event", data: b}, true
}

// egressNotice is an egress decision for the browser: host, port,
// allowed, rule, via, reason, role. Every field is shown as text.
type egressNotice struct {
	RunID string `json:"runId"`
	event.EgressPayload
}

// mcpNotice is a change of an MCP server's state for the browser. Every
// field is shown as text.
type mcpNotice struct {
	RunID string `json:"runId"`
	event.MCPServerPayload
}

// clientBuffer is each stream client's queue; a client that falls this far
// behind loses notices and is told to resync.
const clientBuffer = 256

// hub fans notices out to the event stream's clients.
type hub = fanout[notice]

func newHub() *hub { return newFanout[notice](clientBuffer) }

// keepAlive is how often an idle stream sends a comment, so proxies and
// the browser keep the connection.
const keepAlive = 15 * time.Second

// beginEventStream sends the headers of a Server-Sent Events answer: never
// cached, never buffered by a proxy.
func beginEventStream(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming_unsupported")
		return
	}
	c := s.hub.add()
	defer s.hub.remove(c)

	beginEventStream(w)

	_, hello := s.hello()
	if err := writeSSE(w, hello); err != nil {
		return
	}
	flusher.Flush()
	pumpSSE(r.Context(), w, flusher, c, func(n notice) error {
		if c.takeMissed() {
			if err := writeSSE(w, notice{name: "resync", data: []byte("{}")}); err != nil {
				return err
			}
		}
		return writeSSE(w, n)
	})
}

// hello is the first message of both streams: the run they follow (the
// active one, else the latest live view's) and whether it is active.
func (s *Server) hello() (live string, hello notice) {
	active, isActive := s.sess.Active()
	live = active
	if !isActive {
		live = s.views.liveID()
	}
	data, _ := json.Marshal(map[string]any{"runId": live, "active": isActive})
	return live, notice{name: "hello", data: data}
}

// pumpSSE forwards c's feed with send until the client goes or send fails:
// what is queued is sent before one flush, and a quiet feed gets a
// keep-alive comment.
func pumpSSE[T any](ctx context.Context, w io.Writer, flusher http.Flusher, c *subscriber[T], send func(T) error) {
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case v := <-c.ch:
			if sendQueued(c.ch, v, send) != nil {
				flusher.Flush() // what was sent before the failure
				return
			}
		}
		flusher.Flush()
	}
}

// sendQueued sends v, then whatever else is already queued on ch.
func sendQueued[T any](ch <-chan T, v T, send func(T) error) error {
	for {
		if err := send(v); err != nil {
			return err
		}
		select {
		case v = <-ch:
		default:
			return nil
		}
	}
}

// writeSSE writes one message. The data is compact JSON: one line.
func writeSSE(w io.Writer, n notice) error {
	_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", n.name, n.data)
	return err
}
