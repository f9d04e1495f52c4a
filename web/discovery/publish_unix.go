//go:build unix

package discovery

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// publish writes data to name in loc's folder: a fresh temporary file
// (O_EXCL, O_NOFOLLOW, 0600), synced, then renamed over name. rename
// replaces a link planted at name after the check rather than following
// it, so the token never lands anywhere but in the folder.
func publish(loc Location, name string, data []byte) error {
	dir, err := openDir(loc, true)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	where := filepath.Join(loc.Dir(), name)
	var st unix.Stat_t
	switch err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case errors.Is(err, unix.ENOENT):
	case err != nil:
		return fmt.Errorf("discovery: %s: %w", where, err)
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("discovery: %s exists and is not a regular file (a symbolic link?); refusing to replace it", where)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := "." + name + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("discovery: create %s: %w", filepath.Join(loc.Dir(), tmp), err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	err = writeSynced(f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, name)
	}
	if err != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
		return fmt.Errorf("discovery: write %s: %w", where, err)
	}
	// The rename is durable once the folder is synced; a failure here
	// loses nothing a reader could see.
	_ = unix.Fsync(dir)
	return nil
}

// writeSynced writes data, makes the mode exactly 0600 (the umask can only
// have narrowed it) and syncs.
func writeSynced(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	return f.Sync()
}

// remove deletes name from loc's folder if it still holds rec.
func remove(loc Location, name string, rec Record) error {
	dir, err := openDir(loc, false)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	where := filepath.Join(loc.Dir(), name)
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case errors.Is(err, unix.ELOOP):
		return fmt.Errorf("discovery: %s was replaced by a symbolic link; leaving it", where)
	case err != nil:
		return fmt.Errorf("discovery: %s: %w", where, err)
	}
	f := os.NewFile(uintptr(fd), name)
	data, err := io.ReadAll(io.LimitReader(f, maxFile))
	f.Close()
	if err != nil {
		return fmt.Errorf("discovery: read %s: %w", where, err)
	}
	if !ours(data, rec) {
		return nil // another server's file now: not ours to remove
	}
	if err := unix.Unlinkat(dir, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("discovery: remove %s: %w", where, err)
	}
	return nil
}

// openDir opens loc's folder. loc.Base is opened as named (the operator's
// environment chose it); each folder below it is opened without following
// a symbolic link, made 0700 when missing (if create), and must belong to
// this user. The last one must have no group or other permission: a looser
// one of ours is narrowed to 0700.
func openDir(loc Location, create bool) (int, error) {
	fd, err := unix.Open(loc.Base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("discovery: open %s: %w", loc.Base, err)
	}
	path := loc.Base
	for i, name := range loc.Sub {
		path = filepath.Join(path, name)
		next, err := openSub(fd, name, create)
		unix.Close(fd)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return -1, fmt.Errorf("discovery: %s is a symbolic link or not a folder; refusing it: %w", path, err)
			}
			return -1, fmt.Errorf("discovery: %s: %w", path, err)
		}
		fd = next
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("discovery: %s: %w", path, err)
		}
		if int(st.Uid) != os.Geteuid() {
			unix.Close(fd)
			return -1, fmt.Errorf("discovery: %s belongs to user %d, not to this user; refusing it", path, st.Uid)
		}
		if i == len(loc.Sub)-1 && st.Mode&0o077 != 0 {
			if err := unix.Fchmod(fd, 0o700); err != nil {
				unix.Close(fd)
				return -1, fmt.Errorf("discovery: %s is open to other users and cannot be narrowed: %w", path, err)
			}
		}
	}
	return fd, nil
}

// openSub opens the folder name below dir without following a link,
// making it 0700 first when it is missing and create is set.
func openSub(dir int, name string, create bool) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dir, name, flags, 0)
	if errors.Is(err, unix.ENOENT) && create {
		if err := unix.Mkdirat(dir, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, err
		}
		fd, err = unix.Openat(dir, name, flags, 0)
	}
	return fd, err
}
