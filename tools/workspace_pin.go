package tools

// Pinning: what a workspace path is now, as digests, so that a trust
// decision about a program the workspace ships (an MCP server's script)
// notices when the program changes. It lives beside the file tools because
// it must read through the same root: a link out of the workspace is
// recorded as a link, never followed, and a FIFO or device is never
// opened.

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// PinBudget bounds a pinning pass, shared by every Pin call of the pass:
// the entries (files, links, folders) it may record and the bytes of file
// contents it may read.
type PinBudget struct {
	Entries int
	Bytes   int64
}

// ErrPinBudget is returned when a pass needs more than its budget: what is
// past the bound cannot be pinned, so it cannot be trusted either.
var ErrPinBudget = errors.New("more than the pinning budget")

// Kinds of pinned entries.
const (
	PinFile    = "file"    // Sum is the file's contents'
	PinLink    = "link"    // Sum is the link's target's (its text)
	PinFolder  = "folder"  // Sum is its listing's: names and types
	PinAbsent  = "absent"  // nothing is there (yet)
	PinSpecial = "special" // a FIFO, socket or device: never opened
)

// A PinEntry is one thing a pass pinned.
type PinEntry struct {
	// Path is workspace-relative, slash-separated, links resolved up to
	// the entry itself.
	Path string
	Kind string
	Sum  [32]byte
}

// PinResult says what Pin found at the path it was given.
type PinResult int

// Pin results.
const (
	// PinnedNothing: the path is not the workspace's (lexically outside
	// it, not a path at all, or the workspace itself when folders are not
	// followed); no entry was recorded for it.
	PinnedNothing PinResult = iota
	// PinnedAbsent: inside the workspace, but nothing is there.
	PinnedAbsent
	// PinnedFile: a regular file, or a link chain ending at one inside.
	PinnedFile
	// PinnedFolder: a folder (its contents when folders is set).
	PinnedFolder
	// PinnedOther: a link that leads out of the workspace, or a FIFO,
	// socket or device; the link or the kind is recorded.
	PinnedOther
)

// Pin records what the path p (workspace-relative, or absolute inside the
// workspace) is: every link on the way, then the file's contents, or with
// folders set, a folder's whole tree (its files, links and listings;
// .git folders and the .orchestration records are left out, as nobody's
// program lives there), or the fact that nothing is there. Links are
// expanded through the root as Resolve does; one that leads out of the
// workspace is recorded and not followed. The workspace itself is never
// pinned (PinnedNothing): it is the project, not a program.
//
// Every entry is spent from b; past it, Pin returns ErrPinBudget.
func (w *Workspace) Pin(p string, b *PinBudget, folders bool) (Pinned, error) {
	pn := &pinner{w: w, b: b, folders: folders, seen: map[string]bool{}}
	res, err := pn.pin(p, 0)
	return Pinned{Entries: pn.out, What: res, Path: pn.top}, err
}

// Pinned is what one Pin call recorded.
type Pinned struct {
	Entries []PinEntry
	What    PinResult
	// Path is the canonical workspace-relative path of the file or folder
	// found (PinnedFile, PinnedFolder), else "".
	Path string
}

type pinner struct {
	w       *Workspace
	b       *PinBudget
	folders bool
	seen    map[string]bool
	out     []PinEntry
	top     string // the canonical path of the first pin's target
}

// pinDepth bounds the links followed out of pinned folders.
const pinDepth = 8

func (pn *pinner) add(rel, kind string, sum [32]byte) error {
	key := kind + "\x00" + rel
	if pn.seen[key] {
		return nil
	}
	if pn.b.Entries <= 0 {
		return fmt.Errorf("%s: %w", rel, ErrPinBudget)
	}
	pn.b.Entries--
	pn.seen[key] = true
	pn.out = append(pn.out, PinEntry{Path: rel, Kind: kind, Sum: sum})
	return nil
}

func (pn *pinner) pin(p string, depth int) (PinResult, error) {
	if p == "" || strings.IndexByte(p, 0) >= 0 || len(p) > maxPathLen {
		return PinnedNothing, nil
	}
	if filepath.IsAbs(p) {
		rel, ok := pn.w.relInside(p)
		if !ok {
			return PinnedNothing, nil
		}
		p = rel
	}
	canon, res, err := pn.resolve(path.Clean(filepath.ToSlash(p)))
	if err != nil || res != PinnedFile {
		return res, err
	}
	if isBookkeeping(canon) {
		return 0, fmt.Errorf("%s is in the .orchestration records folder, which changes every run", canon)
	}
	fi, err := pn.w.root.Lstat(canon)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", canon, classify(err))
	}
	if depth == 0 {
		pn.top = canon
	}
	return pn.entry(canon, fi.Mode(), depth)
}

