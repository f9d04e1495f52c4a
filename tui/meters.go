package tui

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
)

// The meters of what the model is doing: the context window the active
// role has used, the model and its endpoint's host, the tokens and their
// cost, and how long the last reply took. They read only what the
// endpoint reported (llm_call usage) and what the deployment says (the
// window, the prices): nothing is estimated.

// usage is what a run's model calls used, kept as events apply.
type usage struct {
	model   string         // the model the run names (run_started, llm_call)
	active  string         // the role instance that called the model last
	context map[string]int // per role instance: its conversation after its latest call
	window  int            // the context window a compaction reported

	prompt, completion, cached int
	lastReply                  float64 // seconds the latest model call took
	// byModel is the same counts per named model the calls went to (a
	// model per role), for their prices; the model block's are under "".
	byModel map[string]*tokenCounts
}

// tokenCounts are one model's prompt, cached and completion tokens.
type tokenCounts struct{ prompt, completion, cached int }

// callUsage is the part of an llm_call payload the meters read.
type callUsage struct {
	RoleID    string      `json:"roleId"`
	Usage     event.Usage `json:"usage"`
	Model     string      `json:"model"`
	ModelRef  string      `json:"modelRef"`
	ElapsedMs int64       `json:"elapsedMs"`
}

func (u *usage) addCall(p callUsage) {
	if u.context == nil {
		u.context = map[string]int{}
	}
	if p.RoleID != "" {
		u.active = p.RoleID
		// The next request carries the whole conversation: this prompt and
		// the reply to it.
		u.context[p.RoleID] = p.Usage.PromptTokens + p.Usage.CompletionTokens
	}
	if p.Model != "" {
		u.model = p.Model
	}
	u.prompt += p.Usage.PromptTokens
	u.completion += p.Usage.CompletionTokens
	u.cached += p.Usage.CachedPromptTokens
	u.lastReply = float64(p.ElapsedMs) / 1000
	if u.byModel == nil {
		u.byModel = map[string]*tokenCounts{}
	}
	c := u.byModel[p.ModelRef]
	if c == nil {
		c = &tokenCounts{}
		u.byModel[p.ModelRef] = c
	}
	c.prompt += p.Usage.PromptTokens
	c.completion += p.Usage.CompletionTokens
	c.cached += p.Usage.CachedPromptTokens
}

// costOf prices the run's tokens, each model's at its own price (the
// model block's p, a named model's from named), and says the currency.
// false when a model that did work has no price, or the prices are in
// different currencies: the figure would leave tokens out or add unlike
// amounts.
func (u usage) costOf(p *runner.ModelPrice, named map[string]*runner.ModelPrice) (float64, string, bool) {
	if len(u.byModel) == 0 || len(u.byModel) == 1 && u.byModel[""] != nil {
		c, ok := u.cost(p)
		if !ok {
			return 0, "", false
		}
		return c, p.Currency, true
	}
	total, currency := 0.0, ""
	first := true
	for ref, c := range u.byModel {
		price := p
		if ref != "" {
			price = named[ref]
		}
		v, ok := usage{prompt: c.prompt, completion: c.completion, cached: c.cached}.cost(price)
		if !ok {
			return 0, "", false
		}
		cur := cmp.Or(price.Currency, "USD")
		if !first && cur != currency {
			return 0, "", false
		}
		total, currency, first = total+v, cur, false
	}
	return total, currency, true
}

// tokensPerSecond writes a reply's speed: "38 tok/s", "4.2 tok/s".
func tokensPerSecond(v float64) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + " tok/s"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " tok/s"
}

// cost prices the run's tokens, or reports false without prices.
func (u usage) cost(p *runner.ModelPrice) (float64, bool) {
	if p == nil {
		return 0, false
	}
	cachedRate := p.CachedInput
	if cachedRate == 0 {
		cachedRate = p.Input
	}
	fresh := max(0, u.prompt-u.cached)
	c := (float64(fresh)*p.Input + float64(u.cached)*cachedRate + float64(u.completion)*p.Output) / 1e6
	return c, true
}

