package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const excludeEntry = "/.orchestration/"

// EnsureGitExclude adds .orchestration/ to the workspace's git exclude file
// (.git/info/exclude), following a worktree's or submodule's `.git` file to
// its gitdir. It is idempotent and does nothing outside a git repository.
func (w Workspace) EnsureGitExclude() error {
	gitDir, err := resolveGitDir(w.Dir)
	if err != nil || gitDir == "" {
		return err
	}
	// A linked worktree's info/exclude is ignored by git; the common dir's
	// is the one that applies.
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		gitDir = filepath.Clean(common)
	}
	path := filepath.Join(gitDir, "info", "exclude")
	existing, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read git exclude: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(existing))
	for sc.Scan() {
		switch strings.TrimSpace(sc.Text()) {
		case excludeEntry, ".orchestration/", ".orchestration", "/.orchestration":
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create git info dir: %w", err)
	}
	var buf bytes.Buffer
	buf.Write(existing)
	if len(existing) > 0 && existing[len(existing)-1] != '\n' {
		buf.WriteByte('\n')
	}
	buf.WriteString("# Guildhall run records\n" + excludeEntry + "\n")
	return WriteFileAtomic(path, buf.Bytes(), 0o644)
}

// resolveGitDir returns the git directory of the repository rooted at dir:
// dir/.git when it is a directory, the gitdir a `.git` file points to, or ""
// when dir is not a repository root.
func resolveGitDir(dir string) (string, error) {
	dotGit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotGit)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("inspect .git: %w", err)
	}
	if fi.IsDir() {
		return dotGit, nil
	}
	if !fi.Mode().IsRegular() {
		return "", nil
	}
	b, err := os.ReadFile(dotGit)
	if err != nil {
		return "", fmt.Errorf("read .git file: %w", err)
	}
	line := strings.TrimSpace(string(b))
	target, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", nil
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	return filepath.Clean(target), nil
}
