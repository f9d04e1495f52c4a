package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/guildhall/guildhall/store"
)

// Workspace is the contained project directory every file tool works in.
//
// Containment is by construction: every file operation goes through an
// os.Root opened on the workspace, which resolves each path component with
// openat and refuses `..` climbs, absolute symlink targets and symlinks that
// lead out, including a directory swapped for a symlink mid-operation.
//
// Before that, Resolve turns the model's path into a canonical
// workspace-relative path (described there), so the .orchestration check and
// every error message are about the file really being touched.
type Workspace struct {
	dir   string // absolute path as opened
	canon string // dir with symlinks evaluated
	root  *os.Root
}

// Path limits. A path longer than maxPathLen bytes is refused before any
// filesystem access: os.Root walks component by component, so the kernel's
// PATH_MAX would not otherwise stop a write from creating thousands of
// nested directories.
const (
	maxPathLen     = 4096
	maxSymlinkHops = 40
)

// OpenWorkspace opens dir as a workspace.
func OpenWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	root, err := os.OpenRoot(canon)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	return &Workspace{dir: abs, canon: canon, root: root}, nil
}

// Dir is the workspace's absolute path.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the workspace root.
func (w *Workspace) Close() error { return w.root.Close() }

// PathError is a refused or failed workspace path. Its message names the
// path as the caller gave it and the reason; it never contains a host path
// the caller did not write itself.
type PathError struct {
	Path   string // as given by the caller
	Kind   string // a tool error kind: not_found, permission_denied, ...
	Reason string
}

func (e *PathError) Error() string { return fmt.Sprintf("%s: %s", showPath(e.Path), e.Reason) }

// showPath quotes a caller's path for a message, shortening very long ones.
func showPath(p string) string {
	if len(p) > 200 {
		p = p[:200] + "…"
	}
	return fmt.Sprintf("%q", p)
}

// Reasons shared by the file tools.
const (
	reasonOutside      = "outside the workspace"
	reasonBookkeeping  = "the .orchestration run-bookkeeping directory is not available to file tools"
	reasonNotFound     = "not found"
	reasonIsDir        = "is a directory"
	reasonNotRegular   = "not a regular file"
	reasonNotDir       = "not a directory"
	reasonSymlinkLoop  = "too many levels of symbolic links"
	reasonNUL          = "path contains a NUL byte"
	reasonTooLong      = "path is too long"
	reasonEmpty        = "path is empty"
	reasonConfusable   = "path has a component made of look-alike dots"
	reasonAccessDenied = "access denied"
)

func pathErr(given, kind, reason string) *PathError {
	return &PathError{Path: given, Kind: kind, Reason: reason}
}

// Resolve turns a path from a tool call into a canonical workspace-relative
// path ("." for the workspace itself), or a *PathError.
//
//   - NUL bytes, paths over 4096 bytes, and components made only of dots and
//     Unicode dot look-alikes (U+2024, U+FF0E, ...) are refused outright.
//   - An absolute path is accepted only when it lies lexically inside the
//     workspace (as opened or with symlinks evaluated); it is converted to
//     the relative path. Every other absolute path is outside.
//   - The path is cleaned, then walked component by component through the
//     root: symlinks are expanded (relative targets only; an absolute target
//     is outside, as os.Root treats it), `..` may not climb above the
//     workspace, and 40 hops is a loop. Missing components are kept as
//     written, so a path to be created resolves too.
//   - If the canonical path is, or is under, the top-level .orchestration
//     directory, it is refused with permission_denied. The name is compared
//     case-insensitively on every platform, so `.Orchestration` is refused
//     too (which is what a case-insensitive filesystem needs).
//
// The walk is advisory: the operation that follows goes through the os.Root
// again, so a path changed in between can never lead outside.
func (w *Workspace) Resolve(given string) (string, error) {
	p := given
	switch {
	case strings.IndexByte(p, 0) >= 0:
		return "", pathErr(given, KindInvalidArguments, reasonNUL)
	case len(p) > maxPathLen:
		return "", pathErr(given, KindInvalidArguments, reasonTooLong)
	case p == "":
		return "", pathErr(given, KindInvalidArguments, reasonEmpty)
	}
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if confusableDots(part) {
			return "", pathErr(given, KindPermissionDenied, reasonConfusable)
		}
	}
	if filepath.IsAbs(p) {
		rel, ok := w.relInside(p)
		if !ok {
			return "", pathErr(given, KindPermissionDenied, reasonOutside)
		}
		p = rel
	}
	canon, err := w.canonical(filepath.Clean(p))
	if err != nil {
		return "", &PathError{Path: given, Kind: err.Kind, Reason: err.Reason}
	}
	if isBookkeeping(canon) {
		return "", pathErr(given, KindPermissionDenied, reasonBookkeeping)
	}
	return canon, nil
}

