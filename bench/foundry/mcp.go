package foundry

// The MCP servers of a deployment, judged by the gate and shown by the
// diff. A server's tools run its own program (stdio) or reach its own
// address (streamable HTTP), outside the tool guild, so a server that runs
// looser than before, or an address not reached before, weakens isolation
// as a loosened sandbox or a widened allowlist does.

import (
	"fmt"
	"slices"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/mcp"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// modeRank orders sandbox modes from the tightest.
var modeRank = map[string]int{"read-only": 0, "workspace-write": 1, "none": 2}

func mcpWeakenings(o, n *runner.Deployment) []Weakening {
	oRun, nRun := sandbox.Mode(modeOf(o.Sandbox.Mode)), sandbox.Mode(modeOf(n.Sandbox.Mode))
	var out []Weakening
	for _, name := range n.MCPServerNames() {
		nc := n.MCPServers[name]
		oc, had := o.MCPServers[name]
		subject := "mcp." + name
		if nc.Transport() == mcp.HTTP {
			if !had || oc.Transport() != mcp.HTTP || mcp.PublicURL(oc.URL) != mcp.PublicURL(nc.URL) {
				out = append(out, weak(EgressWidened, subject, "url", fmt.Sprintf("MCP server %s is reached at %s", name, mcp.PublicURL(nc.URL))))
			}
			continue
		}
		// A new server is judged against the run's own mode: one that runs
		// as confined as the run's commands adds no looser program.
		was, wasNet, wasAllow, wasWritable := string(nRun), "off", []string(nil), []string(nil)
		if had && oc.Transport() == mcp.Stdio {
			was, wasNet, wasAllow, wasWritable = string(oc.Mode(oRun)), networkOf(oc.Sandbox.Network), oc.Sandbox.Allow, oc.Sandbox.Writable
		}
		now := string(nc.Mode(nRun))
		if modeRank[now] > modeRank[was] {
			out = append(out, weak(SandboxLoosened, subject, "mode", fmt.Sprintf("MCP server %s runs with sandbox mode %s (was %s): %s", name, now, was, nc.SandboxSummary(nRun))))
		}
		if now == string(sandbox.None) {
			if had && oc.Transport() == mcp.Stdio && (oc.Command != nc.Command || !slices.Equal(oc.Args, nc.Args)) {
				out = append(out, weak(SandboxLoosened, subject, "command", fmt.Sprintf("MCP server %s runs another program unconfined: %s", name, nc.Summary(nRun))))
			}
			continue // unconfined: its allowlist and writable folders mean nothing
		}
		for _, w := range setDiff(nc.Sandbox.Writable, wasWritable) {
			out = append(out, weak(SandboxLoosened, subject, "writable="+w, fmt.Sprintf("MCP server %s may write %s", name, w)))
		}
		if wasNet == "off" && networkOf(nc.Sandbox.Network) != "off" {
			out = append(out, weak(EgressWidened, subject, "network", fmt.Sprintf("MCP server %s: network off → %s", name, nc.Sandbox.Network)))
		}
		for _, a := range setDiff(nc.Sandbox.Allow, wasAllow) {
			out = append(out, weak(EgressWidened, subject, "allow="+a, fmt.Sprintf("MCP server %s may reach %s", name, a)))
		}
	}
	return out
}

// mcpChanges lists the servers added, removed or changed, each described
// as the trust prompt describes it (no secret: env and header values are
// never shown).
func mcpChanges(o, n *runner.Deployment) []string {
	oRun, nRun := sandbox.Mode(modeOf(o.Sandbox.Mode)), sandbox.Mode(modeOf(n.Sandbox.Mode))
	var out []string
	for _, name := range unionKeys(o.MCPServers, n.MCPServers) {
		oc, had := o.MCPServers[name]
		nc, has := n.MCPServers[name]
		switch {
		case !had:
			out = append(out, fmt.Sprintf("mcpServers.%s: added: %s", name, nc.Summary(nRun)))
		case !has:
			out = append(out, fmt.Sprintf("mcpServers.%s: removed", name))
		default:
			if a, b := oc.Summary(oRun), nc.Summary(nRun); a != b {
				out = append(out, fmt.Sprintf("mcpServers.%s: %s → %s", name, a, b))
			}
		}
	}
	return out
}
