package trust

import "golang.org/x/sys/unix"

// installNew moves the finished file tmp to path unless path exists, in
// one step: a rename that refuses to replace, so no reader ever sees the
// key with a second name (a link, then an unlink, shows it hard-linked to
// the temporary file in between, which the key's check refuses).
func installNew(tmp, path string) error {
	return unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
}