// relInside converts an absolute path lexically inside the workspace to a
// relative one.
func (w *Workspace) relInside(abs string) (string, bool) {
	abs = filepath.Clean(abs)
	for _, base := range []string{w.dir, w.canon} {
		rel, err := filepath.Rel(base, abs)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return rel, true
		}
	}
	return "", false
}

// isBookkeeping reports whether a canonical relative path is the top-level
// .orchestration directory or under it.
func isBookkeeping(rel string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return strings.EqualFold(first, store.OrchestrationDir)
}

// confusableDots reports whether a path component is made only of dots and
// characters that normalise to dots (so it would read as "." or ".." to a
// person) while containing at least one look-alike.
func confusableDots(part string) bool {
	if part == "" {
		return false
	}
	lookalike := false
	for _, r := range part {
		switch r {
		case '.':
		case '\u2024', '\u2025', '\u2026', '\uFE52', '\uFF0E', '\u3002', '\uFF61', '\u0701', '\u0702', '\uA4F8':
			lookalike = true
		default:
			return false
		}
	}
	return lookalike
}

// canonical expands symlinks in a cleaned relative path through the root.
func (w *Workspace) canonical(clean string) (string, *PathError) {
	if clean == "." {
		return ".", nil
	}
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", &PathError{Kind: KindPermissionDenied, Reason: reasonOutside}
	}
	lw, _, err := w.walkLinks(clean, nil)
	switch {
	case err != nil:
		// With no link hook every error is the walk's own *PathError.
		var pe *PathError
		if errors.As(err, &pe) {
			return "", pe
		}
		return "", &PathError{Kind: KindError, Reason: "cannot resolve the path"}
	case lw.outside:
		return "", &PathError{Kind: KindPermissionDenied, Reason: reasonOutside}
	case lw.missing:
		// The rest does not exist: keep it as written.
		return cleanJoin(append(lw.done, lw.rest...))
	}
	return cleanJoin(lw.done)
}

// linkWalk is where walkLinks stopped.
type linkWalk struct {
	// done is the path walked, links expanded: all of it, or what came
	// before the first component that does not exist.
	done []string
	// missing: a component does not exist; rest is it and what followed,
	// as written.
	missing bool
	rest    []string
	// outside: a ".." climbed above the root, or a link is absolute,
	// empty or climbs out; it is not followed.
	outside bool
}

