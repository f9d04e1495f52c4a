package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// GitLayout is where the repository at the root of a workspace keeps its
// files. Every path is canonical (absolute, symbolic links resolved). GitDir
// and CommonDir lie strictly inside Workspace, except for a linked worktree
// or a submodule checkout (Linked), whose git directories lie outside and
// were checked to really be that (gitlinked.go).
type GitLayout struct {
	Workspace string // the canonical workspace, the repository's work tree
	GitDir    string // the per-worktree git directory: <ws>/.git or a .git file's gitdir
	CommonDir string // where objects, refs and config live; GitDir unless a commondir file names another
	// Linked is how a git directory outside the workspace belongs to it:
	// LinkedWorktree or LinkedSubmodule; "" when both lie inside.
	Linked string
}

// The layouts whose git directories may lie outside the workspace.
const (
	LinkedWorktree  = "worktree"  // git worktree add: <repo>/.git/worktrees/<name>
	LinkedSubmodule = "submodule" // a submodule checkout: <super>/.git/modules/<name>
)

// OutsideDirs are the layout's git directories that lie outside the
// workspace, outermost first, without one inside another (a worktree's git
// directory is inside its common directory): what a sandbox must show a
// git command besides the workspace. Nil when both are inside.
func (l GitLayout) OutsideDirs() []string {
	var out []string
	for _, d := range []string{l.CommonDir, l.GitDir} {
		if d == "" || within(l.Workspace, d) {
			continue
		}
		if len(out) > 0 && (out[0] == d || within(out[0], d)) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// Holds reports whether the clean absolute path p lies in the workspace or
// in one of the layout's git directories: the places git may read and
// write for this repository.
func (l GitLayout) Holds(p string) bool {
	if within(l.Workspace, p) {
		return true
	}
	for _, d := range l.OutsideDirs() {
		if p == d || within(d, p) {
			return true
		}
	}
	return false
}

// ErrNoRepository reports a workspace without a .git entry.
var ErrNoRepository = errors.New("the workspace is not a git repository (it has no .git)")

// GitDirError is a repository the platform will not work with: its git
// directory (or the common directory a commondir file names) is outside the
// workspace and is not a linked worktree's or a submodule's that belongs to
// it, or .git is malformed. Reason never holds a host path and may be shown
// to the model; Target, when set, is the host path the repository leads to,
// for the operator.
type GitDirError struct {
	Outside bool   // the repository's files lie (partly) outside the workspace
	Reason  string // what is wrong, as a clause: ".git is a symbolic link to ..."
	Target  string // the host path it leads to, if known

	// missing is the canonical path, inside the workspace, of a git
	// directory a pointer names that does not exist (yet): git would use
	// it once it does.
	missing string
	exists  bool // Target is an existing directory (canonicalGitDir)
}

func (e *GitDirError) Error() string {
	msg := e.Reason
	if e.Target != "" {
		msg += " (" + e.Target + ")"
	}
	return msg
}

// Bounds on the small files that describe a layout. Git itself refuses a
// .git file over 1 MiB; a path never needs more than PATH_MAX.
const gitPointerMax = 8 << 10

// ResolveGitLayout finds the git directory of the repository rooted at the
// workspace dir, following a `.git` symbolic link, a `.git` file's
// `gitdir:` line and a `commondir` file the way git does. The pointer files
// in the workspace are read through an os.Root on it. A git directory
// outside the workspace is accepted only behind a `.git` file, and only when
// it proves to be this workspace's linked worktree or submodule checkout
// (resolveLinked: a few small files of it are read, nothing is written);
// every other way out is refused, and is only resolved (symbolic links
// read), never opened.
//
// It returns ErrNoRepository when there is no .git, and a *GitDirError for a
// repository it refuses.
func ResolveGitLayout(dir string) (GitLayout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return GitLayout{}, fmt.Errorf("workspace %s: %w", dir, err)
	}
	ws, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return GitLayout{}, fmt.Errorf("workspace %s: %w", dir, err)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return GitLayout{}, fmt.Errorf("workspace %s: %w", dir, err)
	}
	defer root.Close()

	gitDir, err := resolveDotGit(root, ws)
	var out *outsideGitDir
	if errors.As(err, &out) {
		return resolveLinked(ws, out.dir)
	}
	if err != nil {
		return GitLayout{}, err
	}
	common, err := resolveCommonDir(root, ws, gitDir)
	if err != nil {
		return GitLayout{}, err
	}
	return GitLayout{Workspace: ws, GitDir: gitDir, CommonDir: common}, nil
}

