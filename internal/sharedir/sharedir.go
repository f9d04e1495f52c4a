// Package sharedir finds what is kept beside the repository rather than in
// it, in ../shared from the module root: the llama.cpp build and its tiny
// models, the XSS corpus. The tests that use them look it up one way, from
// their working directory. It is imported only by test code.
package sharedir

import (
	"errors"
	"os"
	"path/filepath"
)

// Path is elem joined under the shared folder beside the module that holds
// the working directory.
func Path(elem ...string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{filepath.Dir(root), "shared"}, elem...)...), nil
}

// moduleRoot is the folder of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
