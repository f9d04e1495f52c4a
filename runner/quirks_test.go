package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// TestWholeRunsOverServerQuirks runs a delegation through the servers
// whose quirks fakellm reproduces for the ones this machine cannot run:
// Ollama (no stream usage, whole tool calls all at index 0, finish_reason
// "stop" with tool calls, reasoning in "reasoning") and vLLM (a call's name
// before its arguments, reasoning_content, usage only when asked).
func TestWholeRunsOverServerQuirks(t *testing.T) {
	for name, flavor := range map[string]fakellm.Flavor{"llama.cpp": fakellm.FlavorLlamaCpp, "ollama": fakellm.FlavorOllama, "vllm": fakellm.FlavorVLLM} {
		t.Run(name, func(t *testing.T) {
			f := fakellm.New()
			defer f.Close()
			f.Flavor = flavor
			read := func(p string) fakellm.Call {
				return fakellm.Call{Name: "read_file", Args: map[string]string{"path": p}}
			}
			f.Queue("orchestrator",
				fakellm.Reply{Reasoning: "Two files first.", Content: "Reading both.", Calls: []fakellm.Call{read("a.txt"), read("b.txt")}, PromptTokens: 900},
				fakellm.Reply{Calls: []fakellm.Call{{Name: "agent", Args: map[string]string{"role": "coder", "task": "write c.txt"}}}},
				fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "done"}}}})
			f.Queue("coder",
				fakellm.Reply{Reasoning: "A one-line file.", Calls: []fakellm.Call{{Name: "write_file", Args: map[string]string{"path": "c.txt", "content": "from " + name + "\n"}}}},
				fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "wrote c.txt"}}}})
			g := testGuild(t)
			d := DefaultDeployment()
			d.FitToGuild(g)
			dir := t.TempDir()
			for _, p := range []string{"a.txt", "b.txt"} {
				if err := os.WriteFile(filepath.Join(dir, p), []byte(p+" body\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := provider.NewOpenAIChat(provider.Config{BaseURL: f.BaseURL(), Model: "fake-model", RequestTimeout: 5 * time.Second})
			s, err := OpenSession(SessionConfig{Workspace: dir, Sealer: testSealer(dir), Guild: g, Deployment: d, Provider: p, NoInput: true, EndpointAnswered: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			id, err := s.Submit(context.Background(), Submission{Task: "read and write"})
			if err != nil {
				t.Fatal(err)
			}
			if out := waitOutcome(t, s, 30*time.Second); out.Status != store.StatusSuccess {
				t.Fatalf("outcome %+v", out)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "c.txt")); err != nil || string(b) != "from "+name+"\n" {
				t.Fatalf("c.txt = %q, %v", b, err)
			}
			evs := readEvents(t, testWS(dir), id)
			var reads []string
			ids := map[string]bool{}
			for _, e := range find(evs, event.ToolResult) {
				var r event.ToolResultPayload
				_ = e.Decode(&r)
				if r.Tool == "read_file" && r.Kind == "success" {
					reads = append(reads, r.CallID)
					ids[r.CallID] = true
				}
			}
			if len(reads) != 2 || len(ids) != 2 {
				t.Errorf("read_file results %v: both calls of the reply must run, each under its own id", reads)
			}
			var first event.LLMCallPayload
			_ = find(evs, event.LLMCall)[0].Decode(&first)
			if first.Received == nil || first.Received.Reasoning != "Two files first." || first.Received.Content != "Reading both." {
				t.Errorf("first reply = %+v", first.Received)
			}
			if flavor == fakellm.FlavorOllama {
				if first.Usage.PromptTokens != 0 {
					t.Errorf("Ollama reported no usage, yet the log says %+v", first.Usage)
				}
			} else if first.Usage.PromptTokens != 900 {
				t.Errorf("usage = %+v, want the reported 900 prompt tokens", first.Usage)
			}
			if len(find(evs, event.ProviderFailure)) != 0 {
				t.Errorf("the quirks made provider failures: %v", types(find(evs, event.ProviderFailure)))
			}
		})
	}
}
