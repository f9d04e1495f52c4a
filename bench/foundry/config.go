// Package foundry improves a guild on a benchmark suite and refuses
// changes that weaken isolation. Diff compares two guild configurations
// role by role; Gate lists the weakenings among those changes (a role
// gaining command, write or MCP tools, a read-only role gaining writes, the
// projectDocs framing or an injection-resistance clause removed, the
// sandbox or an MCP server's sandbox loosened, egress widened) and which of them the operator has
// acknowledged; Loop runs the original design's optimisation cycle with an
// optimiser model, each cycle a run record of its own.
package foundry

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/seed"
)

// Config is a guild with the deployment beside it: what a change is
// judged on.
type Config struct {
	// Name is how messages name it (a folder, or "seed").
	Name  string
	Guild *runner.Guild
	// Files are the guild folder's files by slash path (guild.json,
	// prompts/*.md, tools/*.json).
	Files map[string]string
	// Deployment is the deployment.json beside the guild folder, or nil.
	Deployment *runner.Deployment
}

// maxGuildFile caps each guild file read.
const maxGuildFile = 1 << 20

// Load reads a guild folder ("seed" for the embedded seed guild) and the
// deployment.json beside it, if any: in the folder holding the guild
// folder (a workspace's or ~/.config/guildhall's layout), or inside a
// folder that holds guild/ itself.
func Load(dir string) (*Config, error) {
	if dir == "seed" {
		return fromFS("seed", seed.Guild(), nil)
	}
	if fi, err := os.Stat(filepath.Join(dir, "guild", "guild.json")); err == nil && fi.Mode().IsRegular() {
		dir = filepath.Join(dir, "guild")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("guild %s: %w", dir, err)
	}
	defer root.Close()
	var dep *runner.Deployment
	// Absolute first: the parent of "." taken as written is "." itself.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("guild %s: %w", dir, err)
	}
	depFile := filepath.Join(filepath.Dir(abs), "deployment.json")
	if data, err := os.ReadFile(depFile); err == nil {
		if dep, err = runner.ParseDeploymentOnto(nil, depFile, data); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return fromFS(dir, root.FS(), dep)
}

func fromFS(name string, fsys fs.FS, dep *runner.Deployment) (*Config, error) {
	g, err := runner.LoadGuild(fsys, name)
	if err != nil {
		return nil, err
	}
	g.Path = name
	files, err := guildFiles(fsys)
	if err != nil {
		return nil, fmt.Errorf("guild %s: %w", name, err)
	}
	return &Config{Name: name, Guild: g, Files: files, Deployment: dep}, nil
}

// EditablePath reports whether a guild change may write p: guild.json,
// a prompt or a tool manifest, nothing else (never a file outside the
// folder, never an acknowledgement).
func EditablePath(p string) bool {
	if !fs.ValidPath(p) || strings.Contains(p, "\\") {
		return false
	}
	switch dir, base := path.Split(p); {
	case p == "guild.json":
		return true
	case dir == "prompts/" && strings.HasSuffix(base, ".md") && len(base) > 3:
		return true
	case dir == "tools/" && strings.HasSuffix(base, ".json") && len(base) > 5:
		return true
	}
	return false
}

// guildFiles reads the editable files of a guild folder.
func guildFiles(fsys fs.FS) (map[string]string, error) {
	out := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !EditablePath(p) {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Size() > maxGuildFile {
			return fmt.Errorf("%s is larger than %d bytes", p, maxGuildFile)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		out[p] = string(b)
		return nil
	})
	return out, err
}

// WriteFiles writes a guild's files into dir (created), each inside it.
func WriteFiles(dir string, files map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if !EditablePath(p) {
			return fmt.Errorf("%q is not a guild file (guild.json, prompts/*.md or tools/*.json)", p)
		}
		if d := path.Dir(p); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if err := root.WriteFile(p, []byte(files[p]), 0o644); err != nil {
			return err
		}
	}
	return nil
}
