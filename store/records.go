package store

import (
	"fmt"
	"os"
	"path/filepath"
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
// How every record is reached is described in safeio.go.

// EnsureRecords creates .orchestration (and, with runs, its runs folder),
// refusing either when it is a symbolic link or anything but a folder.
func (w Workspace) EnsureRecords(runs bool) error {
	dir := w.Orchestration()
	if runs {
		dir = w.Runs()
	}
	d, err := openRecordsDir(dir, true)
	if err != nil {
		return err
	}
	d.close()
	return nil
}

// openRecord opens a file under the records folders for locking or
// appending: no folder on the way and not the file itself may be a link,
// and the file must be a regular file that no other name shares.
func openRecord(path string, flag int, perm os.FileMode) (*os.File, error) {
	d, err := openRecordsDir(filepath.Dir(path), false)
	if err != nil {
		return nil, err
	}
	defer d.close()
	return d.openShared(filepath.Base(path), flag, perm)
}

// openShared is openFile for a file written in place, refusing one that
// other names share.
func (d *dirHandle) openShared(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := d.openFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && linkCount(fi) > 1 {
		f.Close()
		return nil, &HardLinkError{Path: d.join(name), Links: linkCount(fi)}
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
