package store

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const excludeEntry = "/.orchestration/"

// excludeMax bounds the exclude file the step reads and rewrites.
const excludeMax = 1 << 20

// GitExcludeSkipped reports that .orchestration/ was not added to the git
// exclude file, and why. It is not a failure: nothing was changed, the run
// can go on, and the caller shows Error() to the operator as a one-line note.
type GitExcludeSkipped struct {
	Reason string
}

func (e *GitExcludeSkipped) Error() string {
	return ".orchestration/ was not added to the git exclude file: " + e.Reason
}

// SkippedGitExclude reports whether err, from EnsureGitExclude, is a
// *GitExcludeSkipped: a note for the operator, not a failure.
func SkippedGitExclude(err error) bool {
	var s *GitExcludeSkipped
	return errors.As(err, &s)
}

func skipped(format string, a ...any) error {
	return &GitExcludeSkipped{Reason: fmt.Sprintf(format, a...)}
}

// EnsureGitExclude adds .orchestration/ to the exclude file of the
// repository at the root of the workspace (info/exclude in its common
// directory, which is where a linked worktree's excludes live too). It is
// idempotent and does nothing when the workspace has no .git.
//
// It never touches a file outside the workspace and its repository's
// checked git directories, and never writes through a link. The git
// directory is found by ResolveGitLayout (which accepts one outside only
// for this workspace's linked worktree or submodule); the file is then
// read and replaced (a temporary file renamed over it) through an os.Root
// opened on the common directory. When the repository is refused, or info
// or info/exclude is a symbolic link, a hard link, a FIFO, a directory or
// larger than 1 MiB, nothing is written and a *GitExcludeSkipped says why.
func (w Workspace) EnsureGitExclude() error {
	layout, err := ResolveGitLayout(w.Dir)
	var refused *GitDirError
	switch {
	case errors.Is(err, ErrNoRepository):
		return nil
	case errors.As(err, &refused):
		if refused.Outside {
			return skipped("%s; the git tools refuse this repository", refused.Error())
		}
		return skipped("%s", refused.Error())
	case err != nil:
		return fmt.Errorf("git exclude: %w", err)
	}
	if layout.Linked != "" {
		return ensureLinkedExclude(layout.CommonDir)
	}
	ws, err := os.OpenRoot(layout.Workspace)
	if err != nil {
		return fmt.Errorf("git exclude: %w", err)
	}
	defer ws.Close()
	rel, err := filepath.Rel(layout.Workspace, layout.CommonDir)
	if err != nil {
		return fmt.Errorf("git exclude: %w", err)
	}
	git, err := ws.OpenRoot(rel)
	if err != nil {
		return skipped("the git directory cannot be opened inside the workspace")
	}
	defer git.Close()
	return ensureExclude(git)
}

// ensureLinkedExclude adds the entry to the exclude file of a linked
// worktree's or a submodule's common directory, outside the workspace,
// which ResolveGitLayout checked. The directory is opened as a root of its
// own; one replaced between the check and the open is left alone.
func ensureLinkedExclude(common string) error {
	fi, err := os.Lstat(common)
	if err != nil || !fi.IsDir() {
		return skipped("the repository's common git directory changed while it was opened")
	}
	git, err := os.OpenRoot(common)
	if err != nil {
		return skipped("the repository's common git directory cannot be opened")
	}
	defer git.Close()
	if now, err := git.Stat("."); err != nil || !os.SameFile(fi, now) {
		return skipped("the repository's common git directory changed while it was opened")
	}
	return ensureExclude(git)
}

// ensureExclude adds the entry to info/exclude under the git root.
func ensureExclude(git *os.Root) error {
	info, err := openDirNoFollow(git, "info")
	if err != nil {
		return err
	}
	defer info.Close()
	existing, perm, err := readExclude(info)
	if err != nil {
		return err
	}
	if hasExcludeEntry(existing) {
		return nil
	}
	var buf bytes.Buffer
	buf.Write(existing)
	if len(existing) > 0 && existing[len(existing)-1] != '\n' {
		buf.WriteByte('\n')
	}
	buf.WriteString("# Guildhall run records\n" + excludeEntry + "\n")
	return replaceInRoot(info, "exclude", buf.Bytes(), perm)
}

// openDirNoFollow opens (creating it if missing) the directory name under
// parent, refusing a symbolic link or anything but a directory.
func openDirNoFollow(parent *os.Root, name string) (*os.Root, error) {
	fi, err := parent.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		if err := parent.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("git exclude: create %s: %w", name, err)
		}
		fi, err = parent.Lstat(name)
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("git exclude: inspect %s: %w", name, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, skipped("the git directory's %s is a symbolic link, which is left alone", name)
	case !fi.IsDir():
		return nil, skipped("the git directory's %s is not a directory", name)
	}
	dir, err := parent.OpenRoot(name)
	if err != nil {
		return nil, fmt.Errorf("git exclude: open %s: %w", name, err)
	}
	// A directory swapped for a link between the look and the open would
	// have been followed (inside the root); it is refused instead.
	if now, err := dir.Stat("."); err != nil || !os.SameFile(fi, now) {
		dir.Close()
		return nil, skipped("the git directory's %s changed while it was opened", name)
	}
	return dir, nil
}

// readExclude reads info/exclude, which must be missing or a regular file
// with one name, at most excludeMax bytes. perm is the mode to keep.
func readExclude(info *os.Root) ([]byte, fs.FileMode, error) {
	fi, err := info.Lstat("exclude")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0o644, nil
	case err != nil:
		return nil, 0, fmt.Errorf("git exclude: inspect info/exclude: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, 0, skipped("info/exclude is a symbolic link, which is left alone")
	case !fi.Mode().IsRegular():
		return nil, 0, skipped("info/exclude is not a regular file")
	case linkCount(fi) > 1:
		return nil, 0, skipped("info/exclude has %d hard links; rewriting it would change another file too", linkCount(fi))
	case fi.Size() > excludeMax:
		return nil, 0, skipped("info/exclude is larger than %d bytes", excludeMax)
	}
	f, err := info.OpenFile("exclude", os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("git exclude: open info/exclude: %w", err)
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		return nil, 0, skipped("info/exclude changed while it was opened")
	}
	b, err := io.ReadAll(io.LimitReader(f, excludeMax+1))
	if err != nil {
		return nil, 0, fmt.Errorf("git exclude: read info/exclude: %w", err)
	}
	if len(b) > excludeMax {
		return nil, 0, skipped("info/exclude is larger than %d bytes", excludeMax)
	}
	return b, fi.Mode().Perm(), nil
}

// hasExcludeEntry reports whether an exclude file already hides
// .orchestration.
func hasExcludeEntry(b []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, excludeMax+1)
	for sc.Scan() {
		switch strings.TrimSpace(sc.Text()) {
		case excludeEntry, ".orchestration/", ".orchestration", "/.orchestration":
			return true
		}
	}
	return false
}

// replaceInRoot replaces name in dir with data: a new file beside it
// (O_EXCL, so never through a link), fsynced, renamed over the name (which
// replaces a link rather than writing through it), then the directory
// fsynced.
func replaceInRoot(dir *os.Root, name string, data []byte, perm fs.FileMode) error {
	tmp := "." + name + ".guildhall-" + rand.Text()[:12] + ".tmp"
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("git exclude: create temporary file: %w", err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(perm)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = dir.Rename(tmp, name)
	}
	if werr != nil {
		_ = dir.Remove(tmp)
		return fmt.Errorf("git exclude: write info/%s: %w", name, werr)
	}
	if d, err := dir.Open("."); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
