// Package treesum fingerprints file trees for tests that must prove
// nothing outside a workspace changed: every entry's kind and mode, a
// link's target, a regular file's SHA-256. It is imported only by _test
// files.
package treesum

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
)

// Of returns the fingerprint of every entry under the roots, keyed by
// path. Links are not followed; a missing root is an error.
func Of(roots ...string) (map[string]string, error) {
	sums := map[string]string{}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				target, _ := os.Readlink(p)
				sums[p] = "link:" + target
			case fi.IsDir():
				sums[p] = "dir:" + fi.Mode().String()
			case !fi.Mode().IsRegular():
				sums[p] = fi.Mode().String()
			default:
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				s := sha256.Sum256(b)
				sums[p] = fi.Mode().String() + ":" + hex.EncodeToString(s[:])
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return sums, nil
}
