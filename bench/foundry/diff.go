package foundry

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
)

// RoleDiff is what changed about one role.
type RoleDiff struct {
	Role           string
	Added, Removed bool
	ToolsAdded     []string
	ToolsRemoved   []string
	// ProjectDocs and StyleGuide hold old → new when they changed.
	ProjectDocs *[2][]string
	StyleGuide  *[2]string
	// Prompt is a line diff of the role's prompt file ("+", "-" and " "
	// prefixed lines around each change).
	Prompt []string
	// RemovedClauses are injection-resistance lines of the old prompt
	// that the new one no longer has.
	RemovedClauses []string
}

// Diff is what changed between two configurations.
type Diff struct {
	EntryRole [2]string
	Roles     []RoleDiff
	// Handlers are the deployment's handler roles that changed
	// ("contextHandlerRole: context_manager → none").
	Handlers []string
	// StyleGuide is a line diff of prompts/style.md.
	StyleGuide []string
	// Deployment lists sandbox and egress settings that changed.
	Deployment []string
}

// Empty reports whether nothing changed.
func (d *Diff) Empty() bool {
	return d.EntryRole[0] == d.EntryRole[1] && len(d.Roles) == 0 && len(d.Handlers) == 0 && len(d.StyleGuide) == 0 && len(d.Deployment) == 0
}

// clauseRE finds the lines of a prompt that resist injection: those that
// say workspace content is data, not instructions.
var clauseRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(not instructions|is data\b|are data\b|as data\b|data, not|prompt.injection|untrusted|ignore (your|the|previous|its|all) (rules|instructions)|do not (obey|follow) (it|them|instructions)|never (obey|follow)|override (the|your) (rules|instructions|prompt))`)
})

// InjectionClauses are the sentences of a prompt that resist injection.
// Sentences, not lines: rewording the rest of a line keeps its clause.
func InjectionClauses(prompt string) []string {
	var out []string
	for _, line := range strings.Split(prompt, "\n") {
		for _, sent := range sentenceRE().Split(line, -1) {
			if l := strings.TrimSpace(sent); l != "" && clauseRE().MatchString(l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// sentenceRE ends a sentence: a full stop, ! or ? followed by space.
var sentenceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[.!?]\s+`) })

func clauseNorm(c string) string {
	return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(c), " ")), ".!?;: ")
}

func removedClauses(old, new string) []string {
	have := map[string]bool{}
	for _, c := range InjectionClauses(new) {
		have[clauseNorm(c)] = true
	}
	var out []string
	for _, c := range InjectionClauses(old) {
		if !have[clauseNorm(c)] {
			out = append(out, c)
		}
	}
	return out
}

// Compare diffs two configurations.
func Compare(old, new *Config) *Diff {
	d := &Diff{EntryRole: [2]string{old.Guild.EntryRole, new.Guild.EntryRole}}
	names := unionKeys(old.Guild.Roles, new.Guild.Roles)
	for _, n := range names {
		o, nw := old.Guild.Roles[n], new.Guild.Roles[n]
		rd := RoleDiff{Role: n}
		switch {
		case o == nil:
			rd.Added, rd.ToolsAdded = true, sorted(nw.Tools)
			rd.Prompt = lineDiff("", new.prompt(nw))
		case nw == nil:
			rd.Removed, rd.ToolsRemoved = true, sorted(o.Tools)
		default:
			rd.ToolsAdded, rd.ToolsRemoved = setDiff(nw.Tools, o.Tools), setDiff(o.Tools, nw.Tools)
			if !slices.Equal(o.ProjectDocs, nw.ProjectDocs) {
				rd.ProjectDocs = &[2][]string{o.ProjectDocs, nw.ProjectDocs}
			}
			if o.StyleGuide != nw.StyleGuide {
				rd.StyleGuide = &[2]string{styleName(o.StyleGuide), styleName(nw.StyleGuide)}
			}
			rd.Prompt = lineDiff(old.prompt(o), new.prompt(nw))
			rd.RemovedClauses = removedClauses(old.fullPrompt(o), new.fullPrompt(nw))
		}
		if rd.Added || rd.Removed || len(rd.ToolsAdded)+len(rd.ToolsRemoved)+len(rd.Prompt)+len(rd.RemovedClauses) > 0 || rd.ProjectDocs != nil || rd.StyleGuide != nil {
			d.Roles = append(d.Roles, rd)
		}
	}
	d.StyleGuide = lineDiff(old.Files["prompts/style.md"], new.Files["prompts/style.md"])
	d.Handlers = handlerChanges(old, new)
	d.Deployment = deploymentChanges(old.deployment(), new.deployment())
	return d
}

// prompt is the role's prompt file as written (what an edit changes).
func (c *Config) prompt(r *runner.Role) string {
	if s, ok := c.Files[r.SystemPrompt]; ok {
		return s
	}
	return r.Prompt
}

// fullPrompt is what the model gets: the prompt with the style guide
// when the role takes it.
func (c *Config) fullPrompt(r *runner.Role) string { return r.Prompt }

// deployment is the configuration's deployment, or the defaults fitted
// to its guild.
func (c *Config) deployment() *runner.Deployment {
	if c.Deployment != nil {
		return c.Deployment
	}
	d := runner.DefaultDeployment()
	d.FitToGuild(c.Guild)
	return d
}

