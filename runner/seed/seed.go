// Package seed embeds Guildhall's seed guild and the offline demo: a sample
// workspace with a failing test and the scripted conversation that fixes it.
package seed

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

//go:embed all:guild all:demo
var files embed.FS

func sub(dir string) fs.FS {
	// fs.Sub fails only for an invalid path; these are literals that the
	// embed directive above guarantees exist.
	f, _ := fs.Sub(files, dir)
	return f
}

// Guild is the seed guild folder (guild.json, prompts/, tools/).
func Guild() fs.FS { return sub("guild") }

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
