package trust

// What trusting a workspace would change, line by line, for the console's
// prompt and `guildhall trust`.

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/mcp"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// A Change is one line of what trusting a workspace would change.
type Change struct {
	Text string
	// Warn marks a change that weakens isolation or sends work elsewhere:
	// the sandbox loosened, the model endpoint moved, tools that run
	// commands granted.
	Warn bool
}

// Changes describes, one line each, what applying the workspace's
// configuration would change against the operator's: each setting the
// deployment file sets (old → new), and the guild that would replace the
// operator's (its entry role, roles, and who may run commands). Strings
// come from the workspace: the caller sanitises them before display.
func (f *Found) Changes(base *runner.Deployment, baseGuild string) []Change {
	out := append([]Change(nil), f.Refused...)
	if f.Deployment != nil {
		out = append(out, deploymentChanges(f.DeploymentFile, base, f.Deployment)...)
	}
	for _, sp := range f.Pins {
		if len(sp.Files) > 0 {
			out = append(out, Change{Text: fmt.Sprintf("%s's MCP server %s runs the workspace's %s: trusting pins them, and a change to them asks again", f.DeploymentFile, sp.Server, strings.Join(sp.Files, ", "))})
		}
		if sp.Workspace {
			out = append(out, Change{Text: fmt.Sprintf("%s's MCP server %s is given the workspace folder itself, which trust cannot pin: what it runs from there may change without a new question", f.DeploymentFile, sp.Server), Warn: true})
		}
	}
	if g := f.Guild; g != nil {
		out = append(out, Change{Text: fmt.Sprintf("guild/ replaces %s: entry role %s; roles %s", baseGuild, g.EntryRole, strings.Join(g.RoleNames(), ", "))})
		for _, tool := range []string{"run_shell", "typecheck", "test", "write_file", "edit_file", "git_commit", "fetch_url", "web_search"} {
			var who []string
			for _, name := range g.RoleNames() {
				if g.Roles[name].Grants(tool) {
					who = append(who, name)
				}
			}
			if len(who) > 0 {
				out = append(out, Change{Text: fmt.Sprintf("guild/ grants %s to %s", tool, strings.Join(who, ", ")), Warn: runsCommands(tool)})
			}
		}
		for _, name := range g.RoleNames() {
			// Another party's tools, with whatever tokens the operator
			// gave the server: a grant is worth a look.
			if grants := g.Roles[name].MCPGrants(); len(grants) > 0 {
				out = append(out, Change{Text: fmt.Sprintf("guild/ grants the MCP tools %s to %s", strings.Join(grants, ", "), name), Warn: true})
			}
			// Which of the deployment's models the role's work goes to.
			if m := g.Roles[name].Model; m != "" {
				out = append(out, Change{Text: fmt.Sprintf("guild/ runs %s on the deployment's model %s", name, m)})
			}
			if docs := g.Roles[name].ProjectDocs; len(docs) > 0 {
				out = append(out, Change{Text: fmt.Sprintf("guild/ gives %s the workspace files %s as project documentation", name, strings.Join(docs, ", "))})
			}
			// A style guide outside guild/ is one of the workspace's own
			// files, put into every prompt of the role.
			if sg := g.Roles[name].StyleGuide; sg != "" {
				if file := path.Join(workspaceGuildDir, strings.TrimLeft(sg, "/")); !strings.HasPrefix(file, workspaceGuildDir+"/") {
					out = append(out, Change{Text: fmt.Sprintf("guild/ appends the workspace file %s to the system prompt of %s", file, name)})
				}
			}
		}
	}
	return out
}

func runsCommands(tool string) bool {
	switch tool {
	case "run_shell", "typecheck", "test":
		return true
	}
	return false
}

// deploymentChanges lists the settings file set, from base's value to d's.
func deploymentChanges(file string, base, d *runner.Deployment) []Change {
	if base == nil {
		base = runner.DefaultDeployment()
	}
	var paths []string
	for p, origin := range d.SetBy {
		if origin == file {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	before, after := asTree(base), asTree(d)
	out := mcpChanges(file, base, d)
	for _, p := range paths {
		if strings.HasPrefix(p, "mcpServers.") {
			continue // mcpChanges said it, without the values
		}
		old, now := lookup(before, p), lookup(after, p)
		text := fmt.Sprintf("%s sets %s to %s", file, p, now)
		if old != now {
			text += " (now " + old + ")"
		}
		out = append(out, Change{Text: text, Warn: weakening(p) || raisesBudget(p, old, now)})
	}
	return out
}

// mcpChanges lists the MCP servers file declares, each a warning: a
// stdio server is a command the workspace chose (it runs in a sandbox of
// its own, whose policy the line shows), an HTTP server an endpoint the
// workspace chose (reached only through sandbox.allow). Env and header
// values are never shown, only their names.
func mcpChanges(file string, base, d *runner.Deployment) []Change {
	var out []Change
	mode := sandbox.Mode(d.Sandbox.Mode)
	for _, name := range d.MCPServerNames() {
		c := d.MCPServers[name]
		if c.Origin != file {
			continue
		}
		text := fmt.Sprintf("%s declares MCP server %s: %s", file, name, c.Summary(mode))
		if c.Transport() == mcp.HTTP {
			text += " (reached only if sandbox.allow names its host)"
		}
		if old, ok := base.MCPServers[name]; ok {
			text += fmt.Sprintf("; it replaces your server %s (%s), whose env and headers it does not get", name, old.Summary(mode))
		}
		out = append(out, Change{Text: text, Warn: true})
	}
	return out
}

// weakening reports settings whose change sends work elsewhere or loosens
// isolation: the model endpoint (the model block's, or a named model's:
// one added or moved), the sandbox and its egress allowlist,
// the operator's variables passed to commands, and where web_search sends
// queries (a workspace's endpoint is reached only as the egress policy
// allows, but a query can carry what a command printed).
func weakening(path string) bool {
	switch path {
	case "model.apiBase", "model.provider", "executor.passEnv", "webSearch.endpoint", "webSearch.provider":
		return true
	}
	if rest, ok := strings.CutPrefix(path, "models."); ok {
		_, field, _ := strings.Cut(rest, ".")
		return field == "apiBase" || field == "provider"
	}
	return strings.HasPrefix(path, "sandbox.")
}

// raisesBudget reports whether a change to one of executor.budget's
// limits lets a run go on longer: a limit lifted (0 is none) or raised.
// An unattended run's budget is what stops a loop an injection started, so
// a workspace lifting it is a warning; lowering it is not.
func raisesBudget(path, old, now string) bool {
	if !strings.HasPrefix(path, "executor.budget.") {
		return false
	}
	o, oerr := strconv.Atoi(old)
	n, nerr := strconv.Atoi(now)
	if oerr != nil || nerr != nil {
		return true // not numbers: nothing shows it is not a loosening
	}
	return o != 0 && (n == 0 || n > o)
}

func asTree(d *runner.Deployment) map[string]any {
	b, _ := json.Marshal(d)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// lookup renders the value at a dotted path, "unset" when absent.
func lookup(tree map[string]any, path string) string {
	var v any = tree
	for _, part := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "unset"
		}
		if v, ok = m[part]; !ok {
			return "unset"
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}
