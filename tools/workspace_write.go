package tools

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/guildhall/guildhall/store"
)

// The file tools write on the host, outside the sandbox. A write into a
// git directory would be run by the operator's own git, unconfined: a
// core.fsmonitor or core.hooksPath in its config, or a hook under hooks/,
// runs at the next plain `git status` or commit. The sandbox mounts .git
// read-only for commands; the file tools refuse the same places, and a
// little more, since a path may name a git directory in more ways than
// ".git":
//
//   - any component that git itself treats as .git: ".git" in any case,
//     with the trailing dots and spaces and the "git~1" short name NTFS
//     accepts, and with the zero-width characters HFS+ ignores (the
//     spellings git refuses to check out), anywhere in the tree: the
//     workspace's own, a submodule's, one a command made;
//   - the workspace repository's git directory and common directory,
//     wherever ResolveGitLayout finds them (a gitdir: file or a commondir
//     pointing elsewhere in the workspace), including one such a pointer
//     names that does not exist yet;
//   - any directory that is a git directory by git's own test (HEAD with
//     objects/ and refs/, or with a commondir file), and any write that
//     would make one, so that a bare repository cannot be assembled file
//     by file either.
//
// The check is on the canonical path Resolve computed, and the write
// then reaches its folder through real directories only (openRealDir), so
// a folder swapped for a link into .git after the check is refused rather
// than followed. Reading stays allowed.

// reasonGitDir is the refusal of a write into a git directory.
const reasonGitDir = "the repository's git directory is not writable by file tools; git tools manage it"

// ResolveWrite is Resolve for a path a tool is about to create, replace or
// delete: it also refuses every path in or into a git directory, with
// permission_denied.
func (w *Workspace) ResolveWrite(given string) (string, error) {
	rel, err := w.Resolve(given)
	if err != nil {
		return "", err
	}
	if w.inGitDir(rel) {
		return "", pathErr(given, KindPermissionDenied, reasonGitDir)
	}
	return rel, nil
}

// inGitDir reports whether writing the canonical relative path rel would
// write in, or make, a git directory.
func (w *Workspace) inGitDir(rel string) bool {
	if rel == "." {
		return false
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if dotGitName(p) {
			return true
		}
	}
	for _, g := range store.GitDirs(w.canon) {
		r, err := filepath.Rel(w.canon, g)
		if err == nil && underFold(rel, filepath.ToSlash(r)) {
			return true
		}
	}
	// Each folder on the way, the workspace included.
	for i := len(parts) - 1; i >= 0; i-- {
		if w.makesGitDir(path.Join(parts[:i]...), rel) {
			return true
		}
	}
	return false
}

// underFold reports whether rel is dir or under it, ignoring case (a
// case-insensitive filesystem would).
func underFold(rel, dir string) bool {
	return strings.EqualFold(rel, dir) ||
		(len(rel) > len(dir) && rel[len(dir)] == '/' && strings.EqualFold(rel[:len(dir)], dir))
}

// makesGitDir reports whether dir is a git directory as git tests one
// (setup.c is_git_directory: HEAD, and objects/ and refs/ or a commondir),
// or would be one once rel is written.
func (w *Workspace) makesGitDir(dir, rel string) bool {
	has := func(name string, wantDir bool) bool {
		p := path.Join(dir, name)
		if rel == p || (wantDir && strings.HasPrefix(rel, p+"/")) {
			return true
		}
		fi, err := w.root.Lstat(p)
		if err != nil {
			return false
		}
		if wantDir {
			return fi.IsDir()
		}
		return !fi.IsDir()
	}
	if !has("HEAD", false) {
		return false
	}
	return has("commondir", false) || (has("objects", true) && has("refs", true))
}

// dotGitName reports whether a path component is, or on some filesystem
// stands for, ".git" (git's is_ntfs_dotgit and is_hfs_dotgit).
func dotGitName(part string) bool {
	if len(part) < 4 {
		return false
	}
	var b strings.Builder
	for _, r := range part {
		switch {
		case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
			continue // HFS+ ignores these
		}
		b.WriteRune(r)
	}
	s := b.String()
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i] // an NTFS stream name: .git::$INDEX_ALLOCATION
	}
	s = strings.TrimRight(s, ". ")
	return strings.EqualFold(s, ".git") || strings.EqualFold(s, "git~1")
}

// openRealDir opens the folder rel under root through real directories
// only: each component is looked at without following a link, opened, and
// checked to be the same directory, so a folder swapped for a symbolic
// link (one that os.Root would follow inside the root) is refused. create
// makes missing components.
func openRealDir(root *os.Root, rel string, create bool) (*os.Root, error) {
	cur, err := root.OpenRoot(".")
	if err != nil {
		return nil, err
	}
	if rel == "." || rel == "" {
		return cur, nil
	}
	for _, name := range strings.Split(rel, "/") {
		next, err := openRealChild(cur, name, create)
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// errChanged refuses a folder that is not a real directory (any more).
var errChanged = errors.New("a folder on the way is a symbolic link or changed during the call")

func openRealChild(parent *os.Root, name string, create bool) (*os.Root, error) {
	fi, err := parent.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := parent.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		fi, err = parent.Lstat(name)
	}
	switch {
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, &PathError{Kind: KindPermissionDenied, Reason: errChanged.Error()}
	case !fi.IsDir():
		return nil, &PathError{Kind: KindNotFound, Reason: reasonNotDir}
	}
	dir, err := parent.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	if now, err := dir.Stat("."); err != nil || !os.SameFile(fi, now) {
		dir.Close()
		return nil, &PathError{Kind: KindPermissionDenied, Reason: errChanged.Error()}
	}
	return dir, nil
}
