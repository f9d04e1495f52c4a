package tools

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkResolve: every file tool resolves its path first, link by link
// through the root: a plain nested path, one behind two links, and one
// whose tail does not exist yet (a file about to be written).
func BenchmarkResolve(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src/pkg/sub"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src/pkg/sub/main.go"), []byte("package main\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink("src/pkg", filepath.Join(dir, "pkg")); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink("sub/main.go", filepath.Join(dir, "src/pkg/main.go")); err != nil {
		b.Fatal(err)
	}
	w, err := OpenWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	for _, p := range []string{"src/pkg/sub/main.go", "pkg/main.go", "src/pkg/new/dir/file.go"} {
		b.Run(p, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := w.Resolve(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
