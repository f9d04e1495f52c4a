package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/mcp"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/tools/egress"
)

// mcpState is a run's MCP servers: the manager, and which role's work
// the servers are doing now (for the attribution of their events).
type mcpState struct {
	m      *mcp.Manager
	mu     sync.Mutex
	caller *Frame
}

// openMCP prepares the run's MCP servers; nothing starts until a role
// granted one of their tools first calls the model.
func (r *Run) openMCP() {
	d := r.opts.Deployment
	if len(d.MCPServers) == 0 {
		return
	}
	st := &mcpState{}
	st.m = mcp.New(mcp.Options{
		Servers: d.MCPServers, Sandbox: r.sb, Env: tools.SubprocessEnv(d.Executor.PassEnv), Egress: d.EgressPolicy(),
		OnState: r.mcpStateEvent, OnEgress: r.mcpEgressEvent,
	})
	r.mcp = st
}

// closeMCP stops the run's servers, before the sandbox closes.
func (r *Run) closeMCP() {
	if r.mcp != nil {
		r.mcp.m.Close()
	}
}

// dropStaleMCP stops the servers whose sandbox a tool call outdated (a
// git init made the workspace's .git, which their mounts do not protect).
func (r *Run) dropStaleMCP() {
	if r.mcp != nil {
		r.mcp.m.DropStale()
	}
}

// stopConfinedMCP stops the servers that run in a sandbox, before a
// git_init removes the .git placeholder their mounts rely on.
func (r *Run) stopConfinedMCP() {
	if r.mcp != nil {
		r.mcp.m.StopConfined()
	}
}

// setMCPCaller records whose work the servers do from now on.
func (r *Run) setMCPCaller(f *Frame) {
	r.mcp.mu.Lock()
	r.mcp.caller = f
	r.mcp.mu.Unlock()
}

func (r *Run) mcpCaller() (role, roleID string) {
	r.mcp.mu.Lock()
	defer r.mcp.mu.Unlock()
	if f := r.mcp.caller; f != nil {
		return f.Role, f.RoleID
	}
	return "", ""
}

// mcpStateEvent logs a server's change of state: the banner every view
// can show. A ready server's event names the granted tools it does not
// offer.
func (r *Run) mcpStateEvent(s mcp.State) {
	role, roleID := r.mcpCaller()
	p := event.MCPServerPayload{Server: s.Server, State: s.State, Message: s.Message, Tools: s.Tools, Skipped: s.Skipped, Role: role, RoleID: roleID}
	if s.State == mcp.StateReady {
		p.Missing = r.mcpMissing(s.Server, s.Offered)
	}
	r.emit(event.MCPServer, p)
}

// mcpMissing lists the guild's grants of server's tools that it does not
// offer.
func (r *Run) mcpMissing(server string, list []string) []string {
	offered := map[string]bool{}
	for _, t := range list {
		offered[t] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, role := range r.opts.Guild.Roles {
		for _, g := range role.MCPGrants() {
			s, tool, _ := parseMCPName(g)
			if s == server && tool != mcpWildcard && !offered[g] && !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	sort.Strings(out)
	return out
}

// mcpEgressEvent logs a network decision made for a server.
func (r *Run) mcpEgressEvent(_ string, d egress.Decision) {
	role, roleID := r.mcpCaller()
	r.emitEgress(d, role, roleID)
}

// mcpToolSpecs are the MCP tools f's role was granted, as the model is
// offered them, starting their servers when needed. A server that cannot
// start offers nothing (its event says why); its tools then answer with
// the reason when called.
func (r *Run) mcpToolSpecs(ctx context.Context, f *Frame) []provider.ToolSpec {
	role := r.opts.Guild.Roles[f.Role]
	if r.mcp == nil || role == nil {
		return nil
	}
	servers := role.MCPServersGranted()
	if len(servers) == 0 {
		return nil
	}
	r.setMCPCaller(f)
	defer r.setMCPCaller(nil)
	var specs []provider.ToolSpec
	for _, server := range servers {
		if !r.mcp.m.Declared(server) {
			continue
		}
		list, err := r.mcp.m.Tools(ctx, server)
		if err != nil {
			continue
		}
		for _, t := range list {
			if role.GrantsMCP(t.FullName()) {
				specs = append(specs, provider.ToolSpec{Name: t.FullName(), Description: t.Description, Parameters: t.Parameters})
			}
		}
	}
	return specs
}

// invokeMCP runs a call of an MCP tool (server.tool): the grant, the
// server, the arguments against the server's schema, then the call within
// the tool timeout.
func (r *Run) invokeMCP(ctx context.Context, f *Frame, name, args string) tools.Result {
	server, tool, _ := parseMCPName(name)
	if r.mcp == nil || !r.mcp.m.Declared(server) {
		r.emit(event.UnknownTool, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Tool: name, Message: "no MCP server of that name is declared"})
		return tools.Fail("unknown_tool", fmt.Sprintf("there is no tool named %q; use only the tools you were given", name))
	}
	if role := r.opts.Guild.Roles[f.Role]; role == nil || !role.GrantsMCP(name) {
		r.emit(event.InvalidToolCall, event.FailurePayload{Role: f.Role, RoleID: f.RoleID, Tool: name, Message: "role is not granted this tool"})
		return tools.Fail("invalid_tool_call", fmt.Sprintf("your role may not call %q; use only the tools you were given", name))
	}
	r.setMCPCaller(f)
	defer r.setMCPCaller(nil)
	list, err := r.mcp.m.Tools(ctx, server)
	if err != nil {
		return tools.Fail(tools.KindUnavailable, err.Error())
	}
	schema := json.RawMessage(`{"type":"object"}`)
	for _, t := range list {
		if t.Name == tool {
			schema = t.Parameters
		}
	}
	// A schema the validator cannot compile (a draft it does not know)
	// leaves all but the shape of the arguments to the server.
	s, err := compileSchema(schema)
	if err != nil {
		s, _ = compileSchema(json.RawMessage(`{"type":"object"}`))
	}
	validated, msg := validateArgs(s, args)
	if msg != "" {
		return tools.Fail(tools.KindInvalidArguments, msg)
	}
	ceiling := time.Duration(r.opts.Deployment.Executor.DefaultToolTimeoutSeconds) * time.Second
	return r.mcp.m.Call(ctx, server, tool, validated, ceiling)
}
