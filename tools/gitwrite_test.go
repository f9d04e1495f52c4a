package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitLayouts builds, in a fresh workspace, each way a workspace can hold
// a git directory the operator's git would use.
var gitLayouts = map[string]func(t *testing.T, ws string){
	".git folder": func(t *testing.T, ws string) {
		writeAll(t, ws, map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", ".git/hooks/README": "hooks\n"})
		mkdirs(t, ws, ".git/objects", ".git/refs")
	},
	"gitdir file to a folder inside": func(t *testing.T, ws string) {
		writeAll(t, ws, map[string]string{".git": "gitdir: repo.git\n", "repo.git/HEAD": "ref: refs/heads/main\n", "repo.git/config": "[core]\n"})
		mkdirs(t, ws, "repo.git/objects", "repo.git/refs")
	},
	"gitdir file to a folder not made yet": func(t *testing.T, ws string) {
		writeAll(t, ws, map[string]string{".git": "gitdir: later\n"})
	},
	"commondir elsewhere inside": func(t *testing.T, ws string) {
		writeAll(t, ws, map[string]string{".git": "gitdir: wt\n", "wt/HEAD": "ref: refs/heads/main\n", "wt/commondir": "../common\n",
			"common/HEAD": "ref: refs/heads/main\n", "common/config": "[core]\n"})
		mkdirs(t, ws, "common/objects", "common/refs")
	},
	"bare repository in a folder": func(t *testing.T, ws string) {
		writeAll(t, ws, map[string]string{"vendor/lib.git/HEAD": "ref: refs/heads/main\n", "vendor/lib.git/config": "[core]\n"})
		mkdirs(t, ws, "vendor/lib.git/objects", "vendor/lib.git/refs")
	},
}

func mkdirs(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFileToolsRefuseGitDirectories plays a workspace that talks the model
// into planting core.fsmonitor or a hook: every spelling of a path into a
// git directory is refused with permission_denied, by both writing tools,
// and nothing is written.
func TestFileToolsRefuseGitDirectories(t *testing.T) {
	cases := []struct {
		layout string
		paths  []string
	}{
		{".git folder", []string{".git/config", ".git/hooks/pre-commit", ".git/hooks/new/x", ".GIT/config", ".Git/hooks/post-checkout",
			".git./config", ".git /config", ".git\u200c/config", "git~1/config", ".git::$INDEX_ALLOCATION/config",
			"a/../.git/config", "./.git/config", ".git", "sub/.git/config", "sub/.git", "deep/er/.GIT/hooks/pre-push",
			"gitlink/config", "gitlink/hooks/pre-commit", "configlink", "hooklink/pre-commit"}},
		{"gitdir file to a folder inside", []string{"repo.git/config", "repo.git/hooks/pre-commit", "REPO.GIT/config", "gitlink/config", ".git"}},
		{"gitdir file to a folder not made yet", []string{"later/config", "later/hooks/pre-commit", "later/HEAD"}},
		{"commondir elsewhere inside", []string{"common/config", "common/hooks/pre-commit", "wt/config.worktree", "wt/HEAD"}},
		{"bare repository in a folder", []string{"vendor/lib.git/config", "vendor/lib.git/hooks/post-update"}},
	}
	for _, c := range cases {
		for _, p := range c.paths {
			for _, tool := range []string{"write_file", "edit_file"} {
				t.Run(c.layout+"/"+tool+"/"+p, func(t *testing.T) {
					ws, dir := newWS(t, nil)
					gitLayouts[c.layout](t, dir)
					// Links a command could have made: into .git, at its config,
					// at its hooks folder.
					gitdir := ".git"
					if c.layout == "gitdir file to a folder inside" {
						gitdir = "repo.git"
					}
					for name, target := range map[string]string{"gitlink": gitdir, "configlink": gitdir + "/config", "hooklink": gitdir + "/hooks"} {
						_ = os.Symlink(target, filepath.Join(dir, name))
					}
					before := snapshot(t, dir)
					env := testEnv(ws)
					args := map[string]any{"path": p, "content": "[core]\n\tfsmonitor = touch /tmp/pwned\n"}
					if tool == "edit_file" {
						args = map[string]any{"path": p, "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = touch /tmp/pwned"}
					}
					r := call(t, env, tool, args)
					if r.Kind != KindPermissionDenied || !strings.Contains(r.Message, "git directory") {
						t.Fatalf("%s %q: got %s %q, want permission_denied naming the git directory", tool, p, r.Kind, r.Message)
					}
					if after := snapshot(t, dir); after != before {
						t.Errorf("%s %q changed the workspace:\n%s\n->\n%s", tool, p, before, after)
					}
				})
			}
		}
	}
}

// TestFileToolsStillWriteTheProject checks the refusal's edges: the
// project's own git-related files, names that merely contain "git", and a
// lone HEAD file are ordinary files.
func TestFileToolsStillWriteTheProject(t *testing.T) {
	ws, dir := newWS(t, nil)
	gitLayouts[".git folder"](t, dir)
	env := testEnv(ws)
	for _, p := range []string{".gitignore", ".gitattributes", ".gitmodules", ".github/workflows/ci.yml", "docs/.gitkeep",
		"src/git/repo.go", "my.git.txt", ".gitx/config", "git/config", "config", "HEAD", "tools/HEAD", "tools/objects/x"} {
		if r := call(t, env, "write_file", map[string]any{"path": p, "content": "ok\n"}); r.Failed() {
			t.Errorf("write_file %q: %s %s", p, r.Kind, r.Message)
		}
	}
	if r := call(t, env, "edit_file", map[string]any{"path": ".gitignore", "old_string": "ok", "new_string": "bin/"}); r.Failed() {
		t.Errorf("edit_file .gitignore: %s %s", r.Kind, r.Message)
	}
	// Reading the git directory stays allowed.
	if r := call(t, env, "read_file", map[string]any{"path": ".git/config"}); r.Failed() {
		t.Errorf("read_file .git/config: %s %s", r.Kind, r.Message)
	}
}

// TestFileToolsCannotAssembleAGitDirectory writes a bare repository file
// by file: the write that would make the folder a git directory (HEAD,
// objects/ and refs/ together) is refused, and so is every write after.
func TestFileToolsCannotAssembleAGitDirectory(t *testing.T) {
	ws, dir := newWS(t, nil)
	env := testEnv(ws)
	for _, p := range []string{"evil/HEAD", "evil/config", "evil/objects/info/packs"} {
		if r := call(t, env, "write_file", map[string]any{"path": p, "content": "x\n"}); r.Failed() {
			t.Fatalf("write_file %q (not yet a git directory): %s %s", p, r.Kind, r.Message)
		}
	}
	r := call(t, env, "write_file", map[string]any{"path": "evil/refs/heads/main", "content": "0000\n"})
	if r.Kind != KindPermissionDenied {
		t.Fatalf("the write completing a git directory: %s %s", r.Kind, r.Message)
	}
	if _, err := os.Lstat(filepath.Join(dir, "evil", "refs")); err == nil {
		t.Errorf("evil/refs was created")
	}
	// A folder a command completed is a git directory: no more writes.
	mkdirs(t, dir, "evil/refs")
	if r := call(t, env, "write_file", map[string]any{"path": "evil/config", "content": "[core]\n\tfsmonitor = x\n"}); r.Kind != KindPermissionDenied {
		t.Errorf("write into a completed git directory: %s %s", r.Kind, r.Message)
	}
}

// TestGitWriteSwapRace swaps a folder for a link into .git/hooks (a link
// inside the workspace, which os.Root would follow) while write_file
// writes a hook-named file into it. The check passes on the real folder;
// the write must never land in .git.
func TestGitWriteSwapRace(t *testing.T) {
	ws, dir := newWS(t, map[string]string{"d/keep": "x\n"})
	gitLayouts[".git folder"](t, dir)
	env := testEnv(ws)
	gitBefore := snapshot(t, filepath.Join(dir, ".git"))
	d, real := filepath.Join(dir, "d"), filepath.Join(dir, "d.real")
	stop := swapLoop(d, real, 20*time.Microsecond, ".git/hooks")
	ok := 0
	for i := 0; i < 2000; i++ {
		if r := call(t, env, "write_file", map[string]any{"path": "d/pre-commit", "content": "#!/bin/sh\ntouch /tmp/pwned\n"}); !r.Failed() {
			ok++
		}
	}
	stop()
	if after := snapshot(t, filepath.Join(dir, ".git")); after != gitBefore {
		t.Fatalf("a write through a swapped folder landed in .git:\n%s\n->\n%s", gitBefore, after)
	}
	if ok == 0 {
		t.Error("no write succeeded: the race test tested nothing")
	}
	t.Logf("%d of 2000 writes succeeded in the real folder", ok)
}

// TestWritePlanRefusesLinkedRunFolder plants the run folder as a link into
// .git (a sandboxed command can write .orchestration): write_plan refuses
// it instead of writing into the git directory.
func TestWritePlanRefusesLinkedRunFolder(t *testing.T) {
	ws, dir := newWS(t, nil)
	gitLayouts[".git folder"](t, dir)
	env := testEnv(ws)
	mkdirs(t, dir, ".orchestration/runs")
	if err := os.Symlink("../../.git/hooks", filepath.Join(dir, ".orchestration", "runs", env.RunID)); err != nil {
		t.Fatal(err)
	}
	r := call(t, env, "write_plan", map[string]any{"content": "# plan\n"})
	if !r.Failed() {
		t.Fatalf("write_plan through a linked run folder succeeded")
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git", "hooks", "plan.md")); err == nil {
		t.Fatal("write_plan wrote into .git/hooks")
	}
	if r := call(t, env, "read_plan", map[string]any{}); !r.Failed() {
		t.Errorf("read_plan through a linked run folder: %s", resultJSON(t, r))
	}
}
