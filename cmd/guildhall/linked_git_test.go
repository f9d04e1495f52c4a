package main

// A linked worktree and a submodule checkout as workspaces, through the
// real binary and its default sandbox: a scripted orchestrator calls every
// git tool, git_restore and a `git` command in run_shell. Their git
// directories lie outside the workspace, in /tmp, which the sandbox
// replaces with its own, so each works only because the checked git
// directories are bound in.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/gittest"
	"github.com/guildhall/guildhall/runner/event"
)

// oneRoleGuild writes, outside the workspace, a guild whose one role,
// orchestrator, has prompt and holds tools.
func oneRoleGuild(t *testing.T, h *hostile, prompt string, tools ...string) string {
	t.Helper()
	return h.roleGuild(filepath.Join(h.root, "guild"), "orchestrator", prompt, tools...)
}

// linkedGuild holds every git tool, write_file and run_shell.
func linkedGuild(t *testing.T, h *hostile) string {
	return oneRoleGuild(t, h, "Checkpoint the work.", "git_init", "git_set_base", "git_branch", "git_commit",
		"git_uncommitted_changes", "git_changes_since_base", "git_restore", "write_file", "run_shell", "finish")
}

func TestLinkedCheckoutsEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	cases := []struct {
		name string
		// make builds the repositories under repos and returns the
		// workspace, its common git directory, and the checkout whose
		// working tree must not change.
		make func(t *testing.T, h *hostile, repos string) (ws, common, other string)
	}{
		{"linked worktree", func(t *testing.T, h *hostile, repos string) (string, string, string) {
			main := filepath.Join(repos, "main")
			mkdirs(t, main)
			gitRepoIn(t, h, main, "")
			ws := filepath.Join(repos, "wt")
			gittest.Run(t, main, "worktree", "add", "-q", "-b", "feature", ws)
			return ws, filepath.Join(main, ".git"), main
		}},
		{"submodule checkout", func(t *testing.T, h *hostile, repos string) (string, string, string) {
			lib, super := filepath.Join(repos, "lib"), filepath.Join(repos, "super")
			mkdirs(t, lib)
			gitRepoIn(t, h, lib, "")
			h.write(filepath.Join(super, "super.txt"), "superproject\n", 0o644)
			gittest.Run(t, super, "init", "-q", "-b", "main")
			gittest.Run(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
			gittest.Run(t, super, "add", "-A")
			gittest.Run(t, super, "commit", "-q", "-m", "super")
			ws := filepath.Join(super, "lib")
			gittest.Run(t, ws, "checkout", "-q", "-b", "feature")
			return ws, filepath.Join(super, ".git", "modules", "lib"), super
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHostile(t)
			ws, common, other := c.make(t, h, filepath.Join(h.root, "repos"))
			h.write(filepath.Join(ws, "a.txt"), "two\n", 0o644)
			otherBefore := workTreeSums(t, other)
			h.snapshot()
			script := writeScript(t, map[string][][]map[string]any{"orchestrator": {
				{{"name": "git_init", "args": map[string]any{}}},
				{{"name": "git_set_base", "args": map[string]any{}}},
				{{"name": "git_uncommitted_changes", "args": map[string]any{}}},
				{{"name": "git_branch", "args": map[string]any{"name": "checkpoint"}}},
				{{"name": "git_commit", "args": map[string]any{"message": "linked work"}}},
				{{"name": "write_file", "args": map[string]any{"path": "a.txt", "content": "a mistake\n"}}},
				{{"name": "git_restore", "args": map[string]any{"paths": []string{"a.txt"}}}},
				{{"name": "git_changes_since_base", "args": map[string]any{}}},
				{{"name": "run_shell", "args": map[string]any{"command": "git log -1 --format=%s; echo x > " + filepath.Join(common, "info", "planted")}}},
				finishTurn("success", "checkpointed"),
			}})
			res := h.run(ws, 0, "run", "--workspace", ws, "--guild", linkedGuild(t, h),
				"--provider", "script", "--script", script, "--no-input", "Checkpoint the work")
			h.assertSafe()
			if res.code != 0 {
				t.Fatalf("run: %s", res)
			}
			if strings.Contains(res.stderr, "git exclude") {
				t.Errorf("the exclude step was skipped:\n%s", res.stderr)
			}
			_, evs := readRun(t, ws)
			results := map[string]event.ToolResultPayload{}
			for _, p := range payloadsOf[event.ToolResultPayload](t, evs, event.ToolResult) {
				results[p.Tool] = p
			}
			for _, tool := range []string{"git_init", "git_set_base", "git_uncommitted_changes", "git_branch", "git_commit", "write_file", "git_restore", "git_changes_since_base", "run_shell"} {
				if p, ok := results[tool]; !ok || p.Kind != "success" {
					t.Errorf("%s: %s %s", tool, p.Kind, p.Result)
				}
			}
			shell := string(results["run_shell"].Result)
			if !strings.Contains(shell, `"stdout":"linked work\n"`) || !strings.Contains(strings.ToLower(shell), "read-only file system") {
				t.Errorf("run_shell did not see the repository read-only: %s", shell)
			}
			if _, err := os.Lstat(filepath.Join(common, "info", "planted")); err == nil {
				t.Error("a command wrote into the repository's git directory")
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "two\n" {
				t.Errorf("git_restore left a.txt as %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(common, "info", "exclude")); !strings.Contains(string(b), "/.orchestration/") {
				t.Errorf("no exclude entry in the common directory: %q", b)
			}
			if got := gittest.Run(t, ws, "log", "-1", "--format=%s", "feature"); got != "linked work" {
				t.Errorf("the feature branch: %q", got)
			}
			if got := gittest.Run(t, ws, "rev-parse", "checkpoint^{commit}"); got == "" {
				t.Error("no checkpoint branch")
			}
			if got := gittest.Run(t, ws, "ls-files"); strings.Contains(got, ".orchestration") {
				t.Errorf("run records committed: %s", got)
			}
			after := workTreeSums(t, other)
			for p, sum := range otherBefore {
				if after[p] != sum {
					t.Errorf("%s of the other checkout changed", p)
				}
			}
		})
	}
}

// workTreeSums checksums a checkout's files, its .git and the workspace
// (a submodule inside it) left out.
func workTreeSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := checksums(t, dir)
	for p := range sums {
		rel, _ := filepath.Rel(dir, p)
		if first, _, _ := strings.Cut(rel, string(filepath.Separator)); first == ".git" || first == "lib" {
			delete(sums, p)
		}
	}
	return sums
}
