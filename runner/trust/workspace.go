package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/tools"
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
	// caller gave (nil when it failed), with every loosening of the
	// sandbox it asked for refused (Refused says which).
	DeploymentFile string
	Deployment     *runner.Deployment
	// Refused are the settings of the deployment file that would have
	// loosened the operator's sandbox and were not applied.
	Refused []Change
	// Pins are, per MCP server the deployment file declares, the
	// workspace files its command line names, pinned with the rest.
	Pins []ServerPins
	// Files are the workspace-relative files read, and the programs and
	// folders the servers' command lines name, sorted; Hash is the SHA-256
	// over their names and contents: what a decision is about.
	Files []string
	Hash  string
	// Problems are the files that could not be loaded: an invalid guild, a
	// link out of the workspace, a file too large, a server program that
	// cannot be pinned.
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
// a FIFO is refused — and hashed, together with the workspace files the
// deployment's MCP servers run. Nothing is applied: the caller decides,
// with the operator, whether to use it.
func Discover(ws *tools.Workspace, base *runner.Deployment) *Found {
	f := &Found{}
	sums := map[string][32]byte{}
	files := map[string]bool{}
	record := func(name string, data []byte) {
		sums[name] = sha256.Sum256(data)
		files[name] = true
	}

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
		f.Refused = confine(base, d, name)
		pins, err := pinServers(ws, d, name)
		if err != nil {
			f.Problems = append(f.Problems, err)
			break
		}
		for _, p := range pins {
			for k, v := range p.sums {
				sums[k] = v
			}
			for _, name := range p.Files {
				files[name] = true
			}
		}
		f.Pins = pins
		f.Deployment = d
		break
	}
	f.Files, f.Hash = hashSums(files, sums)
	return f
}

// exists reports whether name is present in the workspace, as anything:
// a link that leads out is present (and then refused when read).
func exists(ws *tools.Workspace, name string) bool {
	_, err := ws.ReadFile(name, 0)
	var pe *tools.PathError
	return !(errors.As(err, &pe) && pe.Kind == tools.KindNotFound)
}

// hashSums hashes the entries' names and digests in name order, and lists
// the files. A configuration file's entry is its name, so a workspace
// without MCP servers keeps the hash it had before programs were pinned.
func hashSums(files map[string]bool, sums map[string][32]byte) ([]string, string) {
	if len(sums) == 0 {
		return nil, ""
	}
	names := slices.Sorted(maps.Keys(files))
	return names, "sha256:" + digestOf(sums)
}

// digestOf hashes named digests in name order, hex-encoded.
func digestOf(sums map[string][32]byte) string {
	keys := slices.Sorted(maps.Keys(sums))
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%x\n", k, sums[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}
