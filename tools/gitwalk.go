package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/guildhall/guildhall/store"
)

// gitTreeMaxEntries bounds the entries checkGitTree looks at.
const gitTreeMaxEntries = 1_000_000

// gitAlternatesMax bounds the alternates file read.
const gitAlternatesMax = 64 << 10

// checkGitTree walks the repository's git directory and common directory
// for anything git could follow out of the workspace (and, for a linked
// worktree or submodule, out of its checked git directories), and refuses
// the repository if it finds one:
//
//   - a symbolic link that resolves outside, or nowhere (git would create
//     its target: COMMIT_EDITMSG and reflogs are opened through links).
//     Links that resolve inside are followed and their targets checked
//     too;
//   - a regular file outside objects/ with more than one name: git writes
//     reflogs and COMMIT_EDITMSG in place, which would change the other
//     names' file. Objects are immutable and hard-linked by local clones;
//   - a FIFO or a device, which git could block on or read through;
//   - objects/info/alternates naming any other object store, which git would
//     read and freshen.
//
// Sockets are allowed: they cannot be opened, and the fsmonitor daemon keeps
// one there. The walk does not follow links while listing; each link is
// resolved on its own.
//
// The common directory's hooks/ is not walked: with core.hooksPath pinned to
// /dev/null (gitHardening) git never looks there, and an existing repository
// is reinitialised with --template= (gitInitRepo), so nothing is copied into
// it. Hooks linked to shared scripts elsewhere are common and harmless here.
func checkGitTree(ctx context.Context, l store.GitLayout) error {
	w := &gitTreeWalk{ctx: ctx, layout: l, objects: filepath.Join(l.CommonDir, "objects"),
		hooks: filepath.Join(l.CommonDir, "hooks"), seen: map[string]bool{}}
	w.push(l.CommonDir)
	w.push(l.GitDir)
	for len(w.stack) > 0 {
		d := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		if err := w.dir(d); err != nil {
			return err
		}
	}
	return checkAlternates(l)
}

type gitTreeWalk struct {
	ctx     context.Context
	layout  store.GitLayout
	objects string
	hooks   string // not walked (see checkGitTree)
	seen    map[string]bool
	stack   []string
	entries int
}

func (w *gitTreeWalk) push(dir string) {
	if !w.seen[dir] {
		w.seen[dir] = true
		w.stack = append(w.stack, dir)
	}
}

// rel names p for a message, never as a host path: relative to the
// workspace, or to a git directory outside it (gitPlaceName).
func (w *gitTreeWalk) rel(p string) string { return gitPlaceName(w.layout, p) }

// dir checks one directory's entries, in batches.
func (w *gitTreeWalk) dir(d string) error {
	f, err := os.Open(d)
	if err != nil {
		return refusal("%s cannot be read, so the repository cannot be checked", w.rel(d))
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(1024)
		for _, e := range ents {
			if err := w.entry(filepath.Join(d, e.Name()), e.Type()); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(ents) == 0) {
			return nil
		}
		if err != nil {
			return refusal("%s cannot be read, so the repository cannot be checked", w.rel(d))
		}
	}
}

func (w *gitTreeWalk) entry(p string, typ fs.FileMode) error {
	w.entries++
	if w.entries%4096 == 0 && w.ctx.Err() != nil {
		return &gitError{Kind: KindError, Msg: "cancelled"}
	}
	if w.entries > gitTreeMaxEntries {
		return refusal("the git directory holds more than %d entries, too many to check (`git gc` packs loose objects)", gitTreeMaxEntries)
	}
	switch {
	case p == w.hooks:
		return nil
	case typ.IsDir():
		w.push(p)
		return nil
	case typ&fs.ModeSymlink != 0:
		return w.link(p)
	case typ.IsRegular():
		return w.file(p, nil)
	}
	return w.special(p, typ)
}

// link checks a symbolic link's final target.
func (w *gitTreeWalk) link(p string) error {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return refusal("%s is a symbolic link that leads nowhere (dangling, or a loop); git could create its target wherever it points", w.rel(p))
	}
	if !w.layout.Holds(target) {
		return refusal("%s is a symbolic link to a place outside the workspace; git would read or write through it. %s", w.rel(p), gitOutsideAdvice)
	}
	fi, err := os.Lstat(target)
	switch {
	case err != nil:
		return refusal("%s is a symbolic link whose target cannot be inspected", w.rel(p))
	case fi.IsDir():
		w.push(target)
		return nil
	case fi.Mode().IsRegular():
		return w.file(target, fi)
	}
	return w.special(p, fi.Mode().Type())
}

// file checks a regular file's link count (outside objects/).
func (w *gitTreeWalk) file(p string, fi fs.FileInfo) error {
	if p == w.objects || strings.HasPrefix(p, w.objects+string(filepath.Separator)) {
		return nil
	}
	if fi == nil {
		var err error
		if fi, err = os.Lstat(p); err != nil {
			return refusal("%s cannot be inspected, so the repository cannot be checked", w.rel(p))
		}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return refusal("%s has %d hard links; git writes some files in place (reflogs, COMMIT_EDITMSG), which would change the file behind the other names too", w.rel(p), st.Nlink)
	}
	return nil
}

// special refuses FIFOs and devices, and allows sockets.
func (w *gitTreeWalk) special(p string, typ fs.FileMode) error {
	switch {
	case typ&fs.ModeSocket != 0:
		return nil
	case typ&fs.ModeNamedPipe != 0:
		return refusal("%s is a FIFO; git could block on it", w.rel(p))
	case typ&fs.ModeDevice != 0:
		return refusal("%s is a device; git would read or write the device through it", w.rel(p))
	}
	return refusal("%s is not a regular file, directory or symbolic link", w.rel(p))
}

// checkAlternates refuses an object store that borrows from others.
func checkAlternates(l store.GitLayout) error {
	p := filepath.Join(l.CommonDir, "objects", "info", "alternates")
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return refusal("objects/info/alternates cannot be read, so the repository cannot be checked")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, gitAlternatesMax+1))
	if err != nil || len(b) > gitAlternatesMax {
		return refusal("objects/info/alternates cannot be read whole, so the repository cannot be checked")
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, gitAlternatesMax+1)
	for sc.Scan() {
		// Git skips exactly these lines; anything else names a store.
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			return refusal("the repository borrows objects from another object store (objects/info/alternates); git would read and touch that store, which may be outside the workspace. `git repack -a -d` and removing the file make the repository self-contained")
		}
	}
	return nil
}
