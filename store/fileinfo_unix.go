//go:build unix

package store

import (
	"io/fs"
	"syscall"
)

// oNonblock keeps an open of a FIFO planted where a file is expected from
// blocking.
const oNonblock = syscall.O_NONBLOCK

// linkCount is the number of names fi's file has (1 when unknown).
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
