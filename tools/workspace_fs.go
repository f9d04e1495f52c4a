package tools

import (
	"fmt"
	"io/fs"
	"path"

	"github.com/guildhall/guildhall/internal/memfile"
)

// ReadFile reads the regular file at p (workspace-relative) through the
// same containment as the file tools: no link out of the workspace, no
// .orchestration, no FIFO or device. A file larger than limit bytes is
// refused rather than cut: configuration read in part would mean something
// else.
func (w *Workspace) ReadFile(p string, limit int64) ([]byte, error) {
	rel, err := w.Resolve(p)
	if err != nil {
		return nil, err
	}
	data, size, truncated, err := w.readCapped(p, rel, limit)
	if err != nil {
		return nil, err
	}
	if truncated {
		return nil, &PathError{Path: p, Kind: KindInvalidArguments, Reason: fmt.Sprintf("is %d bytes, more than the %d allowed", size, limit)}
	}
	return data, nil
}

// ConfigFS is the folder dir inside the workspace as a read-only fs.FS for
// a configuration loader (a guild): every read goes through ReadFile's
// containment and limit, and read, when not nil, sees each file read, so
// the caller can hash exactly what was loaded.
func (w *Workspace) ConfigFS(dir string, limit int64, read func(name string, data []byte)) fs.FS {
	return &configFS{w: w, dir: dir, limit: limit, read: read}
}

type configFS struct {
	w     *Workspace
	dir   string
	limit int64
	read  func(name string, data []byte)
}

// ReadFile implements fs.ReadFileFS.
func (c *configFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	full := path.Join(c.dir, name)
	data, err := c.w.ReadFile(full, c.limit)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if c.read != nil {
		c.read(full, data)
	}
	return data, nil
}

// Open implements fs.FS with the same reads, for callers that do not use
// fs.ReadFile.
func (c *configFS) Open(name string) (fs.File, error) {
	data, err := c.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return memfile.New(name, data), nil
}
