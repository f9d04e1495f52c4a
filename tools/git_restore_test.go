package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/gittest"
	"github.com/guildhall/guildhall/internal/sandboxtest"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// restoreRepo is a workspace repository with a.txt, src/b.txt and
// src/c.txt committed, then a.txt and src/b.txt edited and notes.txt
// created untracked.
func restoreRepo(t *testing.T) (*Workspace, string) {
	t.Helper()
	requireGit(t)
	ws, dir := newWS(t, map[string]string{"a.txt": "one\n", "src/b.txt": "bee\n", "src/c.txt": "sea\n"})
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "first")
	writeTestFile(t, filepath.Join(dir, "a.txt"), "edited\n")
	writeTestFile(t, filepath.Join(dir, "src", "b.txt"), "edited bee\n")
	writeTestFile(t, filepath.Join(dir, "notes.txt"), "untracked\n")
	return ws, dir
}

func TestGitRestoreUndoesEdits(t *testing.T) {
	t.Run("a file from HEAD", func(t *testing.T) {
		ws, dir := restoreRepo(t)
		d := data(t, call(t, testEnv(ws), "git_restore", map[string]any{"paths": []string{"a.txt"}}))
		if got := readString(t, filepath.Join(dir, "a.txt")); got != "one\n" {
			t.Errorf("a.txt: %q", got)
		}
		if got := readString(t, filepath.Join(dir, "src", "b.txt")); got != "edited bee\n" {
			t.Errorf("a file not named was restored: %q", got)
		}
		if got := readString(t, filepath.Join(dir, "notes.txt")); got != "untracked\n" {
			t.Errorf("an untracked file changed: %q", got)
		}
		if d["from"] != "HEAD" || len(d["restored"].([]any)) != 1 {
			t.Errorf("result: %v", d)
		}
	})
	t.Run("a folder, by an absolute path inside", func(t *testing.T) {
		ws, dir := restoreRepo(t)
		data(t, call(t, testEnv(ws), "git_restore", map[string]any{"paths": []string{filepath.Join(dir, "src")}}))
		if got := readString(t, filepath.Join(dir, "src", "b.txt")); got != "bee\n" {
			t.Errorf("src/b.txt: %q", got)
		}
		if got := readString(t, filepath.Join(dir, "a.txt")); got != "edited\n" {
			t.Errorf("a.txt outside the folder was restored: %q", got)
		}
	})
	t.Run("from the index", func(t *testing.T) {
		ws, dir := restoreRepo(t)
		writeTestFile(t, filepath.Join(dir, "a.txt"), "staged\n")
		gittest.Run(t, dir, "add", "a.txt")
		writeTestFile(t, filepath.Join(dir, "a.txt"), "edited again\n")
		data(t, call(t, testEnv(ws), "git_restore", map[string]any{"paths": []string{"a.txt"}, "from": "index"}))
		if got := readString(t, filepath.Join(dir, "a.txt")); got != "staged\n" {
			t.Errorf("a.txt: %q", got)
		}
		if got := gittest.Run(t, dir, "diff", "--cached", "--name-only"); got != "a.txt" {
			t.Errorf("the index changed: %q", got)
		}
	})
	t.Run("the whole tree never overwrites tracked run records", func(t *testing.T) {
		ws, dir := restoreRepo(t)
		// A repository that shipped .orchestration files.
		writeTestFile(t, filepath.Join(dir, ".orchestration", "settings.json"), "{\"shipped\": true}\n")
		gittest.Run(t, dir, "add", "-f", ".orchestration/settings.json")
		gittest.Run(t, dir, "commit", "-q", "-m", "records")
		writeTestFile(t, filepath.Join(dir, ".orchestration", "settings.json"), "{\"effort\": \"quick\"}\n")
		data(t, call(t, testEnv(ws), "git_restore", map[string]any{"paths": []string{"."}}))
		if got := readString(t, filepath.Join(dir, "a.txt")); got != "one\n" {
			t.Errorf("a.txt: %q", got)
		}
		if got := readString(t, filepath.Join(dir, ".orchestration", "settings.json")); got != "{\"effort\": \"quick\"}\n" {
			t.Errorf("the run records were restored from HEAD: %q", got)
		}
	})
	t.Run("a tracked file's link inside restores its target", func(t *testing.T) {
		ws, dir := restoreRepo(t)
		if err := os.Symlink("a.txt", filepath.Join(dir, "alias.txt")); err != nil {
			t.Fatal(err)
		}
		data(t, call(t, testEnv(ws), "git_restore", map[string]any{"paths": []string{"alias.txt"}}))
		if got := readString(t, filepath.Join(dir, "a.txt")); got != "one\n" {
			t.Errorf("a.txt: %q", got)
		}
	})
}

