package tools

import (
	"context"
	"encoding/json"
	"io/fs"
	"sort"
)

// listMaxEntries caps list_directory's answer.
const listMaxEntries = 1000

// listDirectory is list_directory {path?}: the entries of one directory,
// directories first, then by name. Symlinks are listed as symlinks (their
// targets are not shown or followed); .orchestration is hidden.
type listDirectory struct{}

func (listDirectory) Manifest() Manifest { return manifestOf("list_directory") }

type dirEntry struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size *int64 `json:"size,omitempty"`
}

func (listDirectory) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a dirArgs
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	given := a.dir()
	rel, err := env.Workspace.Resolve(given)
	if err != nil {
		return pathFail(given, err)
	}
	// A directory is checked for before it is opened: opening a FIFO
	// would block.
	fi, err := env.Workspace.root.Lstat(rel)
	if err != nil {
		return pathFail(given, err)
	}
	if !fi.IsDir() {
		return pathFail(given, pathErr(given, KindInvalidArguments, reasonNotDir))
	}
	ents, err := fs.ReadDir(env.Workspace.root.FS(), rel)
	if err != nil {
		return pathFail(given, err)
	}
	out := make([]dirEntry, 0, min(len(ents), listMaxEntries))
	for _, d := range ents {
		if rel == "." && isBookkeeping(d.Name()) {
			continue
		}
		e := dirEntry{Name: d.Name(), Type: entryType(d.Type())}
		if e.Type == "file" {
			if fi, err := d.Info(); err == nil {
				size := fi.Size()
				e.Size = &size
			}
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].Type == "dir") != (out[j].Type == "dir") {
			return out[i].Type == "dir"
		}
		return out[i].Name < out[j].Name
	})
	total := len(out)
	truncated := total > listMaxEntries
	if truncated {
		out = out[:listMaxEntries]
	}
	return OK(map[string]any{"path": given, "entries": out, "total": total, "truncated": truncated})
}

func entryType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}
