package runner

// How much of each role's prompt llama-server takes from its cache across
// role switches (docs/local-models.md): a run of the compact seed guild
// whose every request goes to the real server, which reports in its
// timings what it took from the cache and what it evaluated. The replies
// the run acts on are scripted (the tiny models write nonsense), so the
// flow is a real one: the orchestrator delegates to a planner and twice to
// a coder, and waits while they work.
//
// It takes a few minutes, so it runs only when asked:
//
//	GUILDHALL_MEASURE_CACHE=1 go test ./runner -run TestLlamaPromptCacheAcrossRoles -v

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/llamatest"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// cacheMeter sends every role request to the real server (for its cache
// figures) and answers with the scripted reply.
type cacheMeter struct {
	real   provider.Provider
	script provider.Provider
	mu     sync.Mutex
	calls  []meteredCall
}

type meteredCall struct {
	role                     string
	prompt, cached, evaluted int
}

func (c *cacheMeter) Name() string { return "metered" }

func (c *cacheMeter) Complete(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	if req.Role == "" {
		return c.script.Complete(ctx, req, onDelta) // summaries: not part of the figure
	}
	probe := req
	probe.MaxTokens = 4 // the reply is the script's: only the prompt matters
	real, err := c.real.Complete(ctx, probe, nil)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.calls = append(c.calls, meteredCall{req.Role, real.Usage.PromptTokens, real.Usage.CachedPromptTokens, real.Usage.EvaluatedPromptTokens})
	c.mu.Unlock()
	resp, err := c.script.Complete(ctx, req, onDelta)
	if err == nil {
		resp.Usage = real.Usage
	}
	return resp, err
}

// delegationScript is the run: the orchestrator looks, delegates a plan
// and two coding steps, and finishes.
func delegationScript() *provider.Script {
	c := func(name string, args any) provider.ScriptToolCall {
		b, _ := json.Marshal(args)
		return provider.ScriptToolCall{Name: name, Arguments: b}
	}
	t := func(calls ...provider.ScriptToolCall) provider.ScriptTurn {
		return provider.ScriptTurn{ToolCalls: calls}
	}
	fin := func(s string) provider.ScriptToolCall {
		return c("finish", map[string]any{"status": "success", "summary": s})
	}
	return &provider.Script{Roles: map[string][]provider.ScriptTurn{
		"orchestrator": {
			t(c("list_directory", map[string]string{"path": "."})),
			t(c("read_file", map[string]string{"path": "README.md"})),
			t(c("agent", map[string]string{"role": "planner", "task": "Plan adding a --verbose flag to main.go."})),
			t(c("agent", map[string]string{"role": "coder", "task": "Step 1: add the flag to main.go."})),
			t(c("agent", map[string]string{"role": "coder", "task": "Step 2: document the flag in README.md."})),
			t(fin("The flag is added and documented.")),
		},
		"planner": {
			t(c("read_file", map[string]string{"path": "main.go"})),
			t(c("read_file", map[string]string{"path": "README.md"})),
			t(fin("1. add the flag; 2. document it.")),
		},
		"coder": {
			t(c("read_file", map[string]string{"path": "main.go"})),
			t(c("edit_file", map[string]any{"path": "main.go", "old": "func main() {", "new": "func main() { // verbose"})),
			t(fin("Flag added.")),
			t(c("read_file", map[string]string{"path": "README.md"})),
			t(c("edit_file", map[string]any{"path": "README.md", "old": "# demo", "new": "# demo\n\n--verbose prints more."})),
			t(fin("Documented.")),
		},
	}}
}

func TestLlamaPromptCacheAcrossRoles(t *testing.T) {
	if os.Getenv("GUILDHALL_MEASURE_CACHE") == "" {
		t.Skip("a measurement of a few minutes: set GUILDHALL_MEASURE_CACHE=1")
	}
	g := loadCompact(t)
	const slot = 8192
	configs := []struct {
		name  string
		slots int
		args  []string
	}{
		{"-np 1 --cache-ram 0", 1, []string{"-np", "1", "--cache-ram", "0"}},
		{"-np 1 (host prompt cache, the default --cache-ram 8192)", 1, []string{"-np", "1"}},
		{"-np 3 --cache-ram 0", 3, []string{"-np", "3", "--cache-ram", "0"}},
		{"-np 3 --cache-ram 0 --cache-reuse 256", 3, []string{"-np", "3", "--cache-ram", "0", "--cache-reuse", "256"}},
	}
	evaluated := map[string]int{}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			srv := llamatest.Start(t, llamatest.Steered, slot*cfg.slots, cfg.args...)
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "README.md"), []byte("# demo\n\nA small program.\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n"), 0o644)
			real := provider.NewOpenAIChat(provider.Config{BaseURL: srv.BaseURL(), RequestTimeout: 5 * time.Minute})
			meter := &cacheMeter{real: real, script: provider.NewScripted(delegationScript(), 0)}
			d := DefaultDeployment()
			d.FitToGuild(g)
			d.Model.ContextWindow = slot
			d.Executor.InterruptTriggers = nil
			s, err := OpenSession(SessionConfig{Workspace: dir, Sealer: testSealer(dir), Guild: g, Deployment: d, Provider: meter, NoInput: true, EndpointAnswered: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Submit(context.Background(), Submission{Task: "Add a --verbose flag to main.go and document it."}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			out, err := s.Wait(ctx)
			if err != nil || out.Status != store.StatusSuccess {
				t.Fatalf("outcome %+v %v", out, err)
			}
			var prompt, cached, eval int
			for _, c := range meter.calls {
				prompt, cached, eval = prompt+c.prompt, cached+c.cached, eval+c.evaluted
				t.Logf("%-13s prompt %5d  cached %5d  evaluated %5d", c.role, c.prompt, c.cached, c.evaluted)
			}
			evaluated[cfg.name] = eval
			t.Logf("%s: %d calls, %d prompt tokens: %d cached (%.0f%%), %d evaluated",
				cfg.name, len(meter.calls), prompt, cached, 100*float64(cached)/float64(max(prompt, 1)), eval)
		})
	}
	one, three := evaluated[configs[0].name], evaluated[configs[2].name]
	if one == 0 || three == 0 {
		return
	}
	fmt.Printf("evaluated prompt tokens: -np 1 without the host cache %d, -np 3 %d\n", one, three)
	if three >= one {
		t.Errorf("a slot per live role evaluated %d prompt tokens, no fewer than one slot's %d", three, one)
	}
}
