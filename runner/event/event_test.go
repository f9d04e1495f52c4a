package event

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func TestAppendJSONMatchesMarshal(t *testing.T) {
	at := time.Date(2026, 11, 29, 23, 5, 7, 123456000, time.UTC)
	payloads := []any{
		ToolResultPayload{RoleID: "coder-1-2", Tool: "read_file", Result: json.RawMessage(`{"ok":true,"content":"<b>&amp;\u2028\n"}`)},
		Card{Status: "success", Summary: "done \x1b]52;c;Zm9v\x07 <script>"},
		nil,
		map[string]string{"k": "v"},
	}
	for _, p := range payloads {
		e, err := New(at, ToolResult, p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("AppendJSON = %s\nwant          %s", got, want)
		}
	}
	// The zero time and an empty payload.
	e := Event{Type: RoleStart}
	want, _ := json.Marshal(e)
	if got := e.AppendJSON([]byte("x")); !bytes.Equal(got, append([]byte("x"), want...)) {
		t.Errorf("AppendJSON of an empty event = %s, want x%s", got, want)
	}
}
