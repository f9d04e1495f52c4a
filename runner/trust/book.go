package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/guildhall/guildhall/store"
)

// A Decision is what the operator said about a workspace's configuration.
type Decision string

// Decisions.
const (
	// Trusted applies the workspace's configuration.
	Trusted Decision = "trusted"
	// Ignored runs the workspace with the operator's configuration only.
	Ignored Decision = "ignored"
)

// maxBookBytes bounds trust.json as it is read (no link, FIFO or device):
// a decision is a few hundred bytes, so this holds tens of thousands.
const maxBookBytes = 16 << 20

// Record is one remembered decision: about which files, with which hash.
type Record struct {
	Decision Decision  `json:"decision"`
	Hash     string    `json:"hash"`
	Files    []string  `json:"files"`
	At       time.Time `json:"at"`
}

// bookFile is trust.json in the state folder.
type bookFile struct {
	Version    int               `json:"version"`
	Workspaces map[string]Record `json:"workspaces"`
}

// Book is the operator's remembered decisions, <state>/trust.json, keyed by
// a workspace's canonical path. Changes are read-modify-write cycles under
// an flock, so two consoles deciding at once lose nothing.
type Book struct {
	dirs Dirs
}

// Book returns the operator's decisions.
func (d Dirs) Book() *Book { return &Book{dirs: d} }

// Path is trust.json's path.
func (b *Book) Path() string { return filepath.Join(b.dirs.State, "trust.json") }

// Lookup returns the decision remembered for the workspace at dir, if any.
func (b *Book) Lookup(dir string) (Record, bool, error) {
	canon, err := Canonical(dir)
	if err != nil {
		return Record{}, false, err
	}
	f, err := b.read()
	if err != nil {
		return Record{}, false, err
	}
	r, ok := f.Workspaces[canon]
	return r, ok, nil
}

// List returns every remembered decision, by canonical path, sorted.
func (b *Book) List() ([]string, map[string]Record, error) {
	f, err := b.read()
	if err != nil {
		return nil, nil, err
	}
	paths := slices.Sorted(maps.Keys(f.Workspaces))
	return paths, f.Workspaces, nil
}

// Remember records a decision for the workspace at dir.
func (b *Book) Remember(ctx context.Context, dir string, r Record) error {
	canon, err := Canonical(dir)
	if err != nil {
		return err
	}
	return b.update(ctx, func(f *bookFile) { f.Workspaces[canon] = r })
}

// Forget drops the decision for the workspace at dir; it reports whether
// there was one.
func (b *Book) Forget(ctx context.Context, dir string) (bool, error) {
	canon, err := Canonical(dir)
	if err != nil {
		return false, err
	}
	found := false
	err = b.update(ctx, func(f *bookFile) {
		_, found = f.Workspaces[canon]
		delete(f.Workspaces, canon)
	})
	return found, err
}

func (b *Book) read() (*bookFile, error) {
	f := &bookFile{Version: 1, Workspaces: map[string]Record{}}
	data, err := store.ReadRecord(b.Path(), maxBookBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read trust decisions: %w", err)
	}
	if err := json.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("trust decisions %s are not valid JSON (%v); fix or remove the file", b.Path(), err)
	}
	if f.Workspaces == nil {
		f.Workspaces = map[string]Record{}
	}
	return f, nil
}

func (b *Book) update(ctx context.Context, fn func(*bookFile)) error {
	if err := ensurePrivateDir(b.dirs.State); err != nil {
		return err
	}
	unlock, err := lockFile(ctx, filepath.Join(b.dirs.State, "trust.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	f, err := b.read()
	if err != nil {
		return err
	}
	fn(f)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode trust decisions: %w", err)
	}
	return store.WriteFileAtomic(b.Path(), append(data, '\n'), 0o600)
}

// lockFile takes an flock on path, waiting at most until ctx ends.
func lockFile(ctx context.Context, path string) (func(), error) {
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(fh.Fd()), syscall.LOCK_UN); fh.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			fh.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			fh.Close()
			return nil, fmt.Errorf("wait for %s: %w", path, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}
