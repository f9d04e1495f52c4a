package runner

import (
	"strings"
	"testing"

	"github.com/guildhall/guildhall/runner/seed"
)

func TestOutputReserveFollowsTheWindow(t *testing.T) {
	cases := []struct {
		name           string
		window, maxTok int
		setBy          string
		want           int
	}{
		{"Ollama's 4096 default", 4096, 4096, "", 1024},
		{"an 8k llama-server", 8192, 4096, "", 2048},
		{"16k", 16384, 4096, "", 4096},
		{"a large window keeps the old default", 131072, 4096, "", 4096},
		{"a tiny window still leaves room to answer", 1024, 4096, "", 512},
		{"unknown window", 0, 4096, "", 4096},
		{"the deployment's own value wins", 8192, 1000, "deployment.json", 1000},
		{"the operator file's value wins", 32768, 8000, "/home/op/.config/guildhall/deployment.json", 8000},
		{"an explicit value that leaves no room is cut", 8192, 7000, "deployment.json", 2048},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := DefaultDeployment()
			d.Model.ContextWindow, d.Model.Generation.MaxTokens = c.window, c.maxTok
			if c.setBy != "" {
				d.SetOrigin("model.generation.maxTokens", c.setBy)
			}
			if got := d.OutputReserve(); got != c.want {
				t.Errorf("reserve = %d, want %d", got, c.want)
			}
		})
	}
}

func loadSeed(t *testing.T) *Guild {
	t.Helper()
	g, err := LoadGuild(seed.Guild(), "seed guild")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// loadCompact is the compact variant of the seed guild, for small windows.
func loadCompact(t *testing.T) *Guild {
	t.Helper()
	fsys, err := seed.CompactGuild()
	if err != nil {
		t.Fatal(err)
	}
	g, err := LoadGuild(fsys, "compact seed guild")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestWindowWarningNamesTheRoleAndTheFix: the seed guild's orchestrator
// does not fit an 8k window, fits 16k; the warning says which role, how
// big, and the window that would do.
func TestWindowWarningNamesTheRoleAndTheFix(t *testing.T) {
	g := loadSeed(t)
	d := DefaultDeployment()
	d.Model.ContextWindow = 8192
	w := WindowWarning(g, d)
	for _, want := range []string{"8192-token context window is too small", "orchestrator role's opening prompt is about", "-c 16384", "OLLAMA_CONTEXT_LENGTH=16384"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning lacks %q:\n%s", want, w)
		}
	}
	d.Model.ContextWindow = 16384
	if w := WindowWarning(g, d); w != "" {
		t.Errorf("16k fits the seed guild, but: %s", w)
	}
	d.Model.ContextWindow = 0
	if w := WindowWarning(g, d); w != "" {
		t.Errorf("an unknown window warns nothing, but: %s", w)
	}
}

// TestOpeningTokensTrackTheRealTokenizer keeps the estimate honest: the
// orchestrator's opening prompt measured by llama-server's tokenizer
// (tiny-qwen2, a GPT-2 vocabulary) was 4,876 tokens with 18 tools; the
// estimate must stay within 10% of that.
func TestOpeningTokensTrackTheRealTokenizer(t *testing.T) {
	est := loadSeed(t).OpeningTokens()["orchestrator"]
	if est < 4876*9/10 || est > 4876*11/10 {
		t.Errorf("estimated %d tokens for the orchestrator's opening prompt, measured 4876", est)
	}
}

// TestCompactSeedGuildFitsEightK: the compact variant loads as a guild and
// its opening prompts leave an 8k window room, where the seed guild's do
// not.
func TestCompactSeedGuildFitsEightK(t *testing.T) {
	g := loadCompact(t)
	d := DefaultDeployment()
	d.Model.ContextWindow = 8192
	if w := WindowWarning(g, d); w != "" {
		t.Errorf("the compact guild must fit 8k: %s", w)
	}
	for role, n := range g.OpeningTokens() {
		if n > (8192-d.OutputReserve())/2 {
			t.Errorf("%s: opening prompt about %d tokens", role, n)
		}
	}
	if full := loadSeed(t); WindowWarning(full, d) == "" {
		t.Error("the seed guild does not fit 8k, yet no warning")
	}
}