// resolve expands the links of a clean relative path, recording each. It
// returns the canonical path with PinnedFile when something is there (of
// any kind: the caller looks), else what was recorded.
func (pn *pinner) resolve(clean string) (string, PinResult, error) {
	if clean == "." {
		return "", PinnedNothing, nil
	}
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", PinnedNothing, nil
	}
	lw, at, err := pn.w.walkLinks(clean, func(at, target string) error {
		return pn.add(at, PinLink, sha256.Sum256([]byte(target)))
	})
	var pe *PathError
	switch {
	case errors.As(err, &pe) && pe.Reason == reasonSymlinkLoop:
		return "", 0, fmt.Errorf("%s: %s", at, reasonSymlinkLoop)
	case errors.As(err, &pe):
		return "", 0, fmt.Errorf("%s: %w", at, pe)
	case err != nil:
		return "", 0, err // the budget
	case lw.outside:
		return "", PinnedOther, nil // a link leads or climbs out: it is recorded
	case lw.missing:
		rest := path.Join(append(lw.done, lw.rest...)...)
		if err := pn.add(rest, PinAbsent, sha256.Sum256(nil)); err != nil {
			return "", 0, err
		}
		return "", PinnedAbsent, nil
	case len(lw.done) == 0:
		return "", PinnedNothing, nil // the workspace itself, through links
	}
	return path.Join(lw.done...), PinnedFile, nil
}

// entry pins what is at canon, which is not a link.
func (pn *pinner) entry(canon string, mode fs.FileMode, depth int) (PinResult, error) {
	switch {
	case mode.IsRegular():
		sum, err := pn.hashFile(canon)
		if err != nil {
			return 0, err
		}
		return PinnedFile, pn.add(canon, PinFile, sum)
	case mode.IsDir():
		if !pn.folders {
			return PinnedFolder, pn.add(canon, PinFolder, sha256.Sum256([]byte("not followed")))
		}
		return PinnedFolder, pn.folder(canon, depth)
	}
	return PinnedOther, pn.add(canon, PinSpecial, sha256.Sum256([]byte(mode.Type().String())))
}

// hashFile digests a regular file's contents, spending the budget.
func (pn *pinner) hashFile(rel string) ([32]byte, error) {
	f, _, err := pn.w.openRegular(rel, rel)
	if err != nil {
		return [32]byte{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, pn.b.Bytes+1))
	if err != nil {
		return [32]byte{}, fmt.Errorf("%s: %w", rel, classify(err))
	}
	if n > pn.b.Bytes {
		return [32]byte{}, fmt.Errorf("%s: %w", rel, ErrPinBudget)
	}
	pn.b.Bytes -= n
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// folder pins a folder's listing and everything under it. A link inside
// is recorded and, when it leads to something inside the workspace,
// followed (to a bounded depth; the seen set ends cycles).
func (pn *pinner) folder(dir string, depth int) error {
	if pn.seen[PinFolder+"\x00"+dir] {
		return nil
	}
	entries, err := fs.ReadDir(pn.w.root.FS(), dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, classify(err))
	}
	var listing strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&listing, "%s\x00%v\n", e.Name(), e.Type())
	}
	if err := pn.add(dir, PinFolder, sha256.Sum256([]byte(listing.String()))); err != nil {
		return err
	}
	for _, e := range entries {
		rel := path.Join(dir, e.Name())
		switch {
		case e.IsDir() && (e.Name() == ".git" || isBookkeeping(rel)):
			continue
		case e.Type()&fs.ModeSymlink != 0:
			if depth >= pinDepth {
				continue // the link itself is in the listing
			}
			if _, err := pn.pin(rel, depth+1); err != nil {
				return err
			}
		case e.IsDir():
			if err := pn.folder(rel, depth); err != nil {
				return err
			}
		default:
			if _, err := pn.entry(rel, e.Type(), depth); err != nil {
				return err
			}
		}
	}
	return nil
}