// TestGitRestoreRefusesHostilePaths: every path that leaves the workspace,
// names .git or .orchestration, or would widen into a pattern is refused
// or matches nothing, and no file changes.
func TestGitRestoreRefusesHostilePaths(t *testing.T) {
	cases := []struct {
		name, path, kind, message string
	}{
		{"climbing out", "../outside/a.txt", KindPermissionDenied, "outside the workspace"},
		{"absolute outside", "/etc/passwd", KindPermissionDenied, "outside the workspace"},
		{"link to a folder outside", "out/a.txt", KindPermissionDenied, "outside the workspace"},
		{"link to a file outside", "secret-link", KindPermissionDenied, "outside the workspace"},
		{".git", ".git", KindPermissionDenied, ".git is never restored"},
		{".git config", ".git/config", KindPermissionDenied, ".git is never restored"},
		{"a nested .git in another case", "src/.GIT/HEAD", KindPermissionDenied, ".git is never restored"},
		{".orchestration", ".orchestration/runs", KindPermissionDenied, ".orchestration"},
		{".orchestration in another case", ".Orchestration", KindPermissionDenied, ".orchestration"},
		{"a glob", "*.txt", KindNotFound, "did not match"},
		{"pathspec magic", ":(glob)**", KindNotFound, "did not match"},
		{"an option", "--source=main", KindNotFound, "did not match"},
		{"an untracked file", "notes.txt", KindNotFound, "tracked files only"},
		{"look-alike dots", "\u2024\u2024/a.txt", KindPermissionDenied, "look-alike dots"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, dir := restoreRepo(t)
			outside := filepath.Join(filepath.Dir(dir), "outside")
			writeTestFile(t, filepath.Join(outside, "a.txt"), "outside\n")
			if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(outside, "a.txt"), filepath.Join(dir, "secret-link")); err != nil {
				t.Fatal(err)
			}
			before := tree(t, filepath.Dir(dir))
			r := call(t, testEnv(ws), "git_restore", map[string]any{"paths": []string{"a.txt", c.path}})
			if r.Kind != c.kind || !strings.Contains(r.Message, c.message) {
				t.Errorf("want %s with %q, got %s: %s", c.kind, c.message, r.Kind, r.Message)
			}
			if strings.Contains(r.Message, ":(top") {
				t.Errorf("the message shows the pathspec magic: %s", r.Message)
			}
			if after := tree(t, filepath.Dir(dir)); after != before {
				t.Errorf("files changed:\n%s\n---\n%s", before, after)
			}
		})
	}
}

// TestGitRestoreRunsNoFilter: restoring through a repository whose
// filter driver would run a program writes the blob as it is.
func TestGitRestoreRunsNoFilter(t *testing.T) {
	ws, dir := restoreRepo(t)
	marker := filepath.Join(filepath.Dir(dir), "marker")
	script := filepath.Join(filepath.Dir(dir), "smudge.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, ".git", "info", "attributes"), "* filter=evil\n")
	for k, v := range map[string]string{"filter.evil.smudge": script, "filter.evil.clean": script, "filter.evil.process": script, "filter.evil.required": "true"} {
		gittest.Run(t, dir, "config", k, v)
	}
	data(t, call(t, testEnv(ws), "git_restore", map[string]any{"paths": []string{"a.txt", "src"}}))
	if _, err := os.Stat(marker); err == nil {
		t.Error("a filter driver ran")
	}
	if got := readString(t, filepath.Join(dir, "a.txt")); got != "one\n" {
		t.Errorf("a.txt: %q", got)
	}
}

// TestGitRestoreSandboxed: in real bubblewrap, git_restore writes the
// work tree in workspace-write mode and cannot in read-only mode.
func TestGitRestoreSandboxed(t *testing.T) {
	sandboxtest.Need(t)
	for _, mode := range []string{"workspace-write", "read-only"} {
		t.Run(mode, func(t *testing.T) {
			ws, dir := restoreRepo(t)
			env := testEnv(ws)
			env.Sandbox = confined(t, ws, sandbox.Config{Mode: mode})
			r := call(t, env, "git_restore", map[string]any{"paths": []string{"a.txt"}})
			got := readString(t, filepath.Join(dir, "a.txt"))
			switch {
			case mode == "workspace-write" && (r.Failed() || got != "one\n"):
				t.Errorf("restore: %s %s; a.txt %q", r.Kind, r.Message, got)
			case mode == "read-only" && (!r.Failed() || got != "edited\n"):
				t.Errorf("a read-only sandbox let git_restore write: %v; a.txt %q", r, got)
			}
		})
	}
}
