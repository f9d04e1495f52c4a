package event

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// benchLLMCall is a turn with three tool calls and a 4 KiB reply, the
// common shape of a coder's turn.
func benchLLMCall() LLMCallPayload {
	args := `{"path":"src/` + strings.Repeat("x", 40) + `.go","content":"` + strings.Repeat("line\\n", 200) + `"}`
	calls := []WireToolCall{{ID: "c1", Name: "write_file", Arguments: args}, {ID: "c2", Name: "read_file", Arguments: `{"path":"a.go"}`}, {ID: "c3", Name: "test", Arguments: `{"commands":["go test ./..."]}`}}
	return LLMCallPayload{Role: "coder", RoleID: "coder-1-2", MessageCount: 12, SentFrom: 10,
		Sent:     []WireMessage{{Role: "assistant", Content: "ok", ToolCalls: calls}, {Role: "tool", Content: strings.Repeat("r", 2000), ToolCallID: "c1"}},
		Received: &Received{Content: strings.Repeat("c", 4096), ToolCalls: calls}, Usage: Usage{PromptTokens: 9000, CompletionTokens: 300}}
}

// BenchmarkEncodeLLMCall is the cost of writing one llm_call event.
func BenchmarkEncodeLLMCall(b *testing.B) {
	p := benchLLMCall()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(time.Unix(0, 0), LLMCall, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeLLMCall is the cost of reading one back (transcripts).
func BenchmarkDecodeLLMCall(b *testing.B) {
	e, _ := New(time.Unix(0, 0), LLMCall, benchLLMCall())
	b.ReportAllocs()
	for b.Loop() {
		var p LLMCallPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRoleStart is the cost of reading a role_start (the flow
// model reads every one).
func BenchmarkDecodeRoleStart(b *testing.B) {
	e, _ := New(time.Unix(0, 0), RoleStart, RoleStartPayload{Role: "coder", RoleID: "coder-1-2", Depth: 1, Task: strings.Repeat("t", 300), Parent: "orchestrator", ParentID: "orchestrator-0-1"})
	b.ReportAllocs()
	for b.Loop() {
		var p RoleStartPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			b.Fatal(err)
		}
	}
}
