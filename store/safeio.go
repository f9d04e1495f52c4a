package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A workspace Guildhall does not trust holds its records. A cloned
// repository, an unpacked archive or a sandboxed command can put anything
// where a record or a records folder belongs: a symbolic link to /dev/zero
// (reading it exhausts memory), to /dev/tty (reading it takes the operator's
// keystrokes), to a folder outside the workspace (writing there writes
// outside); a FIFO (opening it blocks for ever); a device node; a file of
// many gigabytes.
//
// So every record is reached through a directory descriptor: the workspace
// is opened as the operator named it (links and all: it is the operator's
// choice), and every folder from .orchestration down is opened with openat
// and O_NOFOLLOW|O_DIRECTORY, one component at a time. The record itself is
// looked at with fstatat before it is opened (a device or FIFO is never
// opened), opened O_NOFOLLOW|O_NONBLOCK|O_NOCTTY, checked again with fstat,
// and read up to a cap that depends on the record. Writes create, rename,
// exchange and remove relative to the same descriptor, so a folder swapped
// for a link between two steps is never followed.

// Caps on what one record may hold. Each is far above what a real run
// writes, so that only a record Guildhall did not write can reach it, and
// low enough that reading one never threatens the process's memory.
const (
	// MaxMetaBytes: meta.json holds the task as typed (the API takes 1 MiB
	// bodies, a command line less), the result card and the error detail.
	MaxMetaBytes = 16 << 20
	// MaxStateBytes: the checkpoint holds every open role's history; each
	// is kept within its context window (a 256k-token window is about
	// 1 MiB of text, 2 MiB as escaped JSON), and a deep stack of eight
	// full windows with reasoning is under 32 MiB.
	MaxStateBytes = 128 << 20
	// MaxSettingsBytes: settings.json holds two short words.
	MaxSettingsBytes = 64 << 10
	// MaxQueueBytes: queue.json keeps at most 200 settled items plus the
	// waiting ones, each a task of at most an API body (1 MiB) in practice.
	MaxQueueBytes = 64 << 20
	// MaxSummaryBytes: summary.txt is one line of at most 140 characters.
	MaxSummaryBytes = 64 << 10
	// MaxPlanBytes: plan.md as write_plan writes it (it refuses more).
	MaxPlanBytes = 1 << 20
	// MaxSmallRecordBytes: the pause marker, a lock's holder, the thread
	// summary cache: a few hundred bytes each.
	MaxSmallRecordBytes = 64 << 10
	// MaxLogLine: one log.jsonl line. The largest events are a tool's
	// result (every tool caps its output at a few MiB; an MCP message at
	// 4 MiB) and a model reply (capped at 16 MiB), so 64 MiB is four
	// times the largest; a longer line is not one Guildhall wrote.
	MaxLogLine = 64 << 20
)

// RecordError is a record, or a folder on the way to one, that is not what
// Guildhall keeps there: a symbolic link, a FIFO, a device, a file larger
// than the record may be. It was not read, and the record it stands for is
// foreign: Guildhall did not write it.
type RecordError struct {
	Path    string // the host path, for the operator
	Problem string // a clause: "is a symbolic link (to \"/dev/zero\")"
	Folder  bool   // a folder on the way, not the record itself
}

func (e *RecordError) Error() string {
	if e.Folder {
		return fmt.Sprintf("%s %s; Guildhall keeps its run records there and does not follow links out of the workspace: remove it and try again", e.Path, e.Problem)
	}
	return fmt.Sprintf("%s %s: not a record Guildhall wrote, so it is neither read nor written through", e.Path, e.Problem)
}

// IsRecordError reports whether err is, or wraps, a *RecordError.
func IsRecordError(err error) bool {
	var re *RecordError
	return errors.As(err, &re)
}

// dirHandle is a records folder opened without following a link.
type dirHandle struct {
	fd   int
	path string
}

func (d *dirHandle) close() { _ = unix.Close(d.fd) }

