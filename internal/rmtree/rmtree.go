// Package rmtree removes folder trees that a command inside them may have
// locked: a sandboxed build or a benchmark run can take the write bit off
// a folder (chmod 000), which makes os.RemoveAll fail on what is inside.
package rmtree

import (
	"io/fs"
	"os"
	"path/filepath"
)

// RemoveAll removes dir like os.RemoveAll; where that fails it gives every
// folder under dir back its owner's permissions and tries once more. It
// follows no link: filepath.WalkDir does not, and chmod is applied only
// to folders WalkDir found as folders.
func RemoveAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
