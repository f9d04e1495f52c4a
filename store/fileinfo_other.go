//go:build !unix

package store

import "io/fs"

// oNonblock is zero where FIFOs cannot be planted.
const oNonblock = 0

// linkCount is 1: hard links are not counted on this platform.
func linkCount(fs.FileInfo) uint64 { return 1 }
