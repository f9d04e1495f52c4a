package runner

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/guildhall/guildhall/runner/mcp"
	"github.com/guildhall/guildhall/tools"
)

// An MCP tool is named server.tool in the guild and the logs: the server
// name (an identifier, no dot) and the tool's own name (which may hold
// dots). A role grants one tool, or every tool of a server with server.*.
const mcpWildcard = "*"

// parseMCPName splits an MCP tool or grant name. ok is false for a name
// that is not one (no dot: a built-in or a manifest's tool).
func parseMCPName(name string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(name, ".")
	return server, tool, ok
}

// mcpNameProblem says what is wrong with an MCP grant, or "".
func mcpNameProblem(name string) string {
	server, tool, _ := parseMCPName(name)
	if msg := mcp.CheckName(server); msg != "" {
		return fmt.Sprintf("MCP server name %q %s", server, msg)
	}
	if tool == mcpWildcard {
		return ""
	}
	if tool == "" || len(tool) > 128 || strings.Trim(tool, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != "" {
		return fmt.Sprintf("MCP tool name %q is not 1 to 128 letters, digits, '_', '-' and '.' (or * for every tool of the server)", tool)
	}
	return ""
}

// GrantsMCP reports whether the role may call the MCP tool full
// (server.tool): granted by name, or by server.*.
func (r *Role) GrantsMCP(full string) bool {
	server, _, ok := parseMCPName(full)
	return ok && (r.Grants(full) || r.Grants(server+"."+mcpWildcard))
}

// MCPGrants lists the role's MCP grants (server.tool and server.*).
func (r *Role) MCPGrants() []string {
	var out []string
	for _, t := range r.Tools {
		if _, _, ok := parseMCPName(t); ok {
			out = append(out, t)
		}
	}
	return out
}

// MCPServersGranted lists the servers any of the role's grants name,
// sorted.
func (r *Role) MCPServersGranted() []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range r.MCPGrants() {
		s, _, _ := parseMCPName(g)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// MCPSecrets are the values of every server's env and headers: they may
// be tokens, and are kept out of every record.
func (d *Deployment) MCPSecrets() []string {
	var out []string
	for _, c := range d.MCPServers {
		out = append(out, c.Secrets()...)
	}
	return out
}

// ExpandMCPEnv expands ${VAR} and ${VAR:-default} in the operator's MCP
// servers (env, headers, args, url) from lookup, the operator's
// environment. A server a workspace's file declared is left as written
// (mcp.Config.Expanded). The error names the server and the field.
func (d *Deployment) ExpandMCPEnv(lookup func(string) (string, bool)) error {
	for _, name := range d.MCPServerNames() {
		c, err := d.MCPServers[name].Expanded(lookup)
		if err != nil {
			return &ConfigError{File: cmp.Or(d.MCPServers[name].Origin, "deployment.json"), Msg: fmt.Sprintf("mcpServers.%s.%v", name, err)}
		}
		d.MCPServers[name] = c
	}
	return nil
}

// MCPServerNames lists the declared servers, sorted.
func (d *Deployment) MCPServerNames() []string {
	return slices.Sorted(maps.Keys(d.MCPServers))
}

// MarkWorkspaceServers flags the servers a workspace's file declared
// (files names those files): such a server's URL is a destination the
// workspace chose, and must pass the run's egress policy.
func (d *Deployment) MarkWorkspaceServers(files map[string]bool) {
	for name, c := range d.MCPServers {
		if files[c.Origin] {
			c.FromWorkspace = true
			d.MCPServers[name] = c
		}
	}
}

// markMCPOrigins records file as the origin of the servers it declares.
func markMCPOrigins(d *Deployment, root *jnode, file string) {
	sec := root.field("mcpServers")
	if sec == nil || sec.kind != '{' {
		return
	}
	for _, f := range sec.keys {
		if c, ok := d.MCPServers[f.key]; ok {
			c.Origin, c.FromWorkspace = file, false
			d.MCPServers[f.key] = c
		}
	}
}

// checkMCPServers validates each server the file declares, every problem
// at its field's position.
func checkMCPServers(c *checker, root *jnode, d *Deployment) {
	sec := root.field("mcpServers")
	if sec == nil || sec.kind != '{' {
		return
	}
	builtins, _ := tools.DefaultManifests()
	names := map[string]bool{}
	for n := range builtins {
		names[n] = true
	}
	for _, f := range sec.keys {
		cfg, ok := d.MCPServers[f.key]
		if !ok {
			continue
		}
		for _, p := range mcp.Check(f.key, cfg, names) {
			off := f.offset
			if len(p.Path) > 0 {
				off = nodeAt(f.value, p.Path).offset
			}
			c.errorf(off, "%s", p.Msg)
		}
	}
}

// nodeAt is the node at path below n (keys and indexes), or the deepest
// node on the way that exists.
func nodeAt(n *jnode, path []any) *jnode {
	for _, step := range path {
		var next *jnode
		switch s := step.(type) {
		case string:
			next = n.field(s)
		case int:
			if s < len(n.items) {
				next = n.items[s]
			}
		}
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

// checkMCPGrants reports grants of servers the deployment does not
// declare. Whether a declared server offers a granted tool is known only
// once it runs: `guildhall check --probe` and the run's ready event say.
func (d *Deployment) checkMCPGrants(g *Guild) ConfigErrors {
	var errs ConfigErrors
	for _, name := range g.RoleNames() {
		for _, grant := range g.Roles[name].MCPGrants() {
			server, _, _ := parseMCPName(grant)
			if _, ok := d.MCPServers[server]; ok {
				continue
			}
			errs = append(errs, &ConfigError{File: cmp.Or(g.Source, "the guild"), Msg: fmt.Sprintf(
				"role %s grants %s, but the deployment %s declares no MCP server %s; declare it under mcpServers or remove the grant",
				quotedNames([]string{name}), strconv.Quote(grant), d.Source, strconv.Quote(server))})
		}
	}
	return errs
}
