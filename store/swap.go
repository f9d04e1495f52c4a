package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SwapFile replaces a record that is rewritten every turn (the checkpoint)
// with the same guarantee as ReplaceFile: after a kill -9 a reader sees the
// old or the new version whole, never a torn one, and there is no fsync.
//
// It is cheaper than ReplaceFile because it creates no file per write. The
// new version is written into a spare file beside path and the two names
// are exchanged atomically (renameat2 RENAME_EXCHANGE on Linux), so the
// spare then holds the previous version and is overwritten next time.
// Creating and deleting an inode per turn was most of the checkpoint's
// cost on ext4. Where the exchange is unavailable it falls back to
// ReplaceFile.
func SwapFile(path string, data []byte, perm os.FileMode) error {
	d, err := openRecordsDir(filepath.Dir(path), false)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer d.close()
	name := filepath.Base(path)
	spare := "." + name + ".spare"
	f, err := d.openShared(spare, os.O_WRONLY|os.O_CREATE, perm)
	var hl *HardLinkError
	if errors.As(err, &hl) {
		// The spare is Guildhall's scratch file: a hard link planted in its
		// place is unlinked, and the spare made afresh.
		if err = d.remove(spare); err == nil {
			f, err = d.openShared(spare, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", d.join(spare), err)
	}
	// Overwrite, then cut: the spare's blocks are reused rather than freed
	// and allocated again as O_TRUNC would.
	_, werr := f.WriteAt(data, 0)
	if werr == nil {
		werr = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write %s: %w", d.join(spare), werr)
	}
	switch err := exchange(d.fd, spare, name); {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		// The first write: nothing to exchange with yet.
		if err := d.rename(spare, name); err != nil {
			return fmt.Errorf("replace %s: %w", path, err)
		}
		return nil
	case errors.Is(err, errNoExchange):
		_ = d.remove(spare)
		return d.writeAtomic(name, data, perm, false)
	default:
		return fmt.Errorf("replace %s: %w", path, err)
	}
}

// errNoExchange reports a platform or filesystem without an atomic name
// exchange.
var errNoExchange = errors.New("rename exchange not supported")

// SparePath is the spare file SwapFile keeps beside path. It holds a
// previous version and is never read; remove it with the record.
func SparePath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".spare")
}

// RemoveSwapped removes a record written by SwapFile and its spare. A
// record that does not exist is not an error.
func RemoveSwapped(path string) error {
	d, err := openRecordsDir(filepath.Dir(path), false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	defer d.close()
	name := filepath.Base(path)
	for _, n := range []string{name, "." + name + ".spare"} {
		if err := d.remove(n); err != nil {
			return err
		}
	}
	return nil
}
