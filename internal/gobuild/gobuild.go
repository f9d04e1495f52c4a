// Package gobuild builds a Go program once per test process for the tests
// that run it where only a copy in a folder of their own is seen (a
// sandbox's /tmp is its own). It is imported only by test code.
package gobuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Program is one program to build: its package and the name of its copies.
type Program struct {
	pkg, name string
	once      sync.Once
	built     string
	err       error
}

// New is the program of package pkg (an import path), copied as name.
func New(pkg, name string) *Program { return &Program{pkg: pkg, name: name} }

// path is where the program is built, one per test process.
func (p *Program) path() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("guildhall-%s-%d", p.name, os.Getpid()))
}

// CopyTo builds the program (once, statically: the sandbox may show no
// libc of the host's) and copies it into dir, returning the copy's path.
func (p *Program) CopyTo(t testing.TB, dir string) string {
	t.Helper()
	p.once.Do(func() {
		out := p.path()
		cmd := exec.Command("go", "build", "-o", out, p.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			p.err = fmt.Errorf("build %s: %v\n%s", p.pkg, err, b)
			return
		}
		p.built = out
	})
	if p.err != nil {
		t.Fatal(p.err)
	}
	b, err := os.ReadFile(p.built)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, p.name)
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Remove removes the build; a TestMain calls it after the tests.
func (p *Program) Remove() { _ = os.Remove(p.path()) }
