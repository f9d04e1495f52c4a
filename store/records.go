package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The records folders are created inside a workspace Guildhall does not
// trust: a cloned repository can commit .orchestration, or a file in it,
// as a symbolic link. Following one would write run records, and truncate
// the lock file, wherever it points, outside the workspace, before any
// model has run. So the folders must be real directories, and the files
// Guildhall opens in place (the locks, a run's log, the checkpoint's spare)
// are opened without following a link, and refused when another name links
// to the same file (a hard link can point outside the workspace too);
// records replaced by rename replace a link rather than write through it.

// openNoFollow is the flag that makes opening a symbolic link fail (ELOOP).
const openNoFollow = syscall.O_NOFOLLOW

// recordsDir creates dir if it is missing, and refuses it if it exists as
// anything but a directory: a symbolic link or a file.
func recordsDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", dir, err)
		}
		return recordsDir(dir) // check what is there now
	case err != nil:
		return fmt.Errorf("check %s: %w", dir, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(dir)
		return fmt.Errorf("%s is a symbolic link (to %q); Guildhall keeps its run records there and does not follow links out of the workspace: remove the link and try again", dir, target)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory; Guildhall keeps its run records there: move the file away and try again", dir)
	}
	return nil
}

// EnsureRecords creates .orchestration (and, with runs, its runs folder),
// refusing either when it is a symbolic link or a file.
func (w Workspace) EnsureRecords(runs bool) error {
	if err := recordsDir(w.Orchestration()); err != nil {
		return err
	}
	if runs {
		return recordsDir(w.Runs())
	}
	return nil
}

// openRecord opens a file under the records folders for locking or
// appending, refusing a symbolic link in its place.
func openRecord(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|openNoFollow, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link; Guildhall does not write through links in its records: remove it and try again", filepath.Clean(path))
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && linkCount(fi) > 1 {
		f.Close()
		return nil, &HardLinkError{Path: filepath.Clean(path), Links: linkCount(fi)}
	}
	return f, nil
}

// HardLinkError refuses a records file that other names link to: writing
// it would write them too, wherever they are.
type HardLinkError struct {
	Path  string
	Links uint64
}

func (e *HardLinkError) Error() string {
	return fmt.Sprintf("%s has %d hard links; Guildhall does not write a records file that other names share (one may lie outside the workspace): remove it and try again", e.Path, e.Links)
}
