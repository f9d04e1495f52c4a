package web

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// Transcript bounds: the newest messages are kept, each cut.
const (
	maxTranscriptMessages = 300
	maxTranscriptContent  = 8000
)

// TranscriptMessage is one message of a role instance's conversation:
// what was sent to the model (system, user), what it answered (assistant,
// with its tool calls), and each tool result.
type TranscriptMessage struct {
	Kind       string               `json:"kind"` // sent, received, tool_result
	Role       string               `json:"role"` // system, user, assistant, tool
	Content    string               `json:"content"`
	Truncated  bool                 `json:"truncated,omitempty"`
	ToolCalls  []TranscriptToolCall `json:"toolCalls,omitempty"`
	Tool       string               `json:"tool,omitempty"`
	ToolCallID string               `json:"toolCallId,omitempty"`
	ResultKind string               `json:"resultKind,omitempty"`
	At         time.Time            `json:"at"`
}

// TranscriptToolCall is a tool call the assistant made, flat: the API keeps
// this shape whatever shape the log holds (event.WireToolCall reads both).
type TranscriptToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func transcriptCalls(calls []event.WireToolCall) []TranscriptToolCall {
	var out []TranscriptToolCall
	for _, c := range calls {
		out = append(out, TranscriptToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return out
}

// Transcript is GET /api/runs/:id/transcript?roleId=….
type Transcript struct {
	RunID    string              `json:"runId"`
	RoleID   string              `json:"roleId"`
	Role     string              `json:"role"`
	Messages []TranscriptMessage `json:"messages"`
	// Omitted counts older messages left out.
	Omitted int `json:"omitted"`
}

func cutContent(s string) (string, bool) {
	out, cut := clip(s, maxTranscriptContent)
	return out, cut
}

func (s *Server) handleTranscript(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	roleID := r.URL.Query().Get("roleId")
	if roleID == "" {
		writeError(w, http.StatusBadRequest, "invalid_query")
		return
	}
	ws := s.sess.Workspace()
	if _, err := ws.ReadMeta(id); err != nil {
		writeError(w, http.StatusNotFound, "unknown_run")
		return
	}
	path, _ := ws.LogPath(id)
	t := Transcript{RunID: id, RoleID: roleID, Messages: []TranscriptMessage{}}
	found, open := false, false
	add := func(m TranscriptMessage) {
		t.Messages = append(t.Messages, m)
		if len(t.Messages) > 2*maxTranscriptMessages {
			drop := len(t.Messages) - maxTranscriptMessages
			t.Omitted += drop
			t.Messages = append(t.Messages[:0], t.Messages[drop:]...)
		}
	}
	_, err := store.ReadLog(path, func(seq int64, rec []byte) error {
		var e event.Event
		if json.Unmarshal(rec, &e) != nil {
			return nil
		}
		switch e.Type {
		case event.RoleStart:
			var p event.RoleStartPayload
			if e.Decode(&p) == nil && p.RoleID == roleID {
				found, open, t.Role = true, true, p.Role
			}
		case event.RoleFinished:
			var p event.RoleFinishedPayload
			if e.Decode(&p) == nil && p.RoleID == roleID {
				open = false
			}
		case event.LLMCall:
			var p event.LLMCallPayload
			if e.Decode(&p) != nil || p.RoleID != roleID {
				return nil
			}
			found = true
			for _, m := range p.Sent {
				if m.Role == "tool" {
					continue // the tool_result event carries it whole
				}
				c, cut := cutContent(m.Content)
				add(TranscriptMessage{Kind: "sent", Role: m.Role, Content: c, Truncated: cut, ToolCalls: transcriptCalls(m.ToolCalls), At: e.Timestamp})
			}
			if p.Received != nil {
				c, cut := cutContent(p.Received.Content)
				add(TranscriptMessage{Kind: "received", Role: "assistant", Content: c, Truncated: cut, ToolCalls: transcriptCalls(p.Received.ToolCalls), At: e.Timestamp})
			}
		case event.ToolResult:
			var p event.ToolResultPayload
			// The original system's tool_result names the role, not the
			// instance: roles run depth first, so while the instance asked
			// for is open, a result of its role name is its own.
			if e.Decode(&p) != nil || (p.RoleID != roleID && (p.RoleID != "" || !open || p.Role != t.Role)) {
				return nil
			}
			c, cut := cutContent(string(p.Result))
			add(TranscriptMessage{Kind: "tool_result", Role: "tool", Content: c, Truncated: cut, Tool: p.Tool,
				ToolCallID: p.CallID, ResultKind: p.Kind, At: e.Timestamp})
		}
		return nil
	})
	if err != nil && !found {
		writeError(w, http.StatusNotFound, "unknown_role")
		return
	}
	if !found {
		writeError(w, http.StatusNotFound, "unknown_role")
		return
	}
	if len(t.Messages) > maxTranscriptMessages {
		drop := len(t.Messages) - maxTranscriptMessages
		t.Omitted += drop
		t.Messages = t.Messages[drop:]
	}
	for i := range t.Messages {
		for j := range t.Messages[i].ToolCalls {
			a, _ := cutContent(t.Messages[i].ToolCalls[j].Arguments)
			t.Messages[i].ToolCalls[j].Arguments = a
		}
	}
	writeJSON(w, http.StatusOK, t)
}
