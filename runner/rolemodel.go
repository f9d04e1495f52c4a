package runner

// Which model a role instance's calls go to: the deployment's model block,
// or the named model its guild role picks (models.go). Each named model is
// its own endpoint, with its own provider and its own health: one that is
// down suspends the run naming it, while the others stay ok.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/guildhall/guildhall/runner/provider"
)

// ModelEndpoint is one of the deployment's named models as a session's
// runs reach it.
type ModelEndpoint struct {
	Provider provider.Provider
	// Answered says the endpoint answered before the session opened (its
	// start-up model list).
	Answered bool
	// Probe is how that model list failed, when it did.
	Probe error
}

// roleModel is the endpoint one role's calls use.
type roleModel struct {
	// name is the deployment's name of the model, "" for the model block.
	name   string
	cfg    ModelConfig
	prov   provider.Provider
	health *Health
	probe  error
}

// modelOf is the endpoint role's calls go to.
func (r *Run) modelOf(role string) roleModel {
	if name := r.opts.Guild.RoleModel(role); name != "" {
		if ep, ok := r.opts.Models[name]; ok {
			return roleModel{name: name, cfg: r.opts.Deployment.ModelFor(name), prov: ep.Provider, health: r.opts.ModelHealth[name], probe: ep.Probe}
		}
	}
	return roleModel{cfg: r.opts.Deployment.Model, prov: r.opts.Provider, health: r.opts.Health, probe: r.opts.StartProbe}
}

// checkModels verifies, before a run starts, that every role naming a
// model has an endpoint for it.
func (o *Options) checkModels() error {
	for _, role := range o.Guild.RoleNames() {
		name := o.Guild.Roles[role].Model
		if name == "" {
			continue
		}
		if _, ok := o.Deployment.Models[name]; !ok {
			return fmt.Errorf("role %q runs on model %q, which the deployment %s does not define in models", role, name, o.Deployment.Source)
		}
		if ep, ok := o.Models[name]; !ok || ep.Provider == nil {
			return fmt.Errorf("role %q runs on model %q, and this run was given no endpoint for it", role, name)
		}
	}
	return nil
}

// modelHealth is a health per named model, reusing those given.
func modelHealth(models map[string]ModelEndpoint, have map[string]*Health) map[string]*Health {
	out := make(map[string]*Health, len(models))
	for name, ep := range models {
		h := have[name]
		if h == nil {
			h = NewHealth()
			if ep.Answered {
				h.markAnswered()
			}
		}
		out[name] = h
	}
	return out
}

// label names m's endpoint in a message: the deployment's name for the
// model, and where it is. It is "" when the deployment has no named
// models, where "the model provider" says it all.
func (r *Run) label(m roleModel) string {
	if len(r.opts.Deployment.Models) == 0 {
		return ""
	}
	name := m.name
	if name == "" {
		name = "model" // the model block
	}
	return fmt.Sprintf("%s (%s)", name, provider.RedactURL(m.cfg.APIBase))
}

// suspensionText is the suspension's platform-authored text, naming the
// endpoint that is down when the deployment has more than one.
func suspensionText(category, label string) string {
	copyText := suspensionCopy(category)
	if label == "" {
		return copyText
	}
	return strings.Replace(copyText, "The model provider", "The model endpoint "+label, 1)
}

// worstHealth is the view to show of several endpoints' health: a
// suspended one before a degraded one before the rest, each carrying the
// name of its model.
func worstHealth(def *Health, named map[string]*Health) HealthView {
	names := slices.Sorted(maps.Keys(named)) // the same endpoint first on every call
	best := def.Snapshot()
	rank := func(s string) int {
		switch s {
		case HealthSuspended:
			return 2
		case HealthDegraded:
			return 1
		}
		return 0
	}
	for _, n := range names {
		h := named[n]
		if h == nil {
			continue
		}
		v := h.Snapshot()
		if rank(v.State) > rank(best.State) {
			v.Model = n
			best = v
		}
	}
	return best
}

// replySpeed is a reply's generation speed as the client saw it, for an
// endpoint that does not report its own: the completion tokens over the
// time from the first streamed text to now. 0 when there was no streamed
// text, or too little time to say (a reply that arrived in one piece).
func replySpeed(completion int, first time.Time) float64 {
	if completion <= 0 || first.IsZero() {
		return 0
	}
	d := time.Since(first)
	if d < 50*time.Millisecond {
		return 0
	}
	return float64(completion) / d.Seconds()
}

// ceiling is the prompt size the named model's endpoint rejected as too
// long ("" the model block's), 0 when none was.
func (r *Run) ceiling(name string) int {
	if name == "" {
		return r.learnedCeiling
	}
	return r.learnedCeilings[name]
}

// learn notes a rejected prompt size against the named model's endpoint:
// a 7B model's small window does not shrink a 32B model's budget.
func (r *Run) learn(name string, tokens int) {
	if c := r.ceiling(name); c != 0 && tokens >= c {
		return
	}
	if name == "" {
		r.learnedCeiling = tokens
		return
	}
	if r.learnedCeilings == nil {
		r.learnedCeilings = map[string]int{}
	}
	r.learnedCeilings[name] = tokens
}