// formatCost writes an amount with its currency: "$0.042", "€1.20".
func formatCost(c float64, currency string) string {
	sym := map[string]string{"": "$", "USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}[currency]
	if sym == "" {
		sym = render.SanitizeLine(currency) + " "
	}
	prec := 2
	if c < 1 {
		prec = 3
	}
	return sym + strconv.FormatFloat(c, 'f', prec, 64)
}

// contextMeter is the active role's context use as a bar: "context
// ▰▰▰▱▱▱▱▱ 12.3k of 32.8k". It is empty before the role's first reply or
// without a window.
func contextMeter(th theme, used, window, cells int) string {
	if used <= 0 || window <= 0 {
		return ""
	}
	frac := float64(used) / float64(window)
	n := min(cells, int(frac*float64(cells)+0.5))
	if used > 0 && n == 0 {
		n = 1
	}
	bar := strings.Repeat("▰", n) + strings.Repeat("▱", cells-n)
	st := toneOK
	switch {
	case frac >= 0.9:
		st = toneErr
	case frac >= 0.7:
		st = toneActive
	}
	return "context " + th.Render(st, bar) + fmt.Sprintf(" %s of %s", compactTokens(used), compactTokens(window))
}

// window is the context window the view's run works in: the session's
// deployment, else what a compaction reported.
func (m *Model) window(v *runView) int {
	if m.model.ContextWindow > 0 {
		return m.model.ContextWindow
	}
	return v.use.window
}

// paneHeader is the rule above the live pane: the role whose reply
// streams (else the role that called the model last) and its context
// meter.
func (m *Model) paneHeader(v *runView, w int) string {
	role := ""
	if v != nil {
		role = v.stream.roleID
		if role == "" {
			role = v.use.active
		}
	}
	label := "reply"
	if v != nil && role != "" {
		if p, ok := v.model.Participant(role); ok {
			label = m.res.ParticipantLabel(p)
		}
	}
	left := "── " + label + " "
	meter := ""
	if v != nil && role != "" {
		meter = contextMeter(m.th, v.use.context[role], m.window(v), 10)
		if meter != "" {
			meter = "· " + meter + " "
		}
	}
	line := left
	if ansi.StringWidth(left)+ansi.StringWidth(meter)+2 <= w {
		line += meter
	}
	return styleFaint.Render(fit(line+strings.Repeat("─", max(0, w-ansi.StringWidth(line))), w))
}

// footerMeters are the footer's figures: the model and its host, the
// tokens, the cost, and the last reply's time, as segments that drop by
// priority when the line is short.
func (m *Model) footerMeters(v *runView) []segment {
	if v == nil {
		return nil
	}
	var segs []segment
	name := v.use.model
	if name == "" {
		name = m.model.Name
	}
	if name != "" {
		segs = append(segs, segment{render.SanitizeLine(name), 6})
	}
	if m.model.Host != "" && v == m.live {
		segs = append(segs, segment{" @ " + render.SanitizeLine(m.model.Host), 5})
	}
	sep := func() string {
		if len(segs) == 0 {
			return ""
		}
		return " · "
	}
	t := v.model.Totals
	tok := compactTokens(t.Tokens) + " tokens"
	segs = append(segs, segment{sep() + tok, 8})
	switch {
	case t.CacheReported:
		// What the server took from its prompt cache, against what it
		// computed afresh: where the endpoint reports the split.
		segs = append(segs, segment{" (prompt " + compactTokens(t.CachedPromptTokens) + " cached, " + compactTokens(t.EvaluatedPromptTokens) + " evaluated)", 2})
	case t.CachedPromptTokens > 0:
		segs = append(segs, segment{" (" + compactTokens(t.CachedPromptTokens) + " cached)", 2})
	}
	if c, cur, ok := v.use.costOf(m.model.Price, m.model.Prices); ok {
		segs = append(segs, segment{" · " + formatCost(c, cur), 7})
	}
	// A reply faster than a millisecond still has a speed to show.
	if v.use.lastReply > 0 || t.LatestTokensPerSecond > 0 {
		s := fmt.Sprintf(" · last reply %.1fs", v.use.lastReply)
		if tps := t.LatestTokensPerSecond; tps > 0 {
			s += ", " + tokensPerSecond(tps)
		}
		segs = append(segs, segment{s, 3})
	}
	if f := t.ProviderFailures; f > 0 {
		segs = append(segs, segment{fmt.Sprintf(" · %d provider failures", f), 6})
	}
	return segs
}
