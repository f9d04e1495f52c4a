//go:build !linux

package trust

import "os"

// installNew links the finished file tmp at path unless path exists; the
// caller removes tmp. A reader in between sees two links and is refused,
// which on these systems is the price of not replacing a key.
func installNew(tmp, path string) error {
	return os.Link(tmp, path)
}
