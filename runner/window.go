package runner

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Output reserve limits: a quarter of the window, within these bounds,
// when the deployment does not set model.generation.maxTokens.
const (
	minOutputReserve = 512
	maxOutputReserve = 4096
)

// OutputReserve is the number of tokens kept for the model's reply: sent as
// max_tokens and subtracted from the window for the effective budget.
// model.generation.maxTokens wins when a deployment file, a flag or the
// environment set it; otherwise the reserve follows the window — a quarter
// of it, from 512 to 4096 tokens — so that a small local window (Ollama's
// default 4096, an 8k llama-server) is not half spent on a reply the model
// rarely writes. A reserve that would not leave a quarter of the window
// for the prompt is cut to a quarter of the window.
func (d *Deployment) OutputReserve() int {
	set := d.Origin("model.generation.maxTokens") != ""
	return outputReserve(d.Model.ContextWindow, d.Model.Generation.MaxTokens, set)
}

func outputReserve(window, maxTokens int, set bool) int {
	set = set && maxTokens > 0
	switch {
	case window <= 0 && maxTokens > 0:
		return maxTokens
	case window <= 0:
		return maxOutputReserve
	case set && maxTokens <= window*3/4:
		return maxTokens
	case set:
		return window / 4
	}
	return min(maxOutputReserve, max(minOutputReserve, window/4))
}

// openingCharsPerToken turns a prompt's characters into an estimate of its tokens
// before any call reports real counts. 3.5 is what a GPT-2-style
// vocabulary gives for the seed guild's prompts and tool schemas (measured
// with llama-server's tokenizer); newer vocabularies need fewer tokens, so
// the estimate errs on the large side.
const openingCharsPerToken = 3.5

// openingFraction is the share of the effective budget above which a
// role's opening prompt (system prompt and tool schemas) leaves too little
// room: the conversation would be smaller than what every request repeats,
// and context pressure would start after a few turns.
const openingFraction = 0.5

// OpeningTokens estimates each role's opening prompt in tokens: its system
// prompt (the entry role's with the effort directive) and its tool schemas
// as they are sent.
func (g *Guild) OpeningTokens() map[string]int {
	out := make(map[string]int, len(g.Roles))
	for name, role := range g.Roles {
		chars := len(role.Prompt)
		if name == g.EntryRole {
			chars += len(EffortDirective("standard")) + 2
		}
		for _, t := range role.Tools {
			m := g.Manifests[t]
			b, err := json.Marshal(map[string]any{"type": "function", "function": map[string]any{
				"name": m.Name, "description": m.Description, "parameters": m.Parameters}})
			if err == nil {
				chars += len(b)
			}
		}
		out[name] = int(float64(chars)/openingCharsPerToken + 0.5)
	}
	return out
}

// WindowWarning says, when it is so, that the deployment's context window
// is too small for the guild: the role whose opening prompt takes more
// than half of the effective budget, and the fix. "" when it fits or the
// window is unknown.
func WindowWarning(g *Guild, d *Deployment) string {
	window := d.Model.ContextWindow
	if window <= 0 || g == nil {
		return ""
	}
	reserve := d.OutputReserve()
	budget := window - reserve
	opening := g.OpeningTokens()
	names := make([]string, 0, len(opening))
	for n := range opening {
		names = append(names, n)
	}
	// The largest first, the entry role before a tie.
	sort.Slice(names, func(i, j int) bool {
		if opening[names[i]] != opening[names[j]] {
			return opening[names[i]] > opening[names[j]]
		}
		return names[i] == g.EntryRole || names[j] != g.EntryRole && names[i] < names[j]
	})
	worst := names[0]
	if float64(opening[worst]) <= openingFraction*float64(budget) {
		return ""
	}
	need := windowFor(opening[worst], d)
	return fmt.Sprintf("the %d-token context window is too small for this guild: the %s role's opening prompt is about %d tokens, more than half of the %d left after the %d-token reply reserve, so its context fills after a few turns. "+
		"Fix: give the model a window of %d tokens or more (llama-server -c %d; Ollama num_ctx, e.g. OLLAMA_CONTEXT_LENGTH=%d), or use a guild with fewer tools per role.",
		window, worst, opening[worst], budget, reserve, need, need, need)
}

// FittingWindow is the smallest window, in steps of 4096 tokens, in which
// every role of g has room for its opening prompt under d's reserve rule.
func FittingWindow(g *Guild, d *Deployment) int {
	most := 0
	for _, n := range g.OpeningTokens() {
		most = max(most, n)
	}
	return windowFor(most, d)
}

// windowFor is the smallest window, in steps of 4096 tokens, whose budget
// gives an opening prompt of opening tokens its room.
func windowFor(opening int, d *Deployment) int {
	set := d.Origin("model.generation.maxTokens") != ""
	w := 4096
	for float64(opening) > openingFraction*float64(w-outputReserve(w, d.Model.Generation.MaxTokens, set)) {
		w += 4096
	}
	return w
}
