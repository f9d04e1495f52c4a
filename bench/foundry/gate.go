package foundry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/tools/egress"
)

// Weakening kinds.
const (
	SubprocessTool      = "subprocess-tool"          // a role gains run_shell, typecheck or test
	WriteTool           = "write-tool"               // a role gains a tool that writes the workspace or the repository
	ReadOnlyGainsWrites = "read-only-gains-writes"   // a role that could not write now can (directly or through agent)
	ProjectDocsFraming  = "project-docs-framing"     // a role reading projectDocs no longer frames them as data
	InjectionClause     = "injection-clause-removed" // a prompt lost a line that resists injection
	SandboxLoosened     = "sandbox-loosened"
	EgressWidened       = "egress-widened"
	MCPTool             = "mcp-tool" // a role gains an MCP server's tools
)

var (
	subprocessTools = []string{"run_shell", "typecheck", "test"}
	writeTools      = []string{"write_file", "edit_file", "git_restore", "write_plan", "git_init", "git_commit", "git_branch", "git_set_base"}
	webTools        = []string{"fetch_url", "web_search"}
)

// Weakening is one change that weakens isolation or injection
// resistance. ID is stable, so an acknowledgement names it exactly.
type Weakening struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
	// Acknowledged is the reason the operator gave, "" when none.
	Acknowledged string `json:"acknowledged,omitempty"`
}

func weak(kind, subject, what, detail string) Weakening {
	return Weakening{ID: kind + ":" + subject + ":" + what, Kind: kind, Detail: detail}
}

// Weakenings lists what NEW weakens relative to OLD.
func Weakenings(old, new *Config) []Weakening {
	var out []Weakening
	guildWrites := false
	for _, r := range new.Guild.Roles {
		guildWrites = guildWrites || writes(r)
	}
	for _, name := range new.Guild.RoleNames() {
		nr, or := new.Guild.Roles[name], old.Guild.Roles[name]
		gained := nr.Tools
		if or != nil {
			gained = setDiff(nr.Tools, or.Tools)
		}
		readOnly := or != nil && !writes(or) && !(or.Grants("agent") && guildWrites)
		for _, t := range sorted(gained) {
			switch {
			case readOnly && (slices.Contains(writeTools, t) || slices.Contains(subprocessTools, t) || (t == "agent" && guildWrites) || isMCPGrant(t)):
				why := "can now write with " + t
				switch {
				case t == "agent":
					why = "can now delegate to roles that write, with agent"
				case isMCPGrant(t):
					why = "can now call the MCP tools " + t + ", which do whatever their server does"
				}
				out = append(out, weak(ReadOnlyGainsWrites, name, t, fmt.Sprintf("role %s held no write or command tool and %s", name, why)))
			case isMCPGrant(t):
				out = append(out, weak(MCPTool, name, t, fmt.Sprintf("role %s gains the MCP tools %s, which do whatever their server does", name, t)))
			case slices.Contains(subprocessTools, t):
				out = append(out, weak(SubprocessTool, name, t, fmt.Sprintf("role %s gains %s, which runs commands", name, t)))
			case slices.Contains(writeTools, t):
				out = append(out, weak(WriteTool, name, t, fmt.Sprintf("role %s gains %s, which writes", name, t)))
			case slices.Contains(webTools, t):
				out = append(out, weak(EgressWidened, name, t, fmt.Sprintf("role %s gains %s, which reaches the network", name, t)))
			}
		}
		if or == nil {
			continue
		}
		for _, c := range removedClauses(or.Prompt, nr.Prompt) {
			out = append(out, weak(InjectionClause, name, clauseKey(c), fmt.Sprintf("role %s's prompt no longer says: %s", name, c)))
		}
		if len(nr.ProjectDocs) > 0 && len(InjectionClauses(nr.Prompt)) == 0 && (len(InjectionClauses(or.Prompt)) > 0 || len(or.ProjectDocs) == 0) {
			out = append(out, weak(ProjectDocsFraming, name, "prompt", fmt.Sprintf("role %s reads projectDocs (%s) but its prompt no longer frames them as data, not instructions", name, strings.Join(nr.ProjectDocs, ", "))))
		}
	}
	return append(out, deploymentWeakenings(old.deployment(), new.deployment())...)
}

