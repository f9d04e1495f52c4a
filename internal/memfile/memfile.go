// Package memfile is an fs.File over bytes already in memory: what an
// fs.FS returns for a file it holds itself, or one it read whole (through
// containment checks) before handing it out.
package memfile

import (
	"bytes"
	"io/fs"
	"path"
	"time"
)

// New returns a read-only file named by the last element of name, holding
// data. data is not copied.
func New(name string, data []byte) fs.File {
	return &file{Reader: bytes.NewReader(data), info: info{path.Base(name), int64(len(data))}}
}

type file struct {
	*bytes.Reader
	info info
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }

type info struct {
	name string
	size int64
}

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return i.size }
func (i info) Mode() fs.FileMode  { return 0o444 }
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return false }
func (i info) Sys() any           { return nil }
