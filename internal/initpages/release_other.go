//go:build !linux

package initpages

// Release does nothing where there is no /proc/self/smaps to tell clean
// mappings from modified ones.
func Release() int { return 0 }