func (d *dirHandle) join(name string) string { return filepath.Join(d.path, name) }

// splitRecordsPath splits a folder into the part trusted as given (the
// workspace) and the components from the last .orchestration on, which are
// walked without following links. A folder outside any .orchestration (the
// operator's state) is trusted whole.
func splitRecordsPath(dir string) (anchor string, parts []string) {
	dir = filepath.Clean(dir)
	all := strings.Split(dir, string(filepath.Separator))
	for i := len(all) - 1; i >= 0; i-- {
		if all[i] != OrchestrationDir {
			continue
		}
		anchor = strings.Join(all[:i], string(filepath.Separator))
		if anchor == "" {
			anchor = "."
			if filepath.IsAbs(dir) {
				anchor = string(filepath.Separator)
			}
		}
		return anchor, all[i:]
	}
	return dir, nil
}

const dirOpenFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// openRecordsDir opens the folder dir (see splitRecordsPath); create makes
// missing folders from .orchestration down.
func openRecordsDir(dir string, create bool) (*dirHandle, error) {
	anchor, parts := splitRecordsPath(dir)
	fd, err := unix.Open(anchor, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: anchor, Err: err}
	}
	d := &dirHandle{fd: fd, path: anchor}
	for _, name := range parts {
		next, err := d.openDir(name, create)
		d.close()
		if err != nil {
			return nil, err
		}
		d = next
	}
	return d, nil
}

// openDir opens the folder name inside d without following a link.
func (d *dirHandle) openDir(name string, create bool) (*dirHandle, error) {
	path := d.join(name)
	fd, err := unix.Openat(d.fd, name, dirOpenFlags, 0)
	if errors.Is(err, unix.ENOENT) && create {
		if err := unix.Mkdirat(d.fd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, &fs.PathError{Op: "create", Path: path, Err: err}
		}
		fd, err = unix.Openat(d.fd, name, dirOpenFlags, 0)
	}
	if err == nil {
		return &dirHandle{fd: fd, path: path}, nil
	}
	if errors.Is(err, unix.ENOENT) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	var st unix.Stat_t
	if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && uint32(st.Mode)&unix.S_IFMT != unix.S_IFDIR {
		problem := kindProblem(d, name, uint32(st.Mode))
		if problem == "" {
			problem = "is not a directory"
		}
		return nil, &RecordError{Path: path, Problem: problem, Folder: true}
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: err}
}

// oddEntry says what name in d is when it is not a directory or regular
// file ("" when it is one, or is gone).
func (d *dirHandle) oddEntry(name string) string {
	var st unix.Stat_t
	if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return ""
	}
	return kindProblem(d, name, uint32(st.Mode))
}

// kindProblem describes a file of the given mode that is no record.
func kindProblem(d *dirHandle, name string, mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFDIR:
		return ""
	case unix.S_IFLNK:
		target := make([]byte, 512)
		if n, err := unix.Readlinkat(d.fd, name, target); err == nil {
			return fmt.Sprintf("is a symbolic link (to %q)", target[:n])
		}
		return "is a symbolic link"
	case unix.S_IFIFO:
		return "is a FIFO"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "is a device"
	case unix.S_IFSOCK:
		return "is a socket"
	}
	return "is not a regular file"
}

// openFile opens the regular file name in d with flag (os.O_* flags),
// never following a link and never opening anything else.
func (d *dirHandle) openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	path := d.join(name)
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == nil && uint32(st.Mode)&unix.S_IFMT == unix.S_IFDIR:
		return nil, &RecordError{Path: path, Problem: "is a directory"}
	case err == nil && uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG:
		return nil, &RecordError{Path: path, Problem: kindProblem(d, name, uint32(st.Mode))}
	case errors.Is(err, unix.ENOENT) && flag&os.O_CREATE == 0:
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	case err != nil && !errors.Is(err, unix.ENOENT):
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	fd, err := unix.Openat(d.fd, name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if problem := d.oddEntry(name); problem != "" {
			return nil, &RecordError{Path: path, Problem: problem}
		}
		if errors.Is(err, unix.ENOENT) {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &RecordError{Path: path, Problem: "is not a regular file"}
	}
	return f, nil
}

