package bench

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxCopyBytes caps a benchmark's workspace: a suite is a set of small
// projects, and a runaway folder should fail clearly, not fill a disk.
const maxCopyBytes = 256 << 20

// benchOnly are the files of a benchmark folder that never reach the
// workspace: the validation rules and the scripted model. Keeping them
// out stops the model from optimising for the test instead of the task.
var benchOnly = map[string]bool{EvalFile: true, ScriptFile: true}

// CopyWorkspace copies a benchmark's folder to dst (which must not exist)
// without its eval.json and script.json, and without any .orchestration
// records it carries. It reads through an os.Root on the benchmark, so no
// link leads the copy outside it, and anything but folders, regular files
// and symbolic links is refused. Links are copied as links; once every
// one is in the copy, each is resolved whole (through the links it
// passes), and a copy with a link that leads outside it is refused.
func CopyWorkspace(src, dst string) error {
	if err := copyTree(src, dst); err != nil {
		return err
	}
	if err := checkLinks(dst, nil); err != nil {
		return fmt.Errorf("benchmark %s: %w", src, err)
	}
	return nil
}

// notCopied reports a top-level entry of a benchmark that never reaches
// its workspace.
func notCopied(name string) bool {
	return benchOnly[name] || strings.EqualFold(name, ".orchestration")
}

func copyTree(src, dst string) error {
	root, err := os.OpenRoot(src)
	if err != nil {
		return fmt.Errorf("benchmark %s: %w", src, err)
	}
	defer root.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return fmt.Errorf("workspace %s: %w", dst, err)
	}
	var total int64
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("copy %s: %w", p, err)
		}
		if p == "." {
			return nil
		}
		if !strings.Contains(p, "/") && notCopied(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		out := filepath.Join(dst, filepath.FromSlash(p))
		switch t := d.Type(); {
		case d.IsDir():
			return os.Mkdir(out, 0o755)
		case t&fs.ModeSymlink != 0:
			return copyLink(root, p, out)
		case t.IsRegular():
			n, err := copyFile(root, p, out, maxCopyBytes-total)
			total += n
			return err
		default:
			return fmt.Errorf("benchmark %s: %s is not a regular file, folder or link (%v)", src, p, t)
		}
	})
}

// copyLink copies a link as a link. An absolute target is refused at
// once; where a relative one leads depends on the links it passes through,
// so the whole copy is resolved once every link is in it (checkLinks).
func copyLink(root *os.Root, p, out string) error {
	target, err := root.Readlink(p)
	if err != nil {
		return err
	}
	if filepath.IsAbs(target) {
		return fmt.Errorf("%s is a link out of the benchmark (%s -> %s); a benchmark's workspace must be self-contained", p, p, target)
	}
	return os.Symlink(target, out)
}

func copyFile(root *os.Root, p, out string, budget int64) (int64, error) {
	in, err := root.Open(p)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", p)
	}
	if fi.Size() > budget {
		return 0, fmt.Errorf("the benchmark is larger than %d MiB (at %s)", maxCopyBytes>>20, p)
	}
	// Execute bits survive; setuid, setgid and sticky never do.
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()|0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, io.LimitReader(in, budget+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > budget {
		err = errors.New("the benchmark changed while it was copied")
	}
	return n, err
}
