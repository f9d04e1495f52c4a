package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
)

// A run's edits can be reverted (guildhall revert) with or without git,
// because the file tools hand the exact bytes a file held to Env.Undo
// before they first change it, and the bytes they wrote after: the tool
// knows the file it is about to replace, the runner keeps the copies
// (runner/undo.go, store/undo.go). What commands change is not seen here;
// docs/operations.md says what a revert does about it.
//
// A revert writes into the workspace from the host, so it goes through
// the same containment as the file tools: the path must resolve to itself
// (no link on the way, now), not into .orchestration or a git directory,
// and its folder is reached through real directories only.

// Undo keeps a run's earlier contents (implemented by the runner).
type Undo interface {
	// Wants reports whether rel's content before this write is still
	// wanted (it is not, once kept), and the most bytes that are kept.
	Wants(rel string) (limit int64, ok bool)
	// Keep records rel as it was before tool first wrote it.
	Keep(rel, tool string, p Prior)
	// Wrote records what a write left in rel.
	Wrote(rel string, data []byte)
}

// Prior is a file as it was before a write.
type Prior struct {
	Exists bool
	// Data is the content; nil when it was not read (Unread says why).
	Data   []byte
	Size   int64
	Perm   fs.FileMode
	Unread string
	// MadeDirs is the topmost folder of rel that does not exist yet (the
	// write makes it), "" when rel's folder exists.
	MadeDirs string
}

// keepPrior hands rel's content to env.Undo before tool's write, the
// first time only.
func (env *Env) keepPrior(tool, rel string) {
	if env.Undo == nil {
		return
	}
	limit, ok := env.Undo.Wants(rel)
	if !ok {
		return
	}
	env.Undo.Keep(rel, tool, env.Workspace.prior(rel, limit))
}

// wrote tells env.Undo what a write left.
func (env *Env) wrote(rel string, data []byte) {
	if env.Undo != nil {
		env.Undo.Wrote(rel, data)
	}
}

// prior reads rel, a canonical path, before a write.
func (w *Workspace) prior(rel string, limit int64) Prior {
	fi, err := w.root.Lstat(rel)
	if err != nil {
		return Prior{MadeDirs: w.missingDirs(rel)}
	}
	p := Prior{Exists: true, Size: fi.Size(), Perm: fi.Mode().Perm()}
	if !fi.Mode().IsRegular() {
		p.Unread = "not a regular file"
		return p
	}
	data, size, truncated, err := w.readCapped(rel, rel, limit)
	switch {
	case err != nil:
		p.Unread = "could not be read: " + wrapPathErr(rel, err).Reason
	case truncated:
		p.Size, p.Unread = size, "larger than the copy a run keeps of a file"
	default:
		p.Data = data
		if p.Data == nil {
			p.Data = []byte{}
		}
	}
	return p
}

// missingDirs is the topmost folder of rel that does not exist.
func (w *Workspace) missingDirs(rel string) string {
	top := ""
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if _, err := w.root.Lstat(d); err == nil {
			break
		}
		top = d
	}
	return top
}

// State is a file as a revert finds it now.
type State struct {
	Exists bool
	// Regular is false for a folder, a link or a device in its place.
	Regular bool
	// Sum is the hex SHA-256 of the content; "" when it was not read
	// (larger than hashMax).
	Sum  string
	Size int64
	Perm fs.FileMode
	// Data is the content when it is at most the limit asked for.
	Data []byte
}

// hashMax bounds what Current reads to hash a file: a command can leave a
// sparse file of terabytes where a run's file was.
const hashMax = 256 << 20

// Current reads the file at p, a canonical path a run's file tool wrote,
// as a revert needs it: whether it is there, its hash, and its content up
// to limit bytes. A path that no longer resolves to itself (a link on the
// way) or into .orchestration or a git directory is an error.
func (w *Workspace) Current(p string, limit int64) (State, error) {
	if err := w.revertPath(p); err != nil {
		return State{}, err
	}
	fi, err := w.root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, nil
	}
	if err != nil {
		return State{}, wrapPathErr(p, err)
	}
	st := State{Exists: true, Size: fi.Size(), Perm: fi.Mode().Perm(), Regular: fi.Mode().IsRegular()}
	if !st.Regular {
		return st, nil
	}
	f, _, err := w.openRegular(p, p)
	if err != nil {
		return State{}, err
	}
	defer f.Close()
	h := sha256.New()
	var keep capture
	keep.limit = limit
	n, err := io.Copy(io.MultiWriter(h, &keep), io.LimitReader(f, hashMax+1))
	if err != nil {
		return State{}, wrapPathErr(p, err)
	}
	if n <= hashMax {
		st.Sum = hex.EncodeToString(h.Sum(nil))
	}
	if !keep.over {
		st.Data = keep.buf
		if st.Data == nil {
			st.Data = []byte{}
		}
	}
	return st, nil
}

// capture keeps what is written up to limit bytes.
type capture struct {
	buf   []byte
	limit int64
	over  bool
}

func (c *capture) Write(p []byte) (int, error) {
	if !c.over && int64(len(c.buf)+len(p)) <= c.limit {
		c.buf = append(c.buf, p...)
	} else {
		c.over, c.buf = true, nil
	}
	return len(p), nil
}

// revertPath checks that p may be written by a revert: a clean relative
// path that resolves to itself, outside .orchestration and git
// directories.
func (w *Workspace) revertPath(p string) error {
	if p == "" || path.Clean(p) != p || path.IsAbs(p) || p == "." || strings.HasPrefix(p, "../") {
		return pathErr(p, KindInvalidArguments, "is not a clean path inside the workspace")
	}
	rel, err := w.ResolveWrite(p)
	if err != nil {
		return err
	}
	if rel != p {
		return pathErr(p, KindPermissionDenied, "leads elsewhere now (a symbolic link on the way): not followed")
	}
	return nil
}

// Restore puts data back at p with the permission bits perm, as a revert
// does: through the file tools' containment (revertPath), replacing what
// is there atomically. A folder in the file's place is refused; missing
// folders are made.
func (w *Workspace) Restore(p string, data []byte, perm fs.FileMode) error {
	if err := w.revertPath(p); err != nil {
		return err
	}
	dir, base := path.Split(p)
	parent, err := openRealDir(w.root, path.Clean(dir), true)
	if err != nil {
		return wrapPathErr(p, err)
	}
	defer parent.Close()
	return writeAtomicMode(parent, p, base, data, perm&0o777)
}

// RemoveCreated deletes the file at p, which a run created, and then the
// folders up to madeDirs that the run's write made, if they are empty. Only
// a regular file is removed.
func (w *Workspace) RemoveCreated(p, madeDirs string) error {
	if err := w.revertPath(p); err != nil {
		return err
	}
	dir, base := path.Split(p)
	parent, err := openRealDir(w.root, path.Clean(dir), false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return wrapPathErr(p, err)
	}
	fi, err := parent.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		parent.Close()
		return nil
	case err != nil:
		parent.Close()
		return wrapPathErr(p, err)
	case !fi.Mode().IsRegular():
		parent.Close()
		return pathErr(p, KindInvalidArguments, reasonNotRegular+": not removed")
	}
	err = parent.Remove(base)
	parent.Close()
	if err != nil {
		return wrapPathErr(p, err)
	}
	if madeDirs == "" || !strings.HasPrefix(p, madeDirs+"/") {
		return nil
	}
	for d := path.Dir(p); ; d = path.Dir(d) {
		if w.revertPath(d) != nil || w.root.Remove(d) != nil || d == madeDirs {
			return nil // not empty (or gone): the rest stays
		}
	}
}