// walkLinks expands the links of a cleaned relative path through the root,
// one component at a time, never following one out of the workspace. It is
// the one walk behind Resolve and Pin, so what a tool may reach and what
// a pin records cannot disagree. link, when not nil, is shown each link
// and its target before the walk follows it, and may stop the walk with an
// error. A filesystem error or a link loop is a *PathError (with no path),
// returned with the component it was met at.
func (w *Workspace) walkLinks(clean string, link func(at, target string) error) (linkWalk, string, error) {
	todo := strings.Split(clean, "/")
	var lw linkWalk
	for hops := 0; len(todo) > 0; {
		comp := todo[0]
		todo = todo[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			if len(lw.done) == 0 {
				lw.outside = true
				return lw, "", nil
			}
			lw.done = lw.done[:len(lw.done)-1]
			continue
		}
		cand := path.Join(append(append([]string{}, lw.done...), comp)...)
		fi, err := w.root.Lstat(cand)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				lw.missing, lw.rest = true, append([]string{comp}, todo...)
				return lw, cand, nil
			}
			return lw, cand, classify(err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			lw.done = append(lw.done, comp)
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return lw, cand, &PathError{Kind: KindError, Reason: reasonSymlinkLoop}
		}
		target, err := w.root.Readlink(cand)
		if err != nil {
			return lw, cand, classify(err)
		}
		if link != nil {
			if err := link(cand, target); err != nil {
				return lw, cand, err
			}
		}
		if target == "" || filepath.IsAbs(target) {
			lw.outside = true
			return lw, cand, nil
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	return lw, "", nil
}

func cleanJoin(parts []string) (string, *PathError) {
	p := path.Clean(strings.Join(parts, "/"))
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", &PathError{Kind: KindPermissionDenied, Reason: reasonOutside}
	}
	if p == "" {
		p = "."
	}
	return p, nil
}

// classify maps a filesystem error to a kind and a reason that carries no
// path: only the errno's own text is kept.
func classify(err error) *PathError {
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &PathError{Kind: KindNotFound, Reason: reasonNotFound}
	case isEscape(err):
		return &PathError{Kind: KindPermissionDenied, Reason: reasonOutside}
	case errors.Is(err, syscall.ELOOP):
		return &PathError{Kind: KindError, Reason: reasonSymlinkLoop}
	case errors.Is(err, syscall.ENOTDIR):
		return &PathError{Kind: KindNotFound, Reason: reasonNotDir}
	case errors.Is(err, syscall.EISDIR):
		return &PathError{Kind: KindInvalidArguments, Reason: reasonIsDir}
	case errors.Is(err, fs.ErrPermission):
		return &PathError{Kind: KindPermissionDenied, Reason: reasonAccessDenied}
	case errors.Is(err, syscall.ENAMETOOLONG):
		return &PathError{Kind: KindInvalidArguments, Reason: reasonTooLong}
	case errors.As(err, &errno):
		return &PathError{Kind: KindError, Reason: errno.Error()}
	}
	return &PathError{Kind: KindError, Reason: "cannot access the path"}
}

// isEscape recognises os.Root's refusal of a path that leaves the root. The
// error value is unexported, so its fixed text is compared.
func isEscape(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err != nil && pe.Err.Error() == "path escapes from parent"
	}
	return false
}

// wrapPathErr attaches the caller's path to an error from the root.
func wrapPathErr(given string, err error) *PathError {
	var pe *PathError
	if errors.As(err, &pe) {
		if pe.Path == "" {
			pe.Path = given
		}
		return pe
	}
	c := classify(err)
	c.Path = given
	return c
}

// pathFail turns an error from a workspace operation into a tool result.
func pathFail(given string, err error) Result {
	pe := wrapPathErr(given, err)
	return Result{Kind: pe.Kind, Message: pe.Error()}
}

// openRegular opens a regular file for reading. Non-regular files are
// refused before they are opened (a FIFO or device is never touched), and
// the open is non-blocking and re-checked on the descriptor, so a file
// swapped for a FIFO in between still cannot hang the call.
func (w *Workspace) openRegular(given, rel string) (*os.File, fs.FileInfo, error) {
	fi, err := w.root.Lstat(rel)
	if err != nil {
		return nil, nil, wrapPathErr(given, err)
	}
	if err := regularOnly(given, fi); err != nil {
		return nil, nil, err
	}
	f, err := w.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, wrapPathErr(given, err)
	}
	fi, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, wrapPathErr(given, err)
	}
	if err := regularOnly(given, fi); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

func regularOnly(given string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return pathErr(given, KindInvalidArguments, reasonIsDir)
	case !fi.Mode().IsRegular():
		return pathErr(given, KindInvalidArguments, reasonNotRegular)
	}
	return nil
}