// resolveDotGit returns the canonical git directory <ws>/.git leads to.
func resolveDotGit(root *os.Root, ws string) (string, error) {
	dotGit := filepath.Join(ws, ".git")
	fi, err := root.Lstat(".git")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", ErrNoRepository
	case err == nil && fi.Mode().IsRegular() && fi.Size() == 0:
		// An empty file holds no repository: it is the placeholder the
		// sandbox binds where there was no .git (tools/sandbox/gitguard.go).
		return "", ErrNoRepository
	case err != nil:
		return "", fmt.Errorf("inspect .git: %w", err)
	}
	name := ".git"
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(dotGit)
		if err != nil {
			e := &GitDirError{Reason: ".git is a symbolic link that leads nowhere (dangling, or a loop)"}
			if link, lerr := os.Readlink(dotGit); lerr == nil {
				if !filepath.IsAbs(link) {
					link = filepath.Join(ws, link)
				}
				if m := evalPartial(link); within(ws, m) {
					e.missing = m
				}
			}
			return "", e
		}
		if target == ws {
			return "", &GitDirError{Reason: ".git is a symbolic link to the workspace itself"}
		}
		if !within(ws, target) {
			return "", &GitDirError{Outside: true, Reason: ".git is a symbolic link to a place outside the workspace", Target: target}
		}
		rel, _ := filepath.Rel(ws, target)
		if fi, err = root.Lstat(rel); err != nil {
			return "", fmt.Errorf("inspect .git: %w", err)
		}
		name = rel
	}
	switch {
	case fi.IsDir():
		return filepath.Join(ws, name), nil
	case fi.Mode().IsRegular():
		return gitfileTarget(root, ws, name)
	default:
		return "", &GitDirError{Reason: ".git is neither a directory nor a gitdir file"}
	}
}

// gitfileTarget reads a `.git` file ("gitdir: <path>") as git does: the
// prefix is exact, trailing CR and LF are dropped, and a relative path is
// relative to the workspace.
func gitfileTarget(root *os.Root, ws, name string) (string, error) {
	b, err := readPointer(root, name)
	if err != nil {
		return "", &GitDirError{Reason: "the .git file cannot be read: " + err.Error()}
	}
	line, ok := bytes.CutPrefix(b, []byte("gitdir: "))
	line = bytes.TrimRight(line, "\r\n")
	if !ok || len(line) == 0 || bytes.IndexByte(line, 0) >= 0 {
		return "", &GitDirError{Reason: `the .git file is not a gitdir file (one line "gitdir: <path>")`}
	}
	target := string(line)
	if !filepath.IsAbs(target) {
		// Joined without cleaning: ".." is resolved after the links before
		// it, as the kernel and git do.
		target = ws + string(filepath.Separator) + target
	}
	dir, err := canonicalGitDir(ws, target, "the .git file's gitdir")
	var refused *GitDirError
	if errors.As(err, &refused) && refused.Outside && refused.exists {
		return "", &outsideGitDir{dir: refused.Target}
	}
	return dir, err
}

// outsideGitDir is a .git file's gitdir that resolved to an existing
// directory outside the workspace: resolveLinked decides whether it is
// accepted.
type outsideGitDir struct{ dir string }

func (e *outsideGitDir) Error() string { return "the .git file's gitdir is outside the workspace" }

