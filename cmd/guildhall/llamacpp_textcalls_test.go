package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/llamatest"
	"github.com/guildhall/guildhall/runner/event"
)

// TestLlamaToolCallModelWithoutToolsNeverSucceeds runs the real binary
// against the real llama-server and its tool-call model, through a proxy
// that takes the tools out of every request, as a server without a
// tool-aware chat template does: the model then writes its tool-call
// tokens as text ("<tool_call>", quotes, nothing else). The run used to
// end "✓ success" with that markup as its summary; now each such reply
// is an empty reply, retried, and the run ends error within the retry
// bound, never success.
func TestLlamaToolCallModelWithoutToolsNeverSucceeds(t *testing.T) {
	h := newHostile(t)
	srv := llamatest.Start(t, llamatest.ToolCall, 16384)
	base := llamatest.Proxy(t, srv.URL, func(body map[string]any) {
		delete(body, "tools")
		delete(body, "tool_choice")
	}) + "/v1"
	ws := h.workspace("llama-no-tools")
	// A short reply bound keeps each call cheap on a loaded machine.
	dep := filepath.Join(h.root, "deployment.json")
	h.write(dep, `{"model": {"generation": {"maxTokens": 48}}}`, 0o644)
	res := h.run(ws, 5*time.Minute, "run", "--workspace", ws, "--deployment", dep, "--base-url", base, "--no-input", "Add a CONTRIBUTING.md file")
	if res.code == exitOK || strings.Contains(res.stdout, "run success") {
		t.Fatalf("a model that only wrote markup ended success:\n%s\n%s", res, srv.Log())
	}
	m, evs := readRun(t, ws)
	if m.Status != "error" || m.Error == nil {
		t.Fatalf("meta %s %+v", m.Status, m.Error)
	}
	// Whatever it wrote, the model never acted, and the run says why.
	var implicit []event.FailurePayload
	for _, e := range evs {
		switch e.Type {
		case event.ToolCall:
			t.Errorf("a tool ran though the model never made a call: %s", e.Payload)
		case event.ImplicitFinish:
			var p event.FailurePayload
			_ = e.Decode(&p)
			implicit = append(implicit, p)
		}
	}
	if len(implicit) == 0 || implicit[len(implicit)-1].Status != "error" {
		t.Errorf("implicit finishes %+v", implicit)
	}
	switch m.Error.Kind {
	case "empty_reply":
		if !strings.Contains(res.stdout, "only markup or template tokens") && !strings.Contains(res.stdout, "ended its turn at once") {
			t.Errorf("the empty replies do not say what they were:\n%s", res.stdout)
		}
	case "invalid_tool_call":
		// The random model wrote a readable call to a tool it lacks.
		if !strings.Contains(res.stdout, "returns tool calls as text") {
			t.Errorf("the operator was not told:\n%s", res.stdout)
		}
	default:
		t.Errorf("error kind %q, want empty_reply (or invalid_tool_call)", m.Error.Kind)
	}
	if _, err := os.Stat(filepath.Join(ws, "CONTRIBUTING.md")); err == nil {
		t.Error("CONTRIBUTING.md exists: something was written")
	}
}
