package sandbox

// A workspace without .git when its sandbox starts must not gain one from
// a command: a `git init` inside, followed by `git config core.fsmonitor`
// or a hook, would arm the operator's next plain `git status` on the host,
// unconfined. The sandbox mounts whatever .git exists read-only, so the
// guard makes one exist: an empty, read-only placeholder file at
// <ws>/.git, bound read-only over itself in every sandbox that can write
// the workspace. mkdir .git then fails (the name exists), the file cannot
// be written, and as a mount point it cannot be removed or renamed from
// inside. git_init, the one way a repository is made, removes the
// placeholder first (releaseGit), and the helper restarts with the new
// .git mounted read-only.
//
// The placeholder is a host file (a bind needs its mount point), so it is
// removed when the sandbox closes. Several sandboxes may use one: each
// holds a shared flock on a file under $XDG_STATE_HOME/guildhall/sandbox/
// named after the workspace, and only one that gets the lock exclusively
// removes the placeholder (unlinking a mount point detaches it in every
// sandbox that still binds it). After a crash the empty file stays; the
// next sandbox on the workspace adopts it and removes it when it closes.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// gitGuard is one sandbox's hold on its workspace's placeholder.
type gitGuard struct {
	lock  *os.File // shared flock while the placeholder may be in use
	ident string   // the placeholder's fileIdent, "" when it holds none
}

// isPlaceholder reports whether fi is what the guard makes: an empty
// regular file, not writable by anyone.
func isPlaceholder(fi fs.FileInfo) bool {
	return fi.Mode().IsRegular() && fi.Size() == 0 && fi.Mode().Perm()&0o222 == 0
}

// guardGit makes sure a workspace with no .git has the placeholder, when p
// lets commands write the workspace. It is called before every sandbox's
// layout is read; the placeholder then shows as a .git to bind read-only.
func (s *Sandbox) guardGit(p Policy) error {
	if p.mode == ReadOnly || !p.Confined() {
		return nil
	}
	s.guardMu.Lock()
	defer s.guardMu.Unlock()
	dotgit := filepath.Join(s.opts.Workspace, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err == nil && !isPlaceholder(fi):
		return nil // a real .git (or something else the mounts handle)
	case err == nil && fileIdent(fi) == s.guard.ident:
		return nil // ours, still in place
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("look at %s: %w", dotgit, err)
	}
	if err := s.lockGuard(); err != nil {
		return err
	}
	if err == nil {
		// An earlier run's placeholder, or another sandbox's: adopt it.
		s.guard.ident = fileIdent(fi)
		return nil
	}
	f, err := os.OpenFile(dotgit, os.O_CREATE|os.O_EXCL|os.O_RDONLY|syscall.O_NOFOLLOW, 0o444)
	if err != nil {
		return fmt.Errorf("place the .git placeholder that keeps commands from making a repository: %w", err)
	}
	fi, err = f.Stat()
	f.Close()
	if err != nil {
		return fmt.Errorf("place the .git placeholder: %w", err)
	}
	s.guard.ident = fileIdent(fi)
	return nil
}

// lockGuard takes the shared lock on the workspace's placeholder. The
// caller holds guardMu.
func (s *Sandbox) lockGuard() error {
	if s.guard.lock != nil {
		return nil
	}
	state := hostPaths().state
	if state == "" {
		return nil // no state folder: a lone sandbox still works
	}
	dir := filepath.Join(state, "sandbox")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	sum := sha256.Sum256([]byte(s.opts.Workspace))
	name := filepath.Join(dir, "git-"+hex.EncodeToString(sum[:12])+".lock")
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return fmt.Errorf("lock %s: %w", name, err)
	}
	s.guard.lock = f
	return nil
}

// ClearGitPlaceholder removes the workspace's .git placeholder (this
// sandbox's, or one an earlier run left) so that git_init can make the
// repository; the helper restarts at its next command with the new .git
// mounted read-only. It fails while another sandbox on the workspace
// still relies on the placeholder.
func (s *Sandbox) ClearGitPlaceholder() error {
	dotgit := filepath.Join(s.opts.Workspace, ".git")
	if fi, err := os.Lstat(dotgit); err != nil || !isPlaceholder(fi) {
		return nil
	}
	s.guardMu.Lock()
	defer s.guardMu.Unlock()
	if err := s.lockGuard(); err != nil {
		return err
	}
	if l := s.guard.lock; l != nil {
		if err := syscall.Flock(int(l.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = syscall.Flock(int(l.Fd()), syscall.LOCK_SH)
			return errors.New("another Guildhall sandbox on this workspace keeps commands from creating .git; run git_init when it has finished")
		}
		defer syscall.Flock(int(l.Fd()), syscall.LOCK_SH)
	}
	s.guard.ident = ""
	if fi, err := os.Lstat(dotgit); err == nil && isPlaceholder(fi) {
		if err := os.Remove(dotgit); err != nil {
			return fmt.Errorf("remove the .git placeholder: %w", err)
		}
	}
	return nil
}

// releaseGit, at Close, removes the placeholder when no other sandbox
// uses it, and drops the lock.
func (s *Sandbox) releaseGit() {
	s.guardMu.Lock()
	defer s.guardMu.Unlock()
	exclusive := true
	if s.guard.lock != nil {
		exclusive = syscall.Flock(int(s.guard.lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
	}
	dotgit := filepath.Join(s.opts.Workspace, ".git")
	if fi, err := os.Lstat(dotgit); exclusive && s.guard.ident != "" && err == nil && isPlaceholder(fi) && fileIdent(fi) == s.guard.ident {
		_ = os.Remove(dotgit)
	}
	s.guard.ident = ""
	if s.guard.lock != nil {
		s.guard.lock.Close() // releases the lock
		s.guard.lock = nil
	}
}
