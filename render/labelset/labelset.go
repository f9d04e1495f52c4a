// Package labelset turns a loaded guild's display fields into the label
// registry the views resolve names from. Labels come from the guild, never
// from the model.
package labelset

import (
	"encoding/json"
	"fmt"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/tools"
)

// FromGuild builds the label set of g. A visualization section that does
// not parse is reported; the built-in defaults then apply.
func FromGuild(g *runner.Guild) (render.LabelSet, error) {
	set := render.LabelSet{Roles: map[string]render.RoleLabels{}, Tools: map[string]render.ToolLabels{}, Visualization: render.DefaultVisualization()}
	for name, r := range g.Roles {
		set.Roles[name] = render.RoleLabels{Label: tiered(r.Label), Description: tiered(r.Description), WorkingLabel: tiered(r.WorkingLabel)}
	}
	for name, m := range g.Manifests {
		set.Tools[name] = render.ToolLabels{
			HumanLabel: tiered(m.HumanLabel), HumanDescription: tiered(m.HumanDescription),
			HumanCallLabel: tiered(m.HumanCallLabel), HumanWorkingLabel: tiered(m.HumanWorkingLabel),
		}
	}
	if len(g.Visualization) > 0 {
		var v render.Visualization
		if err := json.Unmarshal(g.Visualization, &v); err != nil {
			return set, fmt.Errorf("guild %s: visualization section: %w", g.Source, err)
		}
		merge(&set.Visualization, v)
	}
	return set, nil
}

func tiered(t *tools.Tiered) render.Tiered {
	if t == nil {
		return render.Tiered{}
	}
	return render.Tiered{Detailed: t.Detailed, Friendly: t.Friendly, Whimsical: t.Whimsical}
}

// merge lays the guild's visualization over the defaults, entry by entry.
func merge(dst *render.Visualization, src render.Visualization) {
	if dst.PseudoRoleLabels == nil {
		dst.PseudoRoleLabels = map[string]render.Tiered{}
	}
	for k, v := range src.PseudoRoleLabels {
		dst.PseudoRoleLabels[k] = v
	}
	if dst.OperationTemplates == nil {
		dst.OperationTemplates = map[string]map[string]render.Tiered{}
	}
	for kind, byPair := range src.OperationTemplates {
		if dst.OperationTemplates[kind] == nil {
			dst.OperationTemplates[kind] = map[string]render.Tiered{}
		}
		for pair, v := range byPair {
			dst.OperationTemplates[kind][pair] = v
		}
	}
	if dst.GenericOperationTemplates == nil {
		dst.GenericOperationTemplates = map[string]render.Tiered{}
	}
	for k, v := range src.GenericOperationTemplates {
		dst.GenericOperationTemplates[k] = v
	}
	if dst.WorkingTemplates == nil {
		dst.WorkingTemplates = map[string]render.Tiered{}
	}
	for k, v := range src.WorkingTemplates {
		dst.WorkingTemplates[k] = v
	}
}
