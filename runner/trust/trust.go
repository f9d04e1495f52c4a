// Package trust is what the operator trusts, kept where no workspace can
// reach: the operator's own folders ($XDG_CONFIG_HOME/guildhall for
// configuration, $XDG_STATE_HOME/guildhall for state), the key that seals
// Guildhall's run records, and the remembered decisions about workspaces
// that supply configuration of their own.
//
// A cloned repository is hostile input. Its guild/ and deployment.json are
// read through the workspace's containment and applied only once the
// operator trusts that workspace; the decision is remembered for the
// workspace's canonical path together with a hash of exactly the files
// that were read, so a changed file asks again. The records key lets the
// store tell records Guildhall wrote from records a repository shipped.
package trust

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/guildhall/guildhall/store"
)

// Dirs are the operator's Guildhall folders.
type Dirs struct {
	// Config holds operator configuration: deployment.json and guild/.
	Config string
	// State holds the records key and trust decisions.
	State string
}

// Operator resolves the folders from the XDG base-directory variables,
// falling back to ~/.config and ~/.local/state. A relative XDG value is
// ignored, as the specification says.
func Operator() (Dirs, error) {
	home, _ := os.UserHomeDir()
	dir := func(env, fallback string) (string, error) {
		if v := os.Getenv(env); filepath.IsAbs(v) {
			return filepath.Join(v, "guildhall"), nil
		}
		if home == "" {
			return "", fmt.Errorf("neither %s nor HOME is set: Guildhall needs a folder of the operator's for its state", env)
		}
		return filepath.Join(home, fallback, "guildhall"), nil
	}
	cfg, err := dir("XDG_CONFIG_HOME", ".config")
	if err != nil {
		return Dirs{}, err
	}
	state, err := dir("XDG_STATE_HOME", filepath.Join(".local", "state"))
	if err != nil {
		return Dirs{}, err
	}
	return Dirs{Config: cfg, State: state}, nil
}

// keyFile is the records key's name in the state folder.
const keyFile = "records.key"

// keyLen is the records key's length in bytes.
const keyLen = 32

// RecordsKey returns the operator's records key, creating it on first use:
// 32 random bytes, hex-encoded in <state>/records.key, mode 0600 in a 0700
// folder. A key file that is a link, shared by hard links, readable by
// others or malformed is refused with an error naming it: the key must be
// the operator's alone.
func (d Dirs) RecordsKey() ([]byte, error) {
	if err := ensurePrivateDir(d.State); err != nil {
		return nil, err
	}
	path := filepath.Join(d.State, keyFile)
	key, err := readKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKey(path); err != nil {
			return nil, err
		}
		key, err = readKey(path)
	}
	return key, err
}

func readKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("records key %s is a symbolic link; it must be a plain file of yours: remove it and Guildhall makes a new one", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("records key %s: %w", path, err)
	}
	if err := private(path, fi); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, 2*keyLen+2))
	if err != nil {
		return nil, fmt.Errorf("records key %s: %w", path, err)
	}
	key := make([]byte, keyLen)
	if n, err := hex.Decode(key, trimNewline(b)); err != nil || n != keyLen {
		return nil, fmt.Errorf("records key %s is not %d hex-encoded bytes; remove it and Guildhall makes a new one (records sealed with the old key then read as foreign)", path, keyLen)
	}
	return key, nil
}

// private refuses a file others could read or that other names share.
func private(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("records key %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("records key %s can be read by others (mode %v); run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if st.Nlink > 1 {
			return fmt.Errorf("records key %s has %d hard links; it must be a file of its own: remove it and Guildhall makes a new one", path, st.Nlink)
		}
		if int(st.Uid) != os.Geteuid() {
			return fmt.Errorf("records key %s belongs to another user (uid %d)", path, st.Uid)
		}
	}
	return nil
}

// createKey writes a new key beside path and links it into place, so that
// two processes starting at once agree on one key: the second link fails
// and that process reads the first one's.
func createKey(path string) error {
	key := make([]byte, keyLen)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("make records key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".records.key.*")
	if err != nil {
		return fmt.Errorf("make records key: %w", err)
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.WriteString(hex.EncodeToString(key) + "\n")
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write records key %s: %w", path, err)
	}
	if err := installNew(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("install records key %s: %w", path, err)
	}
	return nil
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// ensurePrivateDir creates dir (and its parents) and refuses it when it is
// a link, not a folder, or open to others.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("check %s: %w", dir, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link; Guildhall keeps its records key and trust decisions there and wants a folder of the operator's", dir)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s can be written by others (mode %v); run chmod 700 %s", dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// Sealer returns the sealer of the records of the workspace at dir: the
// operator's records key bound to the workspace's canonical path, so a
// record sealed for one workspace is foreign in every other.
func (d Dirs) Sealer(dir string) (*store.Sealer, error) {
	key, err := d.RecordsKey()
	if err != nil {
		return nil, err
	}
	canon, err := Canonical(dir)
	if err != nil {
		return nil, err
	}
	return store.NewSealer(key, canon), nil
}

// Canonical is a workspace's canonical path: absolute, links resolved.
func Canonical(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", dir, err)
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", dir, err)
	}
	return canon, nil
}