// resolveCommonDir applies gitDir's commondir file, if any.
func resolveCommonDir(root *os.Root, ws, gitDir string) (string, error) {
	rel, _ := filepath.Rel(ws, gitDir)
	name := filepath.Join(rel, "commondir")
	if _, err := root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return gitDir, nil
	}
	// Git follows a commondir that is a symbolic link; it is resolved first,
	// so that one leading out is refused by name, never read.
	if target, err := filepath.EvalSymlinks(filepath.Join(ws, name)); err == nil && !within(ws, target) {
		return "", &GitDirError{Outside: true, Reason: "the git directory's commondir file is a symbolic link to a place outside the workspace", Target: target}
	}
	b, err := readPointer(root, name)
	if err != nil {
		return "", &GitDirError{Reason: "the git directory's commondir file cannot be read: " + err.Error()}
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) == 0 || bytes.IndexByte(b, 0) >= 0 {
		return "", &GitDirError{Reason: "the git directory's commondir file does not hold a path"}
	}
	common := string(b)
	if !filepath.IsAbs(common) {
		common = gitDir + string(filepath.Separator) + common
	}
	return canonicalGitDir(ws, common, "the git directory's commondir")
}

// canonicalGitDir resolves p (filepath.EvalSymlinks, which applies ".."
// after the links before it) and requires an existing directory strictly
// inside ws. what names the pointer in messages.
func canonicalGitDir(ws, p, what string) (string, error) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		if lexical := filepath.Clean(p); !within(ws, lexical) {
			return "", &GitDirError{Outside: true, Reason: what + " is outside the workspace", Target: lexical}
		}
		e := &GitDirError{Reason: what + " names a directory that does not exist"}
		if m := evalPartial(p); within(ws, m) {
			e.missing = m
		}
		return "", e
	}
	if target == ws {
		return "", &GitDirError{Reason: what + " is the workspace itself"}
	}
	if !within(ws, target) {
		fi, err := os.Stat(target)
		return "", &GitDirError{Outside: true, Reason: what + " is outside the workspace", Target: target, exists: err == nil && fi.IsDir()}
	}
	fi, err := os.Lstat(target)
	if err != nil || !fi.IsDir() {
		return "", &GitDirError{Reason: what + " is not a directory"}
	}
	return target, nil
}

// readPointer reads a small regular file through root, without blocking on
// a FIFO and without leaving the root.
func readPointer(root *os.Root, name string) ([]byte, error) {
	return readSmallFile(root, name, gitPointerMax, "it cannot be opened inside the workspace", fmt.Sprintf("%d bytes", gitPointerMax))
}

// readSmallFile reads name through root: a regular file (a FIFO is opened
// without blocking, then refused) of at most limit bytes, which limitText
// says. Each error completes a sentence about the file, starting "it";
// cannotOpen is the one for a file that cannot be opened.
func readSmallFile(root *os.Root, name string, limit int, cannotOpen, limitText string) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, errors.New(cannotOpen)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("it is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, errors.New("it cannot be read")
	}
	if len(b) > limit {
		return nil, errors.New("it is larger than " + limitText)
	}
	return b, nil
}

// GitDirs returns the canonical directories, inside the workspace dir,
// that the repository at its root uses as its git directory and common
// directory, or would use once they exist: a .git link, a gitdir: line or
// a commondir file naming a directory inside the workspace that is not
// there yet counts too. Nothing outside the workspace is returned; a
// workspace without .git has none.
func GitDirs(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	ws, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil
	}
	defer root.Close()
	var ge *GitDirError
	gitDir, err := resolveDotGit(root, ws)
	if err != nil {
		if errors.As(err, &ge) && ge.missing != "" {
			return []string{ge.missing}
		}
		return nil
	}
	common, err := resolveCommonDir(root, ws, gitDir)
	switch {
	case err == nil && common != gitDir:
		return []string{gitDir, common}
	case errors.As(err, &ge) && ge.missing != "":
		return []string{gitDir, ge.missing}
	}
	return []string{gitDir}
}

// evalPartial resolves the links of the longest part of p that exists and
// appends the rest, cleaned: where p would lead once it is created.
func evalPartial(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for dir := p; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// within reports whether p lies strictly inside dir (both clean, absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." &&
		!strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Within reports whether the clean absolute path p lies strictly inside dir.
func Within(dir, p string) bool { return within(dir, p) }
