package store

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the names a and b in the folder dirfd atomically.
func exchange(dirfd int, a, b string) error {
	err := unix.Renameat2(dirfd, a, dirfd, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errNoExchange
	}
	return err
}
