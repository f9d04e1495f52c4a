package main

// The deployment's named models at start (a model per role): each is an
// endpoint of its own, checked, keyed and probed as the model block's is,
// and its key rule is the same — a key goes only to an endpoint the
// operator configured, never to one a workspace's file added or moved.

import (
	"context"
	"fmt"
	"io"
	"maps"
	"sort"
	"strings"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
)

// modelView is d as the named model's endpoint sees it: its model block is
// the named model (ModelFor), and each of the block's settings has the
// origin of the setting it came from, so that checkEndpoint, keyFor's rule
// and the probe's adoption read it as they read the model block.
func modelView(d *runner.Deployment, name string) *runner.Deployment {
	v := *d
	v.Model = d.ModelFor(name)
	v.SetBy = maps.Clone(d.SetBy)
	for _, f := range []string{"name", "apiBase", "provider", "contextWindow", "reasoningField", "generation.maxTokens", "generation.temperature"} {
		if o := d.ModelOrigin(name, f); o != "" {
			v.SetBy["model."+f] = o
		} else {
			delete(v.SetBy, "model."+f)
		}
	}
	return &v
}

// operatorModelBases notes the endpoints of an operator's own deployment
// (a file of theirs, or the built-in defaults): keys go to those.
func (cfg *config) noteOperatorBases(d *runner.Deployment) {
	if cfg.operatorBases == nil {
		cfg.operatorBases = map[string]bool{}
	}
	cfg.operatorBases[d.Model.APIBase] = true
	for _, n := range d.ModelNames() {
		cfg.operatorBases[d.ModelFor(n).APIBase] = true
	}
}

// keyForModel is keyFor for a named model: the key of its provider, unless
// a workspace's file chose its endpoint and the operator did not configure
// that same one.
func (cfg *config) keyForModel(keys keyring, name string) (string, string) {
	v := modelView(cfg.deployment, name)
	key := keys.forProvider(v.Model.Provider)
	origin := v.Origin("model.apiBase")
	if key == "" || !cfg.workspaceOrigins[origin] || v.Model.APIBase == cfg.operatorBase || cfg.operatorBases[v.Model.APIBase] {
		return key, ""
	}
	return "", fmt.Sprintf("the API key is not sent to %s (model %s): the workspace's %s chose that endpoint, and keys go only to endpoints you configured; to send it, set models.%s.apiBase in your own deployment.json",
		provider.RedactURL(v.Model.APIBase), name, origin, name)
}

// openModels checks, keys and probes each named model a role of g runs
// on, updating the deployment with the name and window each server
// reports. A model no role names is not opened. The scripted demo model
// serves every named model too.
func (c *commonFlags) openModels(ctx context.Context, cfg *config, g *runner.Guild, main *endpointState) (map[string]runner.ModelEndpoint, map[string]*endpointState, []string, error) {
	names := roleModelNames(g)
	d := cfg.deployment
	out := map[string]runner.ModelEndpoint{}
	states := map[string]*endpointState{}
	var notes []string
	for _, name := range names {
		if _, ok := d.Models[name]; !ok {
			continue // CheckAgainstGuild reported it
		}
		v := modelView(d, name)
		if v.Model.Provider == "script" {
			out[name] = runner.ModelEndpoint{Provider: main.provider, Answered: true}
			continue
		}
		key, keyNote := cfg.keyForModel(c.keys, name)
		if keyNote != "" {
			notes = append(notes, keyNote)
		}
		if err := checkEndpoint(v, key, keyNote); err != nil {
			return nil, nil, nil, fmt.Errorf("model %s: %w", name, err)
		}
		st, err := openEndpoint(ctx, v, key, "")
		if err != nil {
			return nil, nil, nil, fmt.Errorf("model %s: %w", name, err)
		}
		st.keyNote = keyNote
		for _, n := range st.notes {
			notes = append(notes, "model "+name+": "+n)
		}
		// What the probe adopted belongs to the named model.
		m := d.Models[name]
		m.Name = v.Model.Name
		if v.Origin("model.contextWindow") == "the server's model list" {
			m.ContextWindow = v.Model.ContextWindow
			d.SetOrigin("models."+name+".contextWindow", "the server's model list")
		}
		d.Models[name] = m
		out[name] = runner.ModelEndpoint{Provider: st.provider, Answered: st.answered, Probe: st.probeErr}
		states[name] = st
	}
	return out, states, notes, nil
}

// requireModels fails a headless command at start when a named model's
// endpoint did not answer (see endpointState.unanswered).
func (s *setup) requireModels() error {
	names := make([]string, 0, len(s.modelStates))
	for n := range s.modelStates {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if u := s.modelStates[n].unanswered(); u != nil {
			return endpointError(u, "")
		}
	}
	return nil
}

// roleModelNames are the named models g's roles run on, sorted.
func roleModelNames(g *runner.Guild) []string {
	used := map[string]bool{}
	for _, r := range g.Roles {
		if r.Model != "" {
			used[r.Model] = true
		}
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// benchModels opens, for a benchmark run on the operator's deployment, the
// named models the guild's roles run on; each must answer at start.
func benchModels(ctx context.Context, d *runner.Deployment, g *runner.Guild, keys keyring) (map[string]runner.ModelEndpoint, []string, error) {
	out := map[string]runner.ModelEndpoint{}
	var notes []string
	for _, name := range roleModelNames(g) {
		if _, ok := d.Models[name]; !ok {
			continue // CheckAgainstGuild reported it
		}
		v := modelView(d, name)
		p, n, err := newProvider(ctx, v, keys.forProvider(v.Model.Provider), "")
		if err != nil {
			return nil, nil, fmt.Errorf("model %s: %w", name, err)
		}
		for _, s := range n {
			notes = append(notes, "model "+name+": "+s)
		}
		m := d.Models[name]
		m.Name = v.Model.Name
		if v.Origin("model.contextWindow") == "the server's model list" {
			m.ContextWindow = v.Model.ContextWindow
		}
		d.Models[name] = m
		out[name] = runner.ModelEndpoint{Provider: p, Answered: true}
	}
	return out, notes, nil
}

// checkModels prints, for `guildhall check`, each named model a role runs
// on: its endpoint, its roles, and whether its key would be withheld.
func checkModels(out io.Writer, cfg *config, g *runner.Guild, keys keyring) {
	d := cfg.deployment
	for _, name := range roleModelNames(g) {
		if _, ok := d.Models[name]; !ok {
			continue
		}
		m := d.ModelFor(name)
		var roles []string
		for _, r := range g.RoleNames() {
			if g.Roles[r].Model == name {
				roles = append(roles, r)
			}
		}
		what := m.Name
		if what == "" {
			what = "the server's first model"
		}
		fmt.Fprintf(out, "model %s: %s at %s (provider %s), for %s\n", name, render.SanitizeLine(what), render.SanitizeLine(provider.RedactURL(m.APIBase)),
			render.SanitizeLine(m.Provider), render.SanitizeLine(strings.Join(roles, ", ")))
		if _, note := cfg.keyForModel(keys, name); note != "" {
			fmt.Fprintln(out, "note:", render.SanitizeLine(note))
		}
	}
}

// keyNoteFor is the note on the withheld key of the endpoint u is about:
// a named model's, or the model block's.
func (s *setup) keyNoteFor(u *provider.Unanswered) string {
	for _, st := range s.modelStates {
		if d, ok := st.provider.(provider.Described); ok && d.Endpoint().BaseURL == u.Endpoint.BaseURL {
			return st.keyNote
		}
	}
	return s.endpoint.keyNoteOrEmpty()
}
