package main

// Hostile repositories against the git tools and the startup exclude step,
// through the real binary: a scripted orchestrator calls
// git_uncommitted_changes, git_commit and read_file on a repository an
// attacker shipped, and the harness checks that nothing ran, nothing leaked,
// nothing outside changed, and the operator was told why.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/gittest"
	"github.com/guildhall/guildhall/runner/event"
)

// gitRepoIn makes dir a repository with a.txt and .gitattributes committed.
func gitRepoIn(t *testing.T, h *hostile, dir, attributes string) {
	t.Helper()
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	h.write(filepath.Join(dir, "a.txt"), "one\n", 0o644)
	h.write(filepath.Join(dir, ".gitattributes"), attributes, 0o644)
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "first")
}

// readmeRepo makes dir a repository as gitRepoIn does, with a README
// saying readme committed too: another repository than the workspace's.
func readmeRepo(t *testing.T, h *hostile, dir, readme string) string {
	t.Helper()
	h.write(filepath.Join(dir, "README"), readme+"\n", 0o644)
	gitRepoIn(t, h, dir, "")
	return dir
}

// outsideGitdirNote is the startup note of a workspace whose .git file
// leads out of it.
const outsideGitdirNote = "note: .orchestration/ was not added to the git exclude file: the .git file's gitdir is outside the workspace"

// gitGuild writes, outside the workspace, a one-role guild whose
// orchestrator holds the git tools and read_file.
func gitGuild(t *testing.T, h *hostile) string {
	t.Helper()
	return oneRoleGuild(t, h, "Checkpoint the work.", "git_uncommitted_changes", "git_commit", "read_file", "finish")
}

func TestHostileGitRepositories(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	cases := []struct {
		name  string
		plant func(t *testing.T, h *hostile, ws string)
		// What the git tools answer: kind and a phrase of the message.
		kind, message string
		// A phrase of the startup note on stderr, when one is due.
		note string
	}{
		{
			name: "filter driver with = in its name",
			plant: func(t *testing.T, h *hostile, ws string) {
				gitRepoIn(t, h, ws, "* filter=a=b\n")
				evil := filepath.Join(ws, "tools", "evil.sh")
				h.write(evil, "#!/bin/sh\necho filter >> "+h.marker+"\ncat\n", 0o755)
				f, err := os.OpenFile(filepath.Join(ws, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = f.WriteString("[filter \"a=b\"]\n\tclean = " + evil + "\n\tsmudge = " + evil + "\n\tprocess = " + evil + "\n\trequired = true\n")
				f.Close()
				h.write(filepath.Join(ws, "a.txt"), "two\n", 0o644)
			},
			kind: "success",
		},
		{
			name: ".git file pointing at a repository outside",
			plant: func(t *testing.T, h *hostile, ws string) {
				repo := readmeRepo(t, h, filepath.Join(h.outside, "repo"), "outside repository")
				h.write(filepath.Join(ws, ".git"), "gitdir: "+filepath.Join(repo, ".git")+"\n", 0o644)
				h.write(filepath.Join(ws, "a.txt"), "workspace\n", 0o644)
			},
			kind:    "permission_denied",
			message: "the .git file's gitdir is outside the workspace and is another repository's own git directory",
			note:    outsideGitdirNote,
		},
		{
			name: ".git file naming another checkout's linked worktree",
			plant: func(t *testing.T, h *hostile, ws string) {
				repo := readmeRepo(t, h, filepath.Join(h.outside, "repo"), "outside repository")
				gittest.Run(t, repo, "worktree", "add", "-q", "-b", "wt", filepath.Join(h.outside, "wt"))
				h.write(filepath.Join(ws, ".git"), "gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n", 0o644)
				h.write(filepath.Join(ws, "a.txt"), "workspace\n", 0o644)
			},
			kind:    "permission_denied",
			message: "its gitdir file (the worktree's back-pointer) names another checkout's .git",
			note:    outsideGitdirNote,
		},
		{
			name: "a worktree of a repository in ~/.ssh",
			plant: func(t *testing.T, h *hostile, ws string) {
				repo := readmeRepo(t, h, filepath.Join(h.home, ".ssh", "keys"), "keys")
				if err := os.Remove(ws); err != nil {
					t.Fatal(err)
				}
				gittest.Run(t, repo, "worktree", "add", "-q", "-b", "wt", ws)
				h.write(filepath.Join(ws, "a.txt"), "two\n", 0o644)
			},
			kind:    "permission_denied",
			message: "a place the git tools never touch",
			note:    outsideGitdirNote,
		},
		{
			name: "info/exclude linking to a file outside",
			plant: func(t *testing.T, h *hostile, ws string) {
				gitRepoIn(t, h, ws, "")
				exclude := filepath.Join(ws, ".git", "info", "exclude")
				_ = os.Remove(exclude)
				if err := os.Symlink(filepath.Join(h.outside, "notes.txt"), exclude); err != nil {
					t.Fatal(err)
				}
				h.write(filepath.Join(ws, "a.txt"), "two\n", 0o644)
			},
			kind:    "permission_denied",
			message: ".git/info/exclude is a symbolic link to a place outside the workspace",
			note:    "note: .orchestration/ was not added to the git exclude file: info/exclude is a symbolic link",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHostile(t)
			ws := h.workspace("repo")
			c.plant(t, h, ws)
			h.snapshot()
			script := writeScript(t, map[string][][]map[string]any{"orchestrator": {
				{{"name": "git_uncommitted_changes", "args": map[string]any{}}},
				{{"name": "git_commit", "args": map[string]any{"message": "checkpoint"}}},
				{{"name": "read_file", "args": map[string]any{"path": ".git/info/exclude"}}},
				finishTurn("success", "checked"),
			}})
			res := h.run(ws, 0, "run", "--workspace", ws, "--guild", gitGuild(t, h),
				"--provider", "script", "--script", script, "--no-input", "Checkpoint the work")
			h.assertSafe()
			if res.code != 0 {
				t.Fatalf("run: %s", res)
			}
			if c.note != "" && !strings.Contains(res.stderr, c.note) {
				t.Errorf("stderr lacks the note %q:\n%s", c.note, res.stderr)
			}
			if c.note == "" && strings.Contains(res.stderr, "git exclude") {
				t.Errorf("unexpected exclude note:\n%s", res.stderr)
			}
			_, evs := readRun(t, ws)
			seen := map[string]bool{}
			for _, p := range payloadsOf[event.ToolResultPayload](t, evs, event.ToolResult) {
				seen[p.Tool] = true
				if strings.Contains(string(p.Result), "outside notes") || strings.Contains(string(p.Result), h.outside) {
					t.Errorf("%s showed what is outside the workspace: %s", p.Tool, p.Result)
				}
				if !strings.HasPrefix(p.Tool, "git_") {
					continue
				}
				if p.Kind != c.kind || !strings.Contains(string(p.Result), c.message) {
					t.Errorf("%s: want %s with %q, got %s %s", p.Tool, c.kind, c.message, p.Kind, p.Result)
				}
			}
			if !seen["git_uncommitted_changes"] || !seen["git_commit"] {
				t.Errorf("the git tools did not run: %v", seen)
			}
		})
	}
}