func deploymentWeakenings(o, n *runner.Deployment) []Weakening {
	var out []Weakening
	if om, nm := modeOf(o.Sandbox.Mode), modeOf(n.Sandbox.Mode); modeRank[nm] > modeRank[om] {
		out = append(out, weak(SandboxLoosened, "sandbox", "mode", fmt.Sprintf("sandbox.mode %s → %s", om, nm)))
	}
	for _, w := range setDiff(n.Sandbox.Writable, o.Sandbox.Writable) {
		out = append(out, weak(SandboxLoosened, "sandbox", "writable="+w, "sandbox.writable gains "+w))
	}
	for _, e := range setDiff(n.Executor.PassEnv, o.Executor.PassEnv) {
		out = append(out, weak(SandboxLoosened, "sandbox", "passEnv="+e, "executor.passEnv hands "+e+" to every command"))
	}
	if networkOf(o.Sandbox.Network) == "off" && networkOf(n.Sandbox.Network) != "off" {
		out = append(out, weak(EgressWidened, "sandbox", "network", "sandbox.network off → "+n.Sandbox.Network))
	}
	for _, a := range setDiff(n.Sandbox.Allow, o.Sandbox.Allow) {
		if covered(o.Sandbox.Allow, a) && networkOf(o.Sandbox.Network) != "off" {
			continue
		}
		out = append(out, weak(EgressWidened, "sandbox", "allow="+a, "sandbox.allow gains "+a))
	}
	if o.WebSearch.Provider == "" && n.WebSearch.Provider != "" {
		out = append(out, weak(EgressWidened, "webSearch", n.WebSearch.Provider, "webSearch sends queries to "+n.WebSearch.Provider))
	}
	return append(out, mcpWeakenings(o, n)...)
}

// covered reports whether an old allowlist already allowed host pattern
// p (a narrower pattern replacing a wider one is no widening).
func covered(old []string, p string) bool {
	pol, err := egress.ParsePolicy(old)
	if err != nil || strings.HasPrefix(p, "*.") {
		return false
	}
	host, port := p, 443
	if h, pt, ok := strings.Cut(p, ":"); ok {
		host = h
		fmt.Sscan(pt, &port)
	}
	ok, _ := pol.Allows(host, port)
	return ok
}

func clauseKey(c string) string {
	words := strings.Fields(strings.ToLower(c))
	if len(words) > 8 {
		words = words[:8]
	}
	return strings.Join(words, "-")
}

// writes reports whether a role can change anything: a write or command
// tool, or an MCP server's tools (which may do either).
func writes(r *runner.Role) bool {
	return grantsAny(r, writeTools) || grantsAny(r, subprocessTools) || len(r.MCPGrants()) > 0
}

// isMCPGrant reports whether a tool name grants MCP tools: server.tool or
// server.*.
func isMCPGrant(t string) bool { return strings.Contains(t, ".") }

func grantsAny(r *runner.Role, tools []string) bool {
	for _, t := range tools {
		if r.Grants(t) {
			return true
		}
	}
	return false
}

// Ack is the acknowledgement file: the weakenings the operator accepts,
// each with a reason.
type Ack struct {
	Acknowledged []struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
	} `json:"acknowledged"`
}

// AckFile is where the acknowledgements of a guild folder live: beside
// it, never inside it, so that a change to the guild (one the Foundry
// proposes) cannot acknowledge itself. The folder is made absolute and
// its links resolved first: the parent of "." or "./" taken as written is
// "." itself, and a folder named through a link to its own parent would
// hold the file it names.
func AckFile(guildDir string) (string, error) {
	dir, err := realDir(guildDir)
	if err != nil {
		return "", fmt.Errorf("guild %s: %w", guildDir, err)
	}
	if filepath.Dir(dir) == dir {
		return "", fmt.Errorf("guild %s is the root folder: its acknowledgements would have nowhere to live beside it", guildDir)
	}
	return filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".gate-ack.json"), nil
}

// realDir is dir absolute and clean with its links resolved; a folder that
// does not exist yet (a promotion's new target) is its resolved parent
// joined with its name.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		parent, perr := filepath.EvalSymlinks(filepath.Dir(abs))
		if perr != nil {
			return abs, nil
		}
		return filepath.Join(parent, filepath.Base(abs)), nil
	}
	return real, err
}

// ReadAck reads an acknowledgement file; a missing one acknowledges
// nothing.
func ReadAck(file string) (map[string]string, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var a Ack
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	out := map[string]string{}
	for i, e := range a.Acknowledged {
		if strings.TrimSpace(e.ID) == "" || strings.TrimSpace(e.Reason) == "" {
			return nil, fmt.Errorf("%s: acknowledged[%d] needs an id and a reason", file, i)
		}
		out[e.ID] = e.Reason
	}
	return out, nil
}

// Gate returns the weakenings with their acknowledgements filled in, and
// whether every one is acknowledged.
func Gate(old, new *Config, acks map[string]string) ([]Weakening, bool) {
	ws := Weakenings(old, new)
	ok := true
	for i := range ws {
		ws[i].Acknowledged = acks[ws[i].ID]
		ok = ok && ws[i].Acknowledged != ""
	}
	return ws, ok
}