// readCapped reads at most limit bytes of a regular file and reports
// whether more remained.
func (w *Workspace) readCapped(given, rel string, limit int64) (data []byte, size int64, truncated bool, err error) {
	f, fi, err := w.openRegular(given, rel)
	if err != nil {
		return nil, 0, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, 0, false, wrapPathErr(given, err)
	}
	if int64(len(data)) > limit {
		return data[:limit], fi.Size(), true, nil
	}
	return data, fi.Size(), false, nil
}

// writeAtomic replaces rel, a path from ResolveWrite, with data: a temp
// file in the same directory, written and synced, then renamed over rel.
// Missing parent directories are created inside the workspace. The
// directory is reached through real directories only (openRealDir), so
// the write lands in the folder ResolveWrite checked. An existing
// non-regular file is refused, and an existing file keeps its mode.
func (w *Workspace) writeAtomic(given, rel string, data []byte) error {
	if rel == "." {
		return pathErr(given, KindInvalidArguments, reasonIsDir)
	}
	dir, base := path.Split(rel)
	parent, err := openRealDir(w.root, path.Clean(dir), true)
	if err != nil {
		return wrapPathErr(given, err)
	}
	defer parent.Close()
	return writeAtomicIn(parent, given, base, data)
}

// writeAtomicIn is writeAtomic over any root.
func writeAtomicIn(root *os.Root, given, rel string, data []byte) error {
	return writeAtomicMode(root, given, rel, data, 0)
}

// writeAtomicMode is writeAtomicIn giving the file the permission bits
// mode, or keeping an existing file's (0644 for a new one) when mode is 0.
func writeAtomicMode(root *os.Root, given, rel string, data []byte, mode fs.FileMode) error {
	perm := fs.FileMode(0o644)
	if fi, err := root.Lstat(rel); err == nil {
		if err := regularOnly(given, fi); err != nil {
			return err
		}
		perm = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return wrapPathErr(given, err)
	}
	if mode != 0 {
		perm = mode
	}
	dir := path.Dir(rel)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return wrapPathErr(given, err)
		}
	}
	var tmp string
	var f *os.File
	for i := 0; ; i++ {
		tmp = path.Join(dir, fmt.Sprintf(".%s.%s.tmp", path.Base(rel), randomHex(6)))
		var err error
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 8 {
			return wrapPathErr(given, err)
		}
	}
	fail := func(err error) error {
		f.Close()
		_ = root.Remove(tmp)
		return wrapPathErr(given, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = root.Remove(tmp)
		return wrapPathErr(given, err)
	}
	if err := root.Rename(tmp, rel); err != nil {
		_ = root.Remove(tmp)
		return wrapPathErr(given, err)
	}
	if d, err := root.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// walkOptions says what a tree walk skips.
type walkOptions struct {
	skipGit    bool // .git directories at any depth
	skipHidden bool // every directory whose name starts with "."
	skipDir    func(name string) bool
	maxEntries int // 0: no limit
}

// errWalkLimit stops a walk that reached its entry limit.
var errWalkLimit = errors.New("walk limit reached")

// walk visits the tree under the canonical relative path start, in lexical
// order, without following symlinks (they are reported as symlink entries)
// and without ever entering the top-level .orchestration directory. It
// reports whether the entry limit cut it short. Unreadable directories are
// skipped.
func (w *Workspace) walk(ctx context.Context, start string, opt walkOptions, fn func(rel string, d fs.DirEntry) error) (limited bool, err error) {
	n := 0
	err = fs.WalkDir(w.root.FS(), start, func(rel string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if rel == start {
				return err
			}
			return nil
		}
		if d.IsDir() && rel != start {
			name := d.Name()
			if isBookkeeping(rel) ||
				(opt.skipGit && name == ".git") ||
				(opt.skipHidden && strings.HasPrefix(name, ".")) ||
				(opt.skipDir != nil && opt.skipDir(name)) {
				return fs.SkipDir
			}
		}
		if rel != start && isBookkeeping(rel) {
			return nil
		}
		n++
		if opt.maxEntries > 0 && n > opt.maxEntries {
			return errWalkLimit
		}
		return fn(rel, d)
	})
	if errors.Is(err, errWalkLimit) {
		return true, nil
	}
	return false, err
}
