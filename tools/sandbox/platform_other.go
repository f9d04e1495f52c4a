//go:build !linux

package sandbox

import (
	"errors"
	"os"

	"github.com/guildhall/guildhall/tools/shell"
)

func inodeOf(os.FileInfo) string { return "?" }

func undumpable() error { return errors.New("the sandbox helper needs Linux") }

func killAllButMe() {}

func inSandboxNamespace() bool { return false }

func inSandboxAsInit() bool { return false }

func takeChannel() (*os.File, error) { return nil, errors.New("the sandbox helper needs Linux") }

func reapOrphans(*shell.Reaper) func() { return func() {} }

func socketPair() (*os.File, *os.File, error) {
	return nil, nil, errors.New("the sandbox needs Linux")
}