// read reads the record name in d, refusing one larger than limit bytes.
func (d *dirHandle) read(name string, limit int64) ([]byte, error) {
	f, err := d.openFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return nil, tooLarge(d.join(name), fi.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", d.join(name), err)
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(d.join(name), int64(len(b)), limit)
	}
	return b, nil
}

func tooLarge(path string, size, limit int64) error {
	return &RecordError{Path: path, Problem: fmt.Sprintf("is %s, more than the %s this record may hold", byteSize(size), byteSize(limit))}
}

// byteSize is n in the largest binary unit that keeps it whole, roughly.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// writeAtomic replaces name in d with data: a temp file beside it, renamed
// over it; durable adds the fsyncs of the file and the folder.
func (d *dirHandle) writeAtomic(name string, data []byte, perm os.FileMode, durable bool) error {
	path := d.join(name)
	tmp, f, err := d.createTemp(name, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fail := func(op string, err error) error {
		f.Close()
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return fmt.Errorf("%s %s: %w", op, path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail("write", err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail("write", err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			return fail("sync", err)
		}
	}
	if err := f.Close(); err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if durable {
		return d.sync()
	}
	return nil
}

// createTemp creates a new file ".name.<random>.tmp" in d.
func (d *dirHandle) createTemp(name string, perm os.FileMode) (string, *os.File, error) {
	for i := 0; ; i++ {
		var r [6]byte
		_, _ = rand.Read(r[:])
		tmp := "." + name + "." + hex.EncodeToString(r[:]) + ".tmp"
		fd, err := unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()|0o600))
		if err == nil {
			return tmp, os.NewFile(uintptr(fd), d.join(tmp)), nil
		}
		if !errors.Is(err, unix.EEXIST) || i > 8 {
			return "", nil, err
		}
	}
}

// rename renames old to new inside d.
func (d *dirHandle) rename(old, new string) error {
	if err := unix.Renameat(d.fd, old, d.fd, new); err != nil {
		return &os.LinkError{Op: "rename", Old: d.join(old), New: d.join(new), Err: err}
	}
	return nil
}

// sync fsyncs the folder.
func (d *dirHandle) sync() error {
	if err := unix.Fsync(d.fd); err != nil {
		return fmt.Errorf("sync dir %s: %w", d.path, err)
	}
	return nil
}

// remove removes name from d; a missing name is not an error.
func (d *dirHandle) remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

// removeRecord removes the record at path, the folders from
// .orchestration down opened without following a link. A missing record,
// or a missing folder on the way, is not an error.
func removeRecord(path string) error {
	d, err := openRecordsDir(filepath.Dir(path), false)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.close()
	return d.remove(filepath.Base(path))
}

// ReadRecord reads the record at path: the folders from .orchestration
// down are opened without following a link, the file must be a regular
// file (a link, FIFO or device is never opened), and one larger than limit
// bytes is refused. Those refusals are *RecordError; a missing record is
// fs.ErrNotExist.
func ReadRecord(path string, limit int64) ([]byte, error) {
	d, err := openRecordsDir(filepath.Dir(path), false)
	if err != nil {
		return nil, err
	}
	defer d.close()
	return d.read(filepath.Base(path), limit)
}

// OpenRecord opens the record at path for reading, with ReadRecord's
// refusals but no size cap: for the log, which is read as a stream of
// capped lines (ScanLog).
func OpenRecord(path string) (*os.File, error) {
	d, err := openRecordsDir(filepath.Dir(path), false)
	if err != nil {
		return nil, err
	}
	defer d.close()
	return d.openFile(filepath.Base(path), os.O_RDONLY, 0)
}
