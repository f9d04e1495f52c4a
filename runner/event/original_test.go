package event

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWrittenInTheOriginalsShapes: tool calls are written nested, as the
// original's log and the OpenAI wire have them, and parents under both
// names; either shape reads back.
func TestWrittenInTheOriginalsShapes(t *testing.T) {
	b, _ := json.Marshal(Received{ToolCalls: []WireToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}})
	if want := `{"content":"","toolCalls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]}`; string(b) != want {
		t.Fatalf("received = %s\nwant       %s", b, want)
	}
	for _, in := range []string{
		`{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}`,
		`{"id":"c1","name":"read_file","arguments":"{}"}`, // Guildhall's earlier logs
	} {
		var c WireToolCall
		if err := json.Unmarshal([]byte(in), &c); err != nil || c != (WireToolCall{ID: "c1", Name: "read_file", Arguments: "{}"}) {
			t.Errorf("%s read as %+v %v", in, c, err)
		}
	}

	for _, p := range []any{
		RoleStartPayload{Role: "coder", RoleID: "coder-1-2", Depth: 1, Parent: "orchestrator", ParentID: "orchestrator-0-1"},
		RoleFinishedPayload{Role: "coder", RoleID: "coder-1-2", Depth: 1, Status: "success", Parent: "orchestrator", ParentID: "orchestrator-0-1"},
		AgentCallPayload{Parent: "orchestrator", ParentID: "orchestrator-0-1", Child: "coder", Depth: 1},
	} {
		b, _ := json.Marshal(p)
		if !strings.Contains(string(b), `"parentId":"orchestrator-0-1"`) || !strings.Contains(string(b), `"parentRoleId":"orchestrator-0-1"`) {
			t.Errorf("%T written as %s", p, b)
		}
	}
	var rs RoleStartPayload
	if err := json.Unmarshal([]byte(`{"role":"coder","roleId":"coder-1-2","depth":1,"task":"t","parent":"orchestrator","parentRoleId":"orchestrator-0-1"}`), &rs); err != nil || rs.ParentID != "orchestrator-0-1" || rs.Task != "t" {
		t.Errorf("the original's role_start read as %+v %v", rs, err)
	}
	var rf RoleFinishedPayload
	if err := json.Unmarshal([]byte(`{"role":"coder","roleId":"coder-1-2","depth":1,"status":"error","error":{"kind":"timeout","details":{"after":30}},"parentRoleId":"p-0-1"}`), &rf); err != nil || rf.ParentID != "p-0-1" || rf.Error == nil || string(rf.Error.Details) != `{"after":30}` {
		t.Errorf("the original's role_finished read as %+v %v", rf, err)
	}
	var plain RoleStartPayload
	if err := json.Unmarshal([]byte(`{"role":"a","roleId":"a-0-1","depth":0,"task":"t"}`), &plain); err != nil || plain.ParentID != "" {
		t.Errorf("an entry role_start read as %+v %v", plain, err)
	}
	if b, _ := json.Marshal(plain); strings.Contains(string(b), "parent") {
		t.Errorf("an entry role_start names a parent: %s", b)
	}
}
