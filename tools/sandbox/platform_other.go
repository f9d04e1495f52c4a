//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

func inodeOf(os.FileInfo) string { return "?" }

func undumpable() error { return errors.New("the sandbox helper needs Linux") }

func killAllButMe() {}

func inSandboxNamespace() bool { return false }

func socketPair() (*os.File, *os.File, error) {
	return nil, nil, errors.New("the sandbox needs Linux")
}
