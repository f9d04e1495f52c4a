package event

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWrittenInTheOriginalsShapes: tool calls are written nested, as the
// original's log and the OpenAI wire have them, and read in either shape;
// a parent is read under either name (the runner writes both: see
// cmd/guildhall's original-format test).
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

	var rs RoleStartPayload
	if err := json.Unmarshal([]byte(`{"role":"coder","roleId":"coder-1-2","depth":1,"task":"t","parent":"orchestrator","parentRoleId":"orchestrator-0-1"}`), &rs); err != nil || rs.ParentInstance() != "orchestrator-0-1" || rs.Task != "t" {
		t.Errorf("the original's role_start read as %+v %v", rs, err)
	}
	var ac AgentCallPayload
	if err := json.Unmarshal([]byte(`{"parent":"orchestrator","parentId":"orchestrator-0-1","child":"coder","depth":1}`), &ac); err != nil || ac.ParentInstance() != "orchestrator-0-1" {
		t.Errorf("Guildhall's agent_call read as %+v %v", ac, err)
	}
	var rf RoleFinishedPayload
	if err := json.Unmarshal([]byte(`{"role":"coder","roleId":"coder-1-2","depth":1,"status":"error","error":{"kind":"timeout","details":{"after":30}},"parentRoleId":"p-0-1"}`), &rf); err != nil || rf.ParentInstance() != "p-0-1" || rf.Error == nil || string(rf.Error.Details) != `{"after":30}` {
		t.Errorf("the original's role_finished read as %+v %v", rf, err)
	}
	var plain RoleStartPayload
	if err := json.Unmarshal([]byte(`{"role":"a","roleId":"a-0-1","depth":0,"task":"t"}`), &plain); err != nil || plain.ParentInstance() != "" {
		t.Errorf("an entry role_start read as %+v %v", plain, err)
	}
	if b, _ := json.Marshal(plain); strings.Contains(string(b), "parent") {
		t.Errorf("an entry role_start names a parent: %s", b)
	}
}
