package tools

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
)

//go:embed manifests/*.json
var manifestFS embed.FS

// DefaultManifests returns the embedded default manifest of every built-in
// tool, keyed by name, including the tools the runner implements.
func DefaultManifests() (map[string]Manifest, error) {
	out := map[string]Manifest{}
	err := fs.WalkDir(manifestFS, "manifests", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		b, err := manifestFS.ReadFile(path)
		if err != nil {
			return err
		}
		var m Manifest
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("embedded manifest %s: %w", path, err)
		}
		out[m.Name] = m
		return nil
	})
	return out, err
}

// Registry maps tool names to implementations.
type Registry map[string]Tool

// Names lists the registered tools, sorted.
func (r Registry) Names() []string {
	return slices.Sorted(maps.Keys(r))
}

// Builtins returns every tool this package implements.
func Builtins() Registry {
	r := Registry{}
	for _, t := range builtinList() {
		r[t.Manifest().Name] = t
	}
	return r
}
