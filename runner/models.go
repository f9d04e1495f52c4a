package runner

// A model per role: deployment.json's models section names further model
// endpoints beside the model block, and a guild's role picks one with
// "model": NAME. This file holds the section's validation, how a named
// model inherits what it leaves unset from the model block, and the check
// that every role names a model the deployment has.

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// modelNamePattern is what a named model may be called: it appears in the
// console, the records and messages, so it is a short plain word.
var modelNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$`)

// ValidModelName reports whether name may name one of the deployment's
// models.
func ValidModelName(name string) bool { return modelNamePattern.MatchString(name) }

// modelShape is the keys of the model block and of each named model.
var modelShape = shape{
	"name": nil, "apiBase": nil, "contextWindow": nil, "reasoningField": nil, "provider": nil,
	"generation": shape{"temperature": nil, "maxTokens": nil},
	"price":      shape{"input": nil, "output": nil, "cachedInput": nil, "currency": nil},
}

// ModelNames lists the deployment's named models, sorted.
func (d *Deployment) ModelNames() []string {
	return slices.Sorted(maps.Keys(d.Models))
}

// ModelFor is the model a role naming name runs on: "" is the model
// block; a named model takes each setting it leaves unset (provider,
// apiBase, reasoningField, the generation defaults) from the model block,
// except its name at the server, its window and its price, which belong to
// that model alone (a window the server reports, a model it lists first).
func (d *Deployment) ModelFor(name string) ModelConfig {
	m, ok := d.Models[name]
	if name == "" || !ok {
		return d.Model
	}
	base := d.Model
	m.Provider = cmp.Or(m.Provider, base.Provider)
	m.APIBase = cmp.Or(m.APIBase, base.APIBase)
	m.ReasoningField = cmp.Or(m.ReasoningField, base.ReasoningField)
	if m.Generation.Temperature == nil {
		m.Generation.Temperature = base.Generation.Temperature
	}
	if m.Generation.MaxTokens == 0 {
		m.Generation.MaxTokens = base.Generation.MaxTokens
	}
	return m
}

// ModelOrigin is where the setting field (a path under a model, such as
// "apiBase") of the named model came from: the models entry's own, or,
// for an inherited setting, the model block's. "" for a built-in default.
func (d *Deployment) ModelOrigin(name, field string) string {
	if name == "" {
		return d.Origin("model." + field)
	}
	if o := d.Origin("models." + name + "." + field); o != "" {
		return o
	}
	switch field {
	case "provider", "apiBase", "reasoningField", "generation.temperature", "generation.maxTokens":
		return d.Origin("model." + field)
	}
	return ""
}

// OutputReserveFor is OutputReserve for the named model ("" the model
// block's).
func (d *Deployment) OutputReserveFor(name string) int {
	if name == "" {
		return d.OutputReserve()
	}
	m := d.ModelFor(name)
	return outputReserve(m.ContextWindow, m.Generation.MaxTokens, d.ModelOrigin(name, "generation.maxTokens") != "")
}

// cloneModels copies the models section deeply.
func cloneModels(in map[string]ModelConfig) map[string]ModelConfig {
	if in == nil {
		return nil
	}
	out := make(map[string]ModelConfig, len(in))
	for k, m := range in {
		if t := m.Generation.Temperature; t != nil {
			v := *t
			m.Generation.Temperature = &v
		}
		if p := m.Price; p != nil {
			v := *p
			m.Price = &v
		}
		out[k] = m
	}
	return out
}

// forgetModelOrigins drops the recorded origins of every named model the
// file declares: a later file replaces a model of the same name whole, so
// the settings an earlier file gave it are gone with it.
func forgetModelOrigins(d *Deployment, root *jnode) {
	sec := root.field("models")
	if sec == nil || sec.kind != '{' {
		return
	}
	for _, f := range sec.keys {
		prefix := "models." + f.key + "."
		for p := range d.SetBy {
			if strings.HasPrefix(p, prefix) {
				delete(d.SetBy, p)
			}
		}
	}
}

// checkModelValues validates the model block and each named model, every
// problem at its field, named by its path ("models.coder.provider").
func checkModelValues(c *checker, at func(path ...string) int64, d *Deployment) {
	checkModel(c, at, d, "model", d.Model, func(string) bool { return true })
	for _, name := range d.ModelNames() {
		m := d.Models[name]
		where := "models." + name
		pos := func(path ...string) int64 { return at(append([]string{"models", name}, path...)...) }
		if !ValidModelName(name) {
			c.errorf(pos(), "models: %q is not a model name: use up to 40 letters, digits, '-' and '_', starting with a letter or digit", name)
			continue
		}
		if m.Provider == "script" {
			c.errorf(pos("provider"), "%s.provider \"script\": the scripted demo model is only the model block's; a named model is an endpoint (openai, openai-responses or anthropic)", where)
			continue
		}
		setHere := func(field string) bool { return d.Origin(where+"."+field) != "" }
		checkModel(c, pos, d, where, m, setHere)
	}
}

// checkModel validates one model's values; set reports whether the same
// files set a field (maxTokens is held against the window only then).
func checkModel(c *checker, at func(path ...string) int64, d *Deployment, where string, m ModelConfig, set func(string) bool) {
	prefix := func(path ...string) []string {
		if where == "model" {
			return append([]string{"model"}, path...)
		}
		return path
	}
	switch m.Provider {
	case "", "openai", "openai-responses", "anthropic", "script":
	default:
		c.errorf(at(prefix("provider")...), "%s.provider %q is not one of openai, openai-responses, anthropic, script", where, m.Provider)
	}
	if m.ContextWindow < 0 {
		c.errorf(at(prefix("contextWindow")...), "%s.contextWindow must be a positive number of tokens", where)
	}
	if p := m.Price; p != nil {
		if p.Input < 0 || p.Output < 0 || p.CachedInput < 0 {
			c.errorf(at(prefix("price")...), "%s.price: prices are per million tokens and may not be negative", where)
		}
		if cur := p.Currency; cur != "" && !validCurrency(cur) {
			c.errorf(at(prefix("price", "currency")...), "%s.price.currency %q is not a three-letter currency code such as USD or EUR", where, cur)
		}
	}
	// maxTokens is held against the window only when files set both: a
	// window from the server's model list is checked at start
	// (CheckGenerationFits runs then), as in the original, and an unset
	// maxTokens is fitted to the window (OutputReserve).
	both := where == "model" && d.Origin("model.contextWindow") != "" && d.Origin("model.generation.maxTokens") != "" ||
		where != "model" && set("contextWindow") && set("generation.maxTokens")
	if m.Generation.MaxTokens < 0 || (both && m.ContextWindow > 0 && m.Generation.MaxTokens >= m.ContextWindow) {
		c.errorf(at(prefix("generation", "maxTokens")...), "%s.generation.maxTokens must be positive and smaller than %s.contextWindow", where, where)
	}
}

// checkRoleModels reports each role that names a model the deployment
// does not define, naming the role, the guild and the models there are.
func (d *Deployment) checkRoleModels(g *Guild) ConfigErrors {
	var errs ConfigErrors
	for _, name := range g.RoleNames() {
		want := g.Roles[name].Model
		if want == "" {
			continue
		}
		if _, ok := d.Models[want]; ok {
			continue
		}
		have := "it defines none"
		if names := d.ModelNames(); len(names) > 0 {
			have = "it defines " + strings.Join(names, ", ")
		}
		errs = append(errs, &ConfigError{File: g.Source, Msg: fmt.Sprintf(
			"role %s names model %s, which the deployment (%s) does not define in models (%s); add it to deployment.json's models, or remove the role's model to use the model block",
			strconv.Quote(name), strconv.Quote(want), d.Source, have)})
	}
	return errs
}

// RoleModel is the named model the role runs on, "" for the model block.
func (g *Guild) RoleModel(role string) string {
	if r := g.Roles[role]; r != nil {
		return r.Model
	}
	return ""
}
