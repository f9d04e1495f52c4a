package render

import (
	"hash/fnv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tier selects the audience of display labels.
type Tier string

// Label tiers, in toggle order.
const (
	// TierWhimsical is fanciful: lively progress over precise state.
	TierWhimsical Tier = "whimsical"
	// TierFriendly is informative and mildly accurate for non-technical users.
	TierFriendly Tier = "friendly"
	// TierDetailed is precise, for technical users.
	TierDetailed Tier = "detailed"
)

// Tiers lists the tiers in toggle order.
func Tiers() []Tier { return []Tier{TierWhimsical, TierFriendly, TierDetailed} }

// ParseTier reads a tier name.
func ParseTier(s string) (Tier, bool) {
	for _, t := range Tiers() {
		if string(t) == s {
			return t, true
		}
	}
	return "", false
}

// Next returns the tier after t in toggle order, wrapping around.
func (t Tier) Next() Tier {
	switch t {
	case TierWhimsical:
		return TierFriendly
	case TierFriendly:
		return TierDetailed
	default:
		return TierWhimsical
	}
}

// fallbackOrder is the walk from a requested tier when the guild left it
// empty: toward less precise tiers first, then toward more precise ones.
func (t Tier) fallbackOrder() [3]Tier {
	switch t {
	case TierWhimsical:
		return [3]Tier{TierWhimsical, TierFriendly, TierDetailed}
	case TierFriendly:
		return [3]Tier{TierFriendly, TierWhimsical, TierDetailed}
	default:
		return [3]Tier{TierDetailed, TierFriendly, TierWhimsical}
	}
}

// Tiered is one display field in the guild's three tiers. Each tier holds a
// list of variants: identity surfaces show the first, activity surfaces pick
// one by a hash of the operation id.
type Tiered struct {
	Detailed  []string `json:"detailed,omitempty"`
	Friendly  []string `json:"friendly,omitempty"`
	Whimsical []string `json:"whimsical,omitempty"`
}

func (t Tiered) tier(x Tier) []string {
	switch x {
	case TierWhimsical:
		return t.Whimsical
	case TierFriendly:
		return t.Friendly
	default:
		return t.Detailed
	}
}

// pick returns the first non-empty variant list along the tier's fallback
// walk, or nil.
func (t Tiered) pick(x Tier) []string {
	for _, y := range x.fallbackOrder() {
		if l := nonEmpty(t.tier(y)); len(l) > 0 {
			return l
		}
	}
	return nil
}

func nonEmpty(l []string) []string {
	for _, s := range l {
		if blank(s) {
			// Drop blank variants rather than render an empty caption.
			out := make([]string, 0, len(l))
			for _, s := range l {
				if !blank(s) {
					out = append(out, s)
				}
			}
			return out
		}
	}
	return l
}

// blank reports whether a variant shows nothing: empty, or nothing but
// spaces and terminal control, which would otherwise leave a node nameless.
func blank(s string) bool {
	return strings.TrimSpace(SanitizeLine(s)) == ""
}

// RoleLabels are a guild role's display fields.
type RoleLabels struct {
	Label       Tiered `json:"label"`
	Description Tiered `json:"description"`
	// WorkingLabel is the caption while the role works; {participant} and
	// {participantRole} are replaced.
	WorkingLabel Tiered `json:"workingLabel"`
}

// ToolLabels are a tool manifest's display fields.
type ToolLabels struct {
	HumanLabel       Tiered `json:"humanLabel"`
	HumanDescription Tiered `json:"humanDescription"`
	// HumanCallLabel phrases a call to this tool ({source}, {destination});
	// it overrides the generic call templates.
	HumanCallLabel Tiered `json:"humanCallLabel"`
	// HumanWorkingLabel is the caption while the tool runs ({participant}).
	HumanWorkingLabel Tiered `json:"humanWorkingLabel"`
}

// Visualization is the guild's optional visualization section.
type Visualization struct {
	// PseudoRoleLabels label the participants the views invent: "human",
	// "interrupt" and the "tools" column.
	PseudoRoleLabels map[string]Tiered `json:"pseudoRoleLabels,omitempty"`
	// OperationTemplates are keyed by operation kind, then by
	// "sourceKind->destinationKind" (for example "role->tool").
	OperationTemplates map[string]map[string]Tiered `json:"operationTemplates,omitempty"`
	// GenericOperationTemplates are the per-kind fallbacks.
	GenericOperationTemplates map[string]Tiered `json:"genericOperationTemplates,omitempty"`
	// WorkingTemplates are per participant kind fallbacks for the working
	// caption of a role or tool without its own working label.
	WorkingTemplates map[string]Tiered `json:"workingTemplates,omitempty"`
}

// LabelSet is every display label a guild defines: the trusted source of
// all prose the views show besides operation details.
type LabelSet struct {
	Roles         map[string]RoleLabels `json:"roles,omitempty"`
	Tools         map[string]ToolLabels `json:"tools,omitempty"`
	Visualization Visualization         `json:"visualization"`
}

// DefaultVisualization is the built-in visualization section a guild's own
// entries override key by key, so a guild without one still reads well.
func DefaultVisualization() Visualization {
	one := func(d, f string, w ...string) Tiered {
		return Tiered{Detailed: []string{d}, Friendly: []string{f}, Whimsical: w}
	}
	return Visualization{
		PseudoRoleLabels: map[string]Tiered{
			"human":     one("Operator", "The human", "The Patron"),
			"interrupt": one("Interrupt", "Check-in", "The Tap on the Shoulder"),
			"tools":     one("Tools", "Tools", "The Toolbox"),
		},
		OperationTemplates: map[string]map[string]Tiered{
			"call": {
				"role->tool":      one("{source} calls tool {destinationRole}", "{source} uses {destination}", "{source} reaches for {destination}", "{source} rummages for {destination}"),
				"role->human":     one("{source} asks the operator a question", "{source} has a question for you", "{source} sends you a paper airplane"),
				"interrupt->role": one("Interrupt hands control to {destination}", "{destination} is called in", "{destination} is summoned mid-stride"),
				"human->role":     one("Task handed to {destination}", "{destination} takes on your task", "{destination} receives a wish"),
			},
			"return": {
				"tool->role":  one("{sourceRole} returns {outcome} to {destination}", "{source} finished for {destination}", "{source} clatters back to {destination}"),
				"human->role": one("The operator answers {destination}", "You answered {destination}", "A reply flutters down to {destination}"),
			},
		},
		GenericOperationTemplates: map[string]Tiered{
			"call":      one("{source} calls {destination}", "{source} hands work to {destination}", "{source} summons {destination}", "{source} sends a raven to {destination}", "{source} rings the bell for {destination}"),
			"return":    one("{source} returns {outcome} to {destination}", "{source} reports back to {destination}", "{source} scampers back to {destination}", "{source} drops a scroll on {destination}'s desk"),
			"observe":   one("{source} observes {destination}", "{source} looks over {destination}'s work", "{source} peers through {destination}'s keyhole"),
			"terminate": one("{source} terminates {destination}", "{source} stops {destination}", "{source} blows out {destination}'s candle"),
		},
		WorkingTemplates: map[string]Tiered{
			"role":      one("{participant} ({participantRole}) is working", "{participant} is working", "{participant} is lost in thought", "{participant} hums over the workbench"),
			"tool":      one("{participant} is running", "{participant} is busy", "{participant} whirs and clicks"),
			"human":     one("Waiting for the operator", "Waiting for your answer", "The quill awaits your hand"),
			"interrupt": one("Interrupt in progress", "Checking in", "A tap on the shoulder"),
		},
	}
}

// LabelResolver turns model participants and operations into display text
// from a LabelSet at one tier. It holds no mutable state; the model never
// supplies labels.
//
// The guild is not trusted to be harmless, though: it may come from the
// workspace, and its labels, like the role and tool names and the log
// fields that fill placeholders, can carry terminal control. Every string
// the resolver returns is therefore passed through SanitizeLine, here at
// the one place every view takes labels from.
type LabelResolver struct {
	set      LabelSet
	defaults Visualization
	tier     Tier
}

// NewLabelResolver returns a resolver over set at tier. An unknown tier
// resolves as friendly.
func NewLabelResolver(set LabelSet, tier Tier) *LabelResolver {
	if _, ok := ParseTier(string(tier)); !ok {
		tier = TierFriendly
	}
	return &LabelResolver{set: set, defaults: DefaultVisualization(), tier: tier}
}

// Tier returns the resolver's tier.
func (r *LabelResolver) Tier() Tier { return r.tier }

// WithTier returns a resolver over the same labels at another tier.
func (r *LabelResolver) WithTier(t Tier) *LabelResolver {
	if _, ok := ParseTier(string(t)); !ok {
		t = TierFriendly
	}
	c := *r
	c.tier = t
	return &c
}

// Seed is the stable rotation seed of an id: 32-bit FNV-1a.
func Seed(id string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()
}

func rotate(list []string, seed string) string {
	if len(list) == 0 {
		return ""
	}
	return list[Seed(seed)%uint32(len(list))]
}

// pseudo looks a pseudo-role up in the guild, then the defaults.
func (r *LabelResolver) pseudo(key string) []string {
	if l := r.set.Visualization.PseudoRoleLabels[key].pick(r.tier); l != nil {
		return l
	}
	return r.defaults.PseudoRoleLabels[key].pick(r.tier)
}

// PseudoLabel labels a view-invented column or node: "human", "interrupt",
// or "tools".
func (r *LabelResolver) PseudoLabel(key string) string {
	return firstOr(r.pseudo(key), titleCase(key))
}

// firstOr is a label's first variant (the stable one), or fallback when it
// has none, made safe for one line.
func firstOr(variants []string, fallback string) string {
	if len(variants) > 0 {
		return SanitizeLine(variants[0])
	}
	return SanitizeLine(fallback)
}

// ParticipantLabel is a participant's name: stable for its whole life (the
// first variant of its tier), falling back to the title-cased role or tool
// name.
func (r *LabelResolver) ParticipantLabel(p Participant) string {
	own, ok := r.own(p)
	l := own.label.pick(r.tier)
	if !ok {
		l = r.pseudo(p.Role)
	}
	return firstOr(l, titleCase(p.Role))
}

// ParticipantDescription is a role's or tool's description at the tier, or
// "". It is ParticipantLabel's lookup on the description fields, apart
// because a pseudo participant has a label but no description.
func (r *LabelResolver) ParticipantDescription(p Participant) string {
	own, _ := r.own(p)
	return firstOr(own.description.pick(r.tier), "")
}

// ownLabels are the display fields a role and a tool both have, under the
// names each kind gives them in the guild.
type ownLabels struct {
	label, description, working Tiered
}

// own is p's entry in the guild: its role's or its tool's fields. ok is
// false for a pseudo participant, which has no entry of its own.
func (r *LabelResolver) own(p Participant) (labels ownLabels, ok bool) {
	switch p.Kind {
	case KindRole:
		l := r.set.Roles[p.Role]
		return ownLabels{l.Label, l.Description, l.WorkingLabel}, true
	case KindTool:
		l := r.set.Tools[p.Role]
		return ownLabels{l.HumanLabel, l.HumanDescription, l.HumanWorkingLabel}, true
	}
	return ownLabels{}, false
}

// OperationLabel phrases an operation between its source and destination
// participants. The template is, in order: a call's tool humanCallLabel,
// the guild's kind+"source->destination" template, the guild's generic kind
// template, then the built-in ones. Variants rotate by the operation id.
func (r *LabelResolver) OperationLabel(op Operation, source, destination Participant) string {
	kind := string(op.Kind)
	var l []string
	if op.Kind == OpCall && destination.Kind == KindTool {
		l = r.set.Tools[destination.Role].HumanCallLabel.pick(r.tier)
	}
	disc := string(source.Kind) + "->" + string(destination.Kind)
	if l == nil {
		l = r.set.Visualization.OperationTemplates[kind][disc].pick(r.tier)
	}
	if l == nil {
		l = r.set.Visualization.GenericOperationTemplates[kind].pick(r.tier)
	}
	if l == nil {
		l = r.defaults.OperationTemplates[kind][disc].pick(r.tier)
	}
	if l == nil {
		l = r.defaults.GenericOperationTemplates[kind].pick(r.tier)
	}
	tmpl := rotate(l, op.ID)
	if tmpl == "" {
		tmpl = "{source} → {destination}"
	}
	return fillClean(tmpl, func(name string) (string, bool) {
		switch name {
		case "source":
			return r.ParticipantLabel(source), true
		case "destination":
			return r.ParticipantLabel(destination), true
		case "sourceRole":
			return source.Role, true
		case "destinationRole":
			return destination.Role, true
		case "sourceKind":
			return string(source.Kind), true
		case "destinationKind":
			return string(destination.Kind), true
		case "stack":
			return op.Stack, true
		case "outcome":
			return op.Outcome, true
		}
		return "", false
	})
}

// WorkingLabel is the caption while p works: its role workingLabel or tool
// humanWorkingLabel, else the working template for its kind (guild, then
// built-in). seed (an operation id) picks the variant. It reports false when
// nothing applies.
func (r *LabelResolver) WorkingLabel(p Participant, seed string) (string, bool) {
	own, _ := r.own(p)
	l := own.working.pick(r.tier)
	if l == nil {
		l = r.set.Visualization.WorkingTemplates[string(p.Kind)].pick(r.tier)
	}
	if l == nil {
		l = r.defaults.WorkingTemplates[string(p.Kind)].pick(r.tier)
	}
	if l == nil {
		return "", false
	}
	return fillClean(rotate(l, seed), func(name string) (string, bool) {
		switch name {
		case "participant":
			return r.ParticipantLabel(p), true
		case "participantRole":
			return p.Role, true
		case "participantKind":
			return string(p.Kind), true
		case "participantId":
			return p.ID, true
		}
		return "", false
	}), true
}

// fillClean is fill over a sanitized template and sanitized values: a
// template or a value (a log field) cannot hide the rest of the label
// behind an unterminated sequence, nor can the two be put together into
// one.
func fillClean(tmpl string, value func(string) (string, bool)) string {
	return fill(SanitizeLine(tmpl), func(name string) (string, bool) {
		v, ok := value(name)
		return SanitizeLine(v), ok
	})
}

// fill replaces {name} placeholders in one pass; an unknown placeholder is
// left as written so a typo shows instead of vanishing.
func fill(tmpl string, value func(string) (string, bool)) string {
	if !strings.Contains(tmpl, "{") {
		return tmpl
	}
	var b strings.Builder
	for i := 0; i < len(tmpl); {
		if tmpl[i] == '{' {
			j := i + 1
			for j < len(tmpl) && isWordByte(tmpl[j]) {
				j++
			}
			if j < len(tmpl) && tmpl[j] == '}' && j > i+1 {
				if v, ok := value(tmpl[i+1 : j]); ok {
					b.WriteString(v)
					i = j + 1
					continue
				}
			}
		}
		b.WriteByte(tmpl[i])
		i++
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// titleCase turns an identifier into words: "read_file" → "Read File".
func titleCase(s string) string {
	words := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' || r == ' ' })
	for i, w := range words {
		r, n := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[n:]
	}
	return strings.Join(words, " ")
}
