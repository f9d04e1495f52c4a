package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The sandbox's .git placeholder (an empty file) is no repository: the git
// tools and the views say so, rather than calling it a broken .git file.
func TestEmptyDotGitFileIsNoRepository(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".git"), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveGitLayout(ws); !errors.Is(err, ErrNoRepository) {
		t.Errorf("an empty .git file: %v, want ErrNoRepository", err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".git"), []byte("nonsense\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ge *GitDirError
	if _, err := ResolveGitLayout(ws); !errors.As(err, &ge) {
		t.Errorf("a .git file that is not a gitdir file: %v, want a GitDirError", err)
	}
}
