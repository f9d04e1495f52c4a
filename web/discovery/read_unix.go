//go:build unix

package discovery

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// read reads name from loc's folder: a regular file of this user that no
// other user can read or write, at most maxFile bytes.
func read(loc Location, name string) ([]byte, error) {
	dir, err := openDir(loc, false)
	if errors.Is(err, unix.ENOENT) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	return readAt(dir, loc, name)
}

func readAt(dir int, loc Location, name string) ([]byte, error) {
	where := filepath.Join(loc.Dir(), name)
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, ErrNotFound
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("discovery: %s is a symbolic link; refusing it", where)
	case err != nil:
		return nil, fmt.Errorf("discovery: %s: %w", where, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("discovery: %s: %w", where, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, fmt.Errorf("discovery: %s is not a regular file; refusing it", where)
	case int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("discovery: %s belongs to user %d, not to this user; refusing it", where, st.Uid)
	case st.Mode&0o077 != 0:
		return nil, fmt.Errorf("discovery: %s is open to other users (mode %o); refusing it", where, st.Mode&0o777)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("discovery: read %s: %w", where, err)
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("discovery: %s is larger than %d bytes; refusing it", where, maxFile)
	}
	return data, nil
}

// names lists the discovery files in loc's folder.
func names(loc Location) ([]string, error) {
	dir, err := openDir(loc, false)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Reading entries through the fd keeps to the folder openDir checked.
	f := os.NewFile(uintptr(dir), loc.Dir())
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("discovery: list %s: %w", loc.Dir(), err)
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") && e.Type().IsRegular() {
			out = append(out, n)
		}
	}
	return out, nil
}

// alive reports whether pid is a process of this user.
func alive(pid int) bool {
	return pid > 0 && unix.Kill(pid, 0) == nil
}
