package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/llamatest"
	"github.com/guildhall/guildhall/runner/event"
)

// TestLlamaEightKWindowRunsTheCompactSeedGuild: `guildhall run` against a
// real llama-server started with -c 8192 reads the window from the server,
// picks the compact seed guild, and its first request sits well inside the
// budget: no context pressure at the first call, no warning.
func TestLlamaEightKWindowRunsTheCompactSeedGuild(t *testing.T) {
	noKeys(t)
	srv := llamatest.Start(t, llamatest.Steered, 8192)
	ws := t.TempDir()
	res := runCLI(t, "", "run", "--workspace", ws, "--no-input", "--base-url", srv.BaseURL(), "Say hello")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"context window 8192 tokens (reported by the server); 2048 kept for each reply", "using the compact seed guild"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if strings.Contains(res.stdout, "too small") {
		t.Errorf("the compact guild fits 8k, yet:\n%s", res.stdout)
	}
	m, evs := readRun(t, ws)
	if m.GuildPath != "seed-compact" {
		t.Errorf("guild %q", m.GuildPath)
	}
	var first event.LLMCallPayload
	for _, e := range evs {
		if e.Type == event.LLMCall {
			_ = json.Unmarshal(e.Payload, &first)
			break
		}
		if e.Type == event.ContextPressure {
			t.Errorf("context pressure before the first reply: %s", e.Payload)
		}
	}
	t.Logf("first request: %d prompt tokens of a 6144-token budget", first.Usage.PromptTokens)
	if first.Usage.PromptTokens == 0 || first.Usage.PromptTokens > 3072 {
		t.Errorf("first request %d prompt tokens", first.Usage.PromptTokens)
	}
}
