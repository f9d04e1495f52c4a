package seed

import (
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/tools"
)

func loadCompact(t *testing.T) (fs.FS, guildDef) {
	t.Helper()
	c, err := CompactGuild()
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(c, "guild.json")
	if err != nil {
		t.Fatal(err)
	}
	var g guildDef
	strictDecode(t, b, &g)
	return c, g
}

// callPattern finds the tool calls a prompt shows: `name {…}`.
var callPattern = regexp.MustCompile("`([a-z_]+) \\{")

// TestCompactGuildIsTheSeedGuildLeaner: the compact variant has every role
// of the seed guild with the same labels, gives no role a tool the seed
// role lacks, keeps the role/tool split, and its prompts keep the seed's
// rules while showing only calls to tools the role holds.
func TestCompactGuildIsTheSeedGuildLeaner(t *testing.T) {
	seed := loadGuild(t)
	cfs, compact := loadCompact(t)
	if got, want := slices.Sorted(maps.Keys(compact.Roles)), slices.Sorted(maps.Keys(seed.Roles)); !slices.Equal(got, want) {
		t.Fatalf("compact roles %v, seed roles %v", got, want)
	}
	if compact.EntryRole != seed.EntryRole {
		t.Errorf("entry role %q, seed %q", compact.EntryRole, seed.EntryRole)
	}
	handlers := []string{"loop_detector", "context_manager", "inquiry_responder"}
	changed := 0
	for name, r := range compact.Roles {
		s := seed.Roles[name]
		if first(r.Label.Detailed) != first(s.Label.Detailed) {
			t.Errorf("%s: label changed", name)
		}
		for _, tool := range r.Tools {
			if !slices.Contains(s.Tools, tool) {
				t.Errorf("%s: compact role holds %s, which the seed role does not", name, tool)
			}
		}
		b, err := fs.ReadFile(cfs, r.SystemPrompt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := string(b)
		if seedPrompt, _ := fs.ReadFile(guildFS, s.SystemPrompt); p != string(seedPrompt) || len(r.Tools) != len(s.Tools) {
			changed++
		}
		if !strings.Contains(strings.ToLower(p), "data is not instructions") || !strings.Contains(p, "finish {") {
			t.Errorf("%s: prompt lacks the data-not-instructions rule or the finish call", name)
		}
		if !slices.Contains(handlers, name) && !strings.Contains(p, "[Platform notice — context pressure]") {
			t.Errorf("%s: prompt lacks the context-pressure handoff", name)
		}
		if slices.Contains(r.Tools, "agent") && !strings.Contains(p, "context_handoff") {
			t.Errorf("%s: delegates but does not route context_handoff", name)
		}
		for _, m := range callPattern.FindAllStringSubmatch(p, -1) {
			if !slices.Contains(r.Tools, m[1]) {
				t.Errorf("%s: prompt shows a call to %s, which the role does not hold", name, m[1])
			}
		}
	}
	if changed != 3 {
		t.Errorf("%d roles differ from the seed guild, want the 3 compact.json names", changed)
	}
	orch, _ := fs.ReadFile(cfs, compact.Roles["orchestrator"].SystemPrompt)
	if n := len(callPattern.FindAllString(string(orch), -1)); n < 8 {
		t.Errorf("found %d calls in the compact orchestrator prompt: the pattern no longer matches how prompts show calls", n)
	}
	for _, want := range []string{"[Prior run result", "quick", "standard", "thorough", "context_budget_exceeded", "loop_detected", "interrupted", "needs_clarification"} {
		if !strings.Contains(string(orch), want) {
			t.Errorf("compact orchestrator prompt lacks %q", want)
		}
	}
}

// first is a tier's first phrasing, "" when it has none.
func first(t tools.Variants) string {
	if len(t) == 0 {
		return ""
	}
	return t[0]
}
