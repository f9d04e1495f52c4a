package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// This file resolves a benchmark's symbolic links as a whole. CopyWorkspace
// checks each link's own target as it copies it, but a link's target can
// pass through other links: with b -> . (inside) and a -> b/c/../.. (inside
// on its face), a resolves to the folder above the workspace. So every link
// is followed here component by component, the way the kernel follows it,
// and the benchmark is refused when any link leaves its folder.

// maxLinkHops is how many links the kernel follows in one lookup before it
// gives up (ELOOP).
const maxLinkHops = 40

// checkLinks resolves every symbolic link under dir and reports the first
// one that leads outside dir, naming it. skip tells the top-level entries
// that are not part of the workspace (the copy leaves them out). A link
// that cannot be resolved (a loop, a dangling target) is not refused: the
// kernel cannot follow it either.
func checkLinks(dir string, skip func(name string) bool) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && !strings.Contains(p, "/") && skip != nil && skip(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		return resolveInside(root, p)
	})
}

// resolveInside follows the link at p (a slash path under root whose
// folders are real folders, as a walk finds them) and returns an error
// when the path it resolves to, or any step on the way, leaves root.
// Components that do not exist are taken as they are written: a folder
// made there later would resolve the same way.
func resolveInside(root *os.Root, p string) error {
	target, err := root.Readlink(p)
	if err != nil {
		return err
	}
	escape := func(via, to string) error {
		if via == p {
			return fmt.Errorf("%s is a link out of the benchmark (%s -> %s); a benchmark's workspace must be self-contained", p, p, to)
		}
		return fmt.Errorf("%s is a link out of the benchmark (%s -> %s, through the link %s -> %s); a benchmark's workspace must be self-contained", p, p, target, via, to)
	}
	if path.IsAbs(target) {
		return escape(p, target)
	}
	cur := split(path.Dir(p))
	pending := split(target)
	via, viaTarget := p, target
	hops, dangling := 1, false
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case ".":
			continue
		case "..":
			if len(cur) == 0 {
				return escape(via, viaTarget)
			}
			cur = cur[:len(cur)-1]
			continue
		}
		cur = append(cur, c)
		if dangling {
			continue
		}
		at := strings.Join(cur, "/")
		fi, err := root.Lstat(at)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			dangling = true
			continue
		case err != nil:
			return fmt.Errorf("resolve the link %s: %w", p, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			if hops++; hops > maxLinkHops {
				return nil // a loop: nothing can follow it
			}
			next, err := root.Readlink(at)
			if err != nil {
				return fmt.Errorf("resolve the link %s: %w", p, err)
			}
			if path.IsAbs(next) {
				return escape(at, next)
			}
			via, viaTarget = at, next
			cur = cur[:len(cur)-1]
			pending = append(split(next), pending...)
		case !fi.IsDir() && len(pending) > 0:
			dangling = true // a file used as a folder: taken as written
		}
	}
	return nil
}

// split cuts a slash path into its components, without empty and "."
// ones.
func split(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}
