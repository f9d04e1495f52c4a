package tui

import (
	"fmt"
	"os"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// TestFooterShowsSpeedAndPromptCache runs the real program against a fake
// llama-server whose replies carry its timings object: the footer says
// how fast the latest reply came, next to "last reply", and how much of
// the prompts the server took from its cache against what it evaluated,
// summed over the run's calls.
func TestFooterShowsSpeedAndPromptCache(t *testing.T) {
	f := fakellm.New()
	t.Cleanup(f.Close)
	f.Queue("orchestrator",
		fakellm.Reply{Content: "Looking first.", Calls: []fakellm.Call{{Name: "read_file", Args: map[string]string{"path": "notes.txt"}}},
			PromptTokens: 1200, Timings: &fakellm.Timings{CacheN: 0, PromptN: 1200, PredictedN: 30, PredictedPerSecond: 18.25}},
		fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "read it"}}},
			PromptTokens: 1300, Timings: &fakellm.Timings{CacheN: 1100, PromptN: 200, PredictedN: 20, PredictedPerSecond: 42.5}})
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/notes.txt", []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := runner.LoadGuild(os.DirFS("../runner/testdata/original"), "test guild")
	if err != nil {
		t.Fatal(err)
	}
	d := runner.DefaultDeployment()
	d.FitToGuild(g)
	d.Model.APIBase, d.Model.Name = f.BaseURL(), "fake-model"
	p := provider.NewOpenAIChat(provider.Config{BaseURL: f.BaseURL(), Model: "fake-model", RequestTimeout: 5 * time.Second})
	s := openSession(t, runner.SessionConfig{Workspace: dir, Sealer: store.NewSealer(testRecordsKey, dir), Guild: g, Deployment: d,
		Provider: p, NoInput: true, EndpointAnswered: true})
	m := New(s, Options{Labels: guildLabels(t, g), Task: "Read the notes", NoAnimation: true, MarkdownStyle: "notty"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(180, 30))
	// 1.1k tokens of the 2.5k prompted came from the cache (0 + 1100),
	// 1.4k were evaluated (1200 + 200); the latest reply came at 42.5/s.
	waitScreen(t, tm, "(prompt 1.1k cached, 1.4k evaluated)", ", 42 tok/s", "Result · run-")
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc}) // the result card
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// TestCallFiguresSayTheCacheSplitOnlyWhereReported: the inspector's and
// the transcript's per-call figures show cached against evaluated prompt
// tokens and the reply's speed when the endpoint reported them, and make
// up nothing when it did not.
func TestCallFiguresSayTheCacheSplitOnlyWhereReported(t *testing.T) {
	for _, c := range []struct {
		mt   render.Metrics
		want string
	}{
		{render.Metrics{Tokens: 2300, CachedPromptTokens: 1800, EvaluatedPromptTokens: 400, CacheReported: true, TokensPerSecond: 38.4, ElapsedSeconds: 2.5},
			"2.3k tokens · 1.8k cached · 400 evaluated · 2.5s · 38 tok/s (latest reply)"},
		{render.Metrics{Tokens: 900, CacheReported: true, EvaluatedPromptTokens: 850, ElapsedSeconds: 1},
			"900 tokens · 0 cached · 850 evaluated · 1.0s"},
		{render.Metrics{Tokens: 900, ElapsedSeconds: 1}, "900 tokens · 1.0s"},
	} {
		if got := metricsLine(c.mt); got != c.want {
			t.Errorf("metricsLine(%+v) = %q, want %q", c.mt, got, c.want)
		}
	}
	for _, c := range []struct {
		p    event.LLMCallPayload
		want string
	}{
		{event.LLMCallPayload{Model: "qwen-7b", ElapsedMs: 1500, Usage: event.Usage{PromptTokens: 2100, CompletionTokens: 60, CachedPromptTokens: 2000,
			EvaluatedPromptTokens: 100, PromptCacheReported: true, TokensPerSecond: 7.25}},
			"Model call · qwen-7b · prompt 2.1k (2k cached, 100 evaluated) · reply 60 at 7.2 tok/s · 1.5s"},
		{event.LLMCallPayload{ElapsedMs: 200, Usage: event.Usage{PromptTokens: 300, CompletionTokens: 9}},
			"Model call · prompt 300 · reply 9 · 0.2s"},
	} {
		if got := callLine(c.p); got != c.want {
			t.Errorf("callLine = %q, want %q", got, c.want)
		}
	}
}

// TestHealthBannerNamesTheModelDown: with a model per role, the banner
// says whose endpoint is down; the model block's endpoint keeps the
// plain copy.
func TestHealthBannerNamesTheModelDown(t *testing.T) {
	if got := healthCopy(runner.HealthView{State: runner.HealthSuspended, Model: "fast"}); got != "⚠ The endpoint of model fast is unavailable: the run is suspended and resumes when it recovers." {
		t.Errorf("suspended = %q", got)
	}
	if got := healthCopy(runner.HealthView{State: runner.HealthDegraded, Category: "timeout", Model: "fast"}); got != "⚠ Requests to the endpoint of model fast are timing out; retrying." {
		t.Errorf("degraded = %q", got)
	}
	if got := healthCopy(runner.HealthView{State: runner.HealthSuspended}); got != "⚠ The model provider is unavailable: the run is suspended and resumes when it recovers." {
		t.Errorf("the model block = %q", got)
	}
}

// TestCostPricesEachModelAtItsOwnPrice: with a model per role, each
// model's tokens are priced at its price; a model without one, or prices
// in two currencies, give no figure rather than a wrong one.
func TestCostPricesEachModelAtItsOwnPrice(t *testing.T) {
	var u usage
	u.addCall(callUsage{Usage: event.Usage{PromptTokens: 1_000_000, CompletionTokens: 100_000}})
	u.addCall(callUsage{ModelRef: "fast", Usage: event.Usage{PromptTokens: 2_000_000, CompletionTokens: 1_000_000}})
	big := &runner.ModelPrice{Input: 2, Output: 10}
	fast := map[string]*runner.ModelPrice{"fast": {Input: 0.1, Output: 0.5}}
	// 1M×2 + 0.1M×10 = 3.00; 2M×0.1 + 1M×0.5 = 0.70
	if c, cur, ok := u.costOf(big, fast); !ok || fmt.Sprintf("%.2f", c) != "3.70" || cur != "USD" {
		t.Errorf("cost = %v %q %v, want 3.70 USD", c, cur, ok)
	}
	if _, _, ok := u.costOf(big, nil); ok {
		t.Error("a cost although the fast model has no price")
	}
	if _, _, ok := u.costOf(big, map[string]*runner.ModelPrice{"fast": {Input: 0.1, Output: 0.5, Currency: "EUR"}}); ok {
		t.Error("dollars and euros added up")
	}
	var one usage
	one.addCall(callUsage{Usage: event.Usage{PromptTokens: 1_000_000}})
	if c, _, ok := one.costOf(&runner.ModelPrice{Input: 1, Output: 1}, nil); !ok || c != 1 {
		t.Errorf("the model block alone = %v %v", c, ok)
	}
}
