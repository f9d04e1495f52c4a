package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/mcp"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// checkMCP is `guildhall check`'s MCP part: each declared server in one
// line (never a value of its env or headers), and the MCP tools each role
// is granted. With probe it starts every server as a run would, in the
// sandbox the run would give it, and lists what each role may call; a
// server that fails its probe fails the check (exit 2).
func checkMCP(ctx context.Context, out io.Writer, cfg *config, sb sandboxState, probe bool) error {
	d, g := cfg.deployment, cfg.guild
	names := d.MCPServerNames()
	if len(names) == 0 {
		return nil
	}
	mode := sb.policy.Mode()
	for _, name := range names {
		c := d.MCPServers[name]
		who := "your configuration"
		if c.FromWorkspace {
			who = "the workspace's " + c.Origin
		}
		fmt.Fprintf(out, "mcp server %s: %s; from %s\n", render.SanitizeLine(name), render.SanitizeLine(c.Summary(mode)), render.SanitizeLine(who))
		if refs := c.References(); c.FromWorkspace && len(refs) > 0 {
			fmt.Fprintf(out, "note: mcp server %s keeps %s as written: a workspace's configuration is not expanded from your environment\n",
				render.SanitizeLine(name), render.SanitizeLine(strings.Join(refs, ", ")))
		}
	}
	if !probe {
		for _, role := range g.RoleNames() {
			if grants := g.Roles[role].MCPGrants(); len(grants) > 0 {
				fmt.Fprintf(out, "role %s is granted MCP tools %s\n", render.SanitizeLine(role), render.SanitizeLine(strings.Join(grants, ", ")))
			}
		}
		fmt.Fprintln(out, "note: the MCP servers were not started; guildhall check --probe starts them and lists the tools each role may call")
		return nil
	}
	offered, failed, err := probeMCP(ctx, out, cfg, sb)
	if err != nil {
		return err
	}
	for _, role := range g.RoleNames() {
		r := g.Roles[role]
		if len(r.MCPGrants()) == 0 {
			continue
		}
		var may, missing []string
		for _, full := range offered {
			if r.GrantsMCP(full) {
				may = append(may, full)
			}
		}
		have := map[string]bool{}
		for _, full := range offered {
			have[full] = true
		}
		for _, grant := range r.MCPGrants() {
			server, tool, _ := strings.Cut(grant, ".")
			if tool != "*" && !have[grant] && !failed[server] {
				missing = append(missing, grant)
			}
		}
		line := fmt.Sprintf("role %s may call %d MCP tools: %s", role, len(may), strings.Join(may, ", "))
		if len(may) == 0 {
			line = fmt.Sprintf("role %s may call no MCP tool", role)
		}
		if len(missing) > 0 {
			line += "; granted but not offered: " + strings.Join(missing, ", ")
		}
		fmt.Fprintln(out, render.SanitizeLine(line))
	}
	if n := len(failed); n > 0 {
		return usageErr(fmt.Errorf("%d MCP server(s) failed the probe; see the lines above", n))
	}
	return nil
}

// probeMCP starts each server, reading its tools, and stops it. It
// returns the tools offered (server.tool, sorted) and the servers that
// failed.
func probeMCP(ctx context.Context, out io.Writer, cfg *config, sb sandboxState) ([]string, map[string]bool, error) {
	d := cfg.deployment
	canon, err := filepath.EvalSymlinks(cfg.workspace)
	if err != nil {
		return nil, nil, usageErr(err)
	}
	box, err := sb.host.Open(sandbox.Options{Policy: sb.policy, Workspace: canon})
	if err != nil {
		return nil, nil, usageErr(err)
	}
	defer box.Close()
	m := mcp.New(mcp.Options{Servers: d.MCPServers, Sandbox: box, Env: tools.SubprocessEnv(d.Executor.PassEnv), Egress: d.EgressPolicy(), Version: versionString(version)})
	defer m.Close()
	names := m.Names()
	type probed struct {
		list []mcp.Tool
		err  error
	}
	results := make([]probed, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i].list, results[i].err = m.Tools(ctx, name)
		}()
	}
	wg.Wait()
	// A reason quotes the server's stderr or an error, which can echo a
	// token it was given: printed as a record would be, redacted.
	redact := store.NewRedactor(d.MCPSecrets()...)
	var offered []string
	failed := map[string]bool{}
	for i, name := range names {
		if err := results[i].err; err != nil {
			failed[name] = true
			reason := err.Error()
			var se *mcp.StartError
			if errors.As(err, &se) {
				reason = se.Reason
			}
			fmt.Fprintf(out, "mcp server %s: probe failed: %s\n", render.SanitizeLine(name), render.SanitizeLine(redact.RedactString(reason)))
			continue
		}
		fmt.Fprintf(out, "mcp server %s: ok (%d tools)\n", render.SanitizeLine(name), len(results[i].list))
		for _, t := range results[i].list {
			offered = append(offered, t.FullName())
		}
	}
	sort.Strings(offered)
	return offered, failed, nil
}