func handlerChanges(old, new *Config) []string {
	o, n := old.deployment().Executor, new.deployment().Executor
	var out []string
	add := func(name, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s: %s → %s", name, orNone(a), orNone(b)))
		}
	}
	add("contextHandlerRole", o.ContextHandlerRole, n.ContextHandlerRole)
	add("inquiryHandlerRole", o.InquiryHandlerRole, n.InquiryHandlerRole)
	var oh, nh, op, np string
	if t := o.InterruptTriggers; t != nil {
		oh, op = t.HandlerRole, t.PlanOwnerRole
	}
	if t := n.InterruptTriggers; t != nil {
		nh, np = t.HandlerRole, t.PlanOwnerRole
	}
	add("interruptTriggers.handlerRole", oh, nh)
	add("interruptTriggers.planOwnerRole", op, np)
	return out
}

func deploymentChanges(o, n *runner.Deployment) []string {
	var out []string
	add := func(name string, a, b any) {
		if fmt.Sprint(a) != fmt.Sprint(b) {
			out = append(out, fmt.Sprintf("%s: %v → %v", name, a, b))
		}
	}
	add("sandbox.mode", modeOf(o.Sandbox.Mode), modeOf(n.Sandbox.Mode))
	add("sandbox.network", networkOf(o.Sandbox.Network), networkOf(n.Sandbox.Network))
	add("sandbox.allow", sorted(o.Sandbox.Allow), sorted(n.Sandbox.Allow))
	add("sandbox.writable", sorted(o.Sandbox.Writable), sorted(n.Sandbox.Writable))
	add("executor.passEnv", sorted(o.Executor.PassEnv), sorted(n.Executor.PassEnv))
	add("webSearch.provider", orNone(o.WebSearch.Provider), orNone(n.WebSearch.Provider))
	return append(out, mcpChanges(o, n)...)
}

func modeOf(m string) string {
	if m == "" {
		return "workspace-write"
	}
	return m
}

func networkOf(n string) string {
	if n == "" {
		return "off"
	}
	return n
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// WriteText prints a diff for the terminal; every guild string is
// stripped of terminal control.
func (d *Diff) WriteText(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintln(w, render.SanitizeLine(fmt.Sprintf(format, a...))) }
	if d.Empty() {
		p("no changes")
		return
	}
	if d.EntryRole[0] != d.EntryRole[1] {
		p("entry role: %s → %s", d.EntryRole[0], d.EntryRole[1])
	}
	for _, r := range d.Roles {
		switch {
		case r.Added:
			p("role %s: added, with tools %s", r.Role, strings.Join(r.ToolsAdded, ", "))
		case r.Removed:
			p("role %s: removed", r.Role)
		default:
			p("role %s:", r.Role)
		}
		if !r.Added && len(r.ToolsAdded) > 0 {
			p("  tools added: %s", strings.Join(r.ToolsAdded, ", "))
		}
		if mcp := mcpGrants(r.ToolsAdded); len(mcp) > 0 {
			p("  ! MCP tools granted: %s (they do whatever their server does)", strings.Join(mcp, ", "))
		}
		if !r.Removed && len(r.ToolsRemoved) > 0 {
			p("  tools removed: %s", strings.Join(r.ToolsRemoved, ", "))
		}
		if r.ProjectDocs != nil {
			p("  projectDocs: [%s] → [%s]", strings.Join(r.ProjectDocs[0], ", "), strings.Join(r.ProjectDocs[1], ", "))
		}
		if r.StyleGuide != nil {
			p("  styleGuide: %s → %s", r.StyleGuide[0], r.StyleGuide[1])
		}
		for _, c := range r.RemovedClauses {
			p("  ! injection-resistance clause removed: %s", c)
		}
		if len(r.Prompt) > 0 {
			p("  prompt:")
			for _, l := range r.Prompt {
				p("    %s", l)
			}
		}
	}
	if len(d.StyleGuide) > 0 {
		p("style guide (prompts/style.md):")
		for _, l := range d.StyleGuide {
			p("    %s", l)
		}
	}
	for _, h := range d.Handlers {
		p("handler %s", h)
	}
	for _, c := range d.Deployment {
		p("deployment %s", c)
	}
}

// lineDiff is a unified-style diff of two texts with one line of context,
// from their longest common subsequence (prompts are short).
func lineDiff(a, b string) []string {
	if a == b {
		return nil
	}
	x, y := splitLines(a), splitLines(b)
	if len(x)*len(y) > 4_000_000 {
		return []string{fmt.Sprintf("(the texts differ; %d lines → %d lines)", len(x), len(y))}
	}
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []string
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			ops = append(ops, " "+x[i])
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, "+"+y[j])
			j++
		default:
			ops = append(ops, "-"+x[i])
			i++
		}
	}
	var out []string
	for k, op := range ops {
		near := op[0] != ' '
		for _, d := range []int{-1, 1} {
			if k+d >= 0 && k+d < len(ops) && ops[k+d][0] != ' ' {
				near = true
			}
		}
		if near {
			out = append(out, op)
		}
	}
	return out
}

// mcpGrants are the MCP grants (server.tool, server.*) among tools.
func mcpGrants(tools []string) []string {
	var out []string
	for _, t := range tools {
		if isMCPGrant(t) {
			out = append(out, t)
		}
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// unionKeys is the names in a, b or both, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	both := make(map[string]V, len(a)+len(b))
	maps.Copy(both, a)
	maps.Copy(both, b)
	return slices.Sorted(maps.Keys(both))
}

func setDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

func sorted(xs []string) []string {
	out := append([]string{}, xs...)
	sort.Strings(out)
	return out
}

// styleName shows a role's style guide path, "none" for none.
func styleName(path string) string {
	if path == "" {
		return "none"
	}
	return path
}
