package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/mcp"
	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// Where a workspace may keep configuration of its own. The original system
// reads deployment/deployment.json; deployment.json beside the guild is
// Guildhall's shorter form. The first that exists is used.
var (
	workspaceGuildDir        = "guild"
	workspaceDeploymentFiles = []string{"deployment.json", "deployment/deployment.json"}
)

// maxConfigFile caps each configuration file read from a workspace.
const maxConfigFile = 1 << 20

// Found is the configuration a workspace supplies, loaded (never applied)
// through the workspace's containment.
type Found struct {
	// Guild is the workspace's guild/ folder, loaded; nil when it has
	// none or it failed to load (Problems says why).
	Guild *runner.Guild
	// DeploymentFile is the workspace-relative deployment file found ("" for
	// none), and Deployment the result of layering it over the base the
	// caller gave (nil when it failed).
	DeploymentFile string
	Deployment     *runner.Deployment
	// Files are the workspace-relative files read, sorted, and Hash is the
	// SHA-256 over their names and contents: what a decision is about.
	Files []string
	Hash  string
	// Problems are the files that could not be loaded: an invalid guild, a
	// link out of the workspace, a file too large.
	Problems []error
}

// Any reports whether the workspace supplies configuration at all.
func (f *Found) Any() bool { return len(f.Files) > 0 || len(f.Problems) > 0 }

// Usable reports whether everything the workspace supplies loaded.
func (f *Found) Usable() bool { return f.Any() && len(f.Problems) == 0 }

// Discover loads the configuration the workspace supplies: its guild/
// folder and its deployment file, layered over base (the operator's
// deployment; nil for the built-in defaults). Every file is read through
// ws's containment — a link out of the workspace, into .orchestration or to
// a FIFO is refused — and hashed. Nothing is applied: the caller decides,
// with the operator, whether to use it.
func Discover(ws *tools.Workspace, base *runner.Deployment) *Found {
	f := &Found{}
	read := map[string][]byte{}
	record := func(name string, data []byte) { read[name] = data }

	if exists(ws, workspaceGuildDir+"/guild.json") {
		// Rooted at the workspace, not at guild/: a style guide may be one
		// of the workspace's files, read through the same containment.
		fsys := ws.ConfigFS("", maxConfigFile, record)
		g, err := runner.LoadGuildIn(fsys, workspaceGuildDir, workspaceGuildDir)
		if err != nil {
			f.Problems = append(f.Problems, err)
		} else {
			f.Guild = g
		}
	}
	for _, name := range workspaceDeploymentFiles {
		if !exists(ws, name) {
			continue
		}
		f.DeploymentFile = name
		data, err := ws.ReadFile(name, maxConfigFile)
		if err != nil {
			f.Problems = append(f.Problems, fmt.Errorf("%s: %w", name, err))
			break
		}
		record(name, data)
		d, err := runner.ParseDeploymentOnto(base, name, data)
		if err != nil {
			f.Problems = append(f.Problems, err)
			break
		}
		// Its MCP servers are commands and endpoints the workspace chose.
		d.MarkWorkspaceServers(map[string]bool{name: true})
		f.Deployment = d
		break
	}
	f.Files, f.Hash = hashFiles(read)
	return f
}

// exists reports whether name is present in the workspace, as anything:
// a link that leads out is present (and then refused when read).
func exists(ws *tools.Workspace, name string) bool {
	_, err := ws.ReadFile(name, 0)
	var pe *tools.PathError
	return !(errors.As(err, &pe) && pe.Kind == tools.KindNotFound)
}

// hashFiles hashes names and contents in name order.
func hashFiles(files map[string][]byte) ([]string, string) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		fmt.Fprintf(h, "%s\x00%x\n", n, sum)
	}
	if len(names) == 0 {
		return nil, ""
	}
	return names, "sha256:" + hex.EncodeToString(h.Sum(nil))
}

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
	var out []Change
	if f.Deployment != nil {
		out = append(out, deploymentChanges(f.DeploymentFile, base, f.Deployment)...)
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
		out = append(out, Change{Text: text, Warn: weakening(p)})
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
// isolation.
func weakening(path string) bool {
	return path == "model.apiBase" || path == "model.provider" || strings.HasPrefix(path, "sandbox.") || path == "executor.passEnv"
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
