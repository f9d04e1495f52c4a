// Package seed embeds Guildhall's seed guild, its compact variant for small
// context windows, and the offline demo: a sample workspace with a failing
// test and the scripted conversation that fixes it.
package seed

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/guildhall/guildhall/internal/memfile"
)

//go:embed all:guild all:demo all:compact
var files embed.FS

func sub(dir string) fs.FS {
	// fs.Sub fails only for an invalid path; these are literals that the
	// embed directive above guarantees exist.
	f, _ := fs.Sub(files, dir)
	return f
}

// Guild is the seed guild folder (guild.json, prompts/, tools/).
func Guild() fs.FS { return sub("guild") }

// CompactGuild is the seed guild for small context windows: the seed guild
// with the roles compact/compact.json names given that file's prompt,
// tools and style-guide flag (shorter prompts, fewer tools). Every other
// file, role and label is the seed guild's, so the two cannot drift apart.
func CompactGuild() (fs.FS, error) {
	base := Guild()
	spec, err := files.ReadFile("compact/compact.json")
	if err != nil {
		return nil, fmt.Errorf("compact guild: %w", err)
	}
	var compact struct {
		Roles map[string]map[string]json.RawMessage `json:"roles"`
	}
	if err := json.Unmarshal(spec, &compact); err != nil {
		return nil, fmt.Errorf("compact guild: compact.json: %w", err)
	}
	raw, err := fs.ReadFile(base, "guild.json")
	if err != nil {
		return nil, fmt.Errorf("compact guild: %w", err)
	}
	var guild map[string]json.RawMessage
	var roles map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &guild); err != nil {
		return nil, fmt.Errorf("compact guild: guild.json: %w", err)
	}
	if err := json.Unmarshal(guild["roles"], &roles); err != nil {
		return nil, fmt.Errorf("compact guild: guild.json roles: %w", err)
	}
	over := map[string][]byte{}
	for name, fields := range compact.Roles {
		role, ok := roles[name]
		if !ok {
			return nil, fmt.Errorf("compact guild: compact.json changes role %q, which the seed guild does not have", name)
		}
		for k, v := range fields {
			role[k] = v
		}
		var prompt string
		if err := json.Unmarshal(fields["systemPrompt"], &prompt); err == nil && prompt != "" {
			b, err := files.ReadFile(path.Join("compact", prompt))
			if err != nil {
				return nil, fmt.Errorf("compact guild: role %q: %w", name, err)
			}
			over[prompt] = b
		}
	}
	if guild["roles"], err = json.Marshal(roles); err != nil {
		return nil, fmt.Errorf("compact guild: %w", err)
	}
	if over["guild.json"], err = json.MarshalIndent(guild, "", "  "); err != nil {
		return nil, fmt.Errorf("compact guild: %w", err)
	}
	return layered{over: over, base: base}, nil
}

// layered serves the files in over, and every other file from base.
type layered struct {
	over map[string][]byte
	base fs.FS
}

func (l layered) Open(name string) (fs.File, error) {
	if b, ok := l.over[name]; ok {
		return memfile.New(name, b), nil
	}
	return l.base.Open(name)
}

func (l layered) ReadFile(name string) ([]byte, error) {
	if b, ok := l.over[name]; ok {
		return bytes.Clone(b), nil
	}
	return fs.ReadFile(l.base, name)
}

// DemoWorkspace is the sample project the demo works on.
func DemoWorkspace() fs.FS { return sub("demo/workspace") }

// DemoScript is the scripted model's conversation for the demo.
func DemoScript() []byte {
	b, _ := files.ReadFile("demo/script.json")
	return b
}

// DemoTask is the task the demo submits.
func DemoTask() string {
	b, _ := files.ReadFile("demo/task.md")
	return strings.TrimSpace(string(b))
}

// CopyDemoWorkspace writes a fresh copy of the sample workspace into dst.
// Scripts (files starting with "#!") are made executable, since embedding
// does not keep file modes.
func CopyDemoWorkspace(dst string) error {
	src := DemoWorkspace()
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return fmt.Errorf("demo workspace %s: %w", p, err)
		}
		mode := os.FileMode(0o644)
		if bytes.HasPrefix(b, []byte("#!")) {
			mode = 0o755
		}
		return os.WriteFile(target, b, mode)
	})
}
