package runner

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/guildhall/guildhall/runner/provider"
)

// TestSearchRoleBlocksArgumentForms: the original's {pattern, kind} and the
// seed manifest's {query, regex} both work, and a regex is searched as a
// regex only when asked.
func TestSearchRoleBlocksArgumentForms(t *testing.T) {
	target := &Frame{Role: "coder", RoleID: "coder-1-2", History: []provider.Message{
		{Role: "system", Content: "s"}, {Role: "user", Content: "t"},
		{Role: "assistant", Content: "ran go test ./a then go test ./b", Reasoning: "literal a.b here"},
	}}
	r, caller := inspectionRun(t, target)
	count := func(args map[string]any) (int, string) {
		args["targetRole"] = "coder-1-2"
		b, _ := json.Marshal(args)
		res := r.internalTools()["search_role_blocks"](context.Background(), caller, b)
		if res.Failed() {
			return -1, res.Kind
		}
		out, _ := json.Marshal(res.Data)
		var d struct{ Matches []any }
		_ = json.Unmarshal(out, &d)
		return len(d.Matches), ""
	}
	cases := []struct {
		name string
		args map[string]any
		want int
	}{
		{"original regex", map[string]any{"pattern": `go test \./[ab]`, "kind": "regex"}, 2},
		{"original substring is literal", map[string]any{"pattern": `go test \./[ab]`, "kind": "substring"}, 0},
		{"original default is substring", map[string]any{"pattern": "a.b"}, 1},
		{"original regex dot matches any", map[string]any{"pattern": "a.b", "kind": "regex"}, 1},
		{"original field", map[string]any{"pattern": "go test", "field": "reasoning"}, 0},
		{"seed regex flag", map[string]any{"query": `\./[ab]`, "regex": true}, 2},
		{"seed literal", map[string]any{"query": "./a"}, 1},
	}
	for _, c := range cases {
		if got, kind := count(c.args); got != c.want {
			t.Errorf("%s: %d matches (%s), want %d", c.name, got, kind, c.want)
		}
	}
	if _, kind := count(map[string]any{"pattern": "x", "kind": "glob"}); kind != "invalid_arguments" {
		t.Errorf("an unknown kind must be refused, got %q", kind)
	}
	if _, kind := count(map[string]any{"pattern": "(", "kind": "regex"}); kind != "invalid_arguments" {
		t.Errorf("an invalid regex must be refused, got %q", kind)
	}
}
