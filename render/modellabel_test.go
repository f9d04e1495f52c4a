package render

import (
	"encoding/json"
	"testing"

	"github.com/guildhall/guildhall/runner/event"
)

func TestRoleStartLineNamesANamedModel(t *testing.T) {
	line := func(p event.RoleStartPayload) string {
		b, _ := json.Marshal(p)
		s, ok := HeadlessLine(event.Event{Type: event.RoleStart, Payload: b})
		if !ok {
			t.Fatal("no line")
		}
		return s
	}
	if got := line(event.RoleStartPayload{Role: "coder", RoleID: "coder-1-2", Depth: 1, Task: "fix it", Model: "qwen-7b", ModelRef: "fast"}); got != "  ▶ coder-1-2 started: fix it · on qwen-7b (fast)" {
		t.Errorf("named model: %q", got)
	}
	// The model block's model is the run's: the line stays as it was.
	if got := line(event.RoleStartPayload{Role: "coder", RoleID: "coder-1-2", Depth: 1, Task: "fix it", Model: "qwen-32b"}); got != "  ▶ coder-1-2 started: fix it" {
		t.Errorf("model block: %q", got)
	}
	for _, c := range []struct{ model, ref, want string }{
		{"qwen-7b", "fast", "qwen-7b (fast)"},
		{"", "fast", "fast"},
		{"fast", "fast", "fast"},
		{"qwen\x1b[31m", "", "qwen"}, // the escape is dropped whole
		{"", "", ""},
	} {
		if got := ModelLabel(c.model, c.ref); got != c.want {
			t.Errorf("ModelLabel(%q, %q) = %q, want %q", c.model, c.ref, got, c.want)
		}
	}
}
