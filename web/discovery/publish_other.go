//go:build !unix

package discovery

import (
	"errors"
	"fmt"
)

// Discovery files need openat without following links, which this
// platform's build does not provide; the console works without them.
func publish(loc Location, name string, data []byte) error {
	return fmt.Errorf("discovery: %w on this platform", errors.ErrUnsupported)
}

func remove(loc Location, name string, rec Record) error { return nil }

func read(loc Location, name string) ([]byte, error) { return nil, ErrNotFound }

func names(loc Location) ([]string, error) { return nil, nil }

func alive(pid int) bool { return false }
