package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/gittest"
)

type fakeMeta struct{ base string }

func (m *fakeMeta) GitBase() string                { return m.base }
func (m *fakeMeta) SetGitBase(commit string) error { m.base = commit; return nil }

// TestGitRunsNoRepositoryPrograms sets up a repository whose config and
// hooks would each touch a marker file, and runs every git tool.
func TestGitRunsNoRepositoryPrograms(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ws, dir := newWS(t, map[string]string{"a.txt": "one\n", ".gitattributes": "*.txt filter=evil diff=evil\n"})
	markers := filepath.Join(filepath.Dir(dir), "markers")
	hooks := filepath.Join(filepath.Dir(dir), "hooks")
	for _, d := range []string{markers, hooks} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := func(path, marker string) string {
		body := "#!/bin/sh\ntouch " + filepath.Join(markers, marker) + "\ncat\n"
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	gittest.Run(t, dir, "init", "-q")
	cfg := map[string]string{
		"core.hooksPath":       hooks,
		"core.fsmonitor":       script(filepath.Join(hooks, "fsmonitor"), "fsmonitor"),
		"core.pager":           script(filepath.Join(hooks, "pager"), "pager"),
		"filter.evil.clean":    script(filepath.Join(hooks, "clean"), "clean"),
		"filter.evil.smudge":   script(filepath.Join(hooks, "smudge"), "smudge"),
		"filter.evil.required": "true",
		"diff.external":        script(filepath.Join(hooks, "extdiff"), "extdiff"),
		"diff.evil.textconv":   script(filepath.Join(hooks, "textconv"), "textconv"),
		"core.editor":          script(filepath.Join(hooks, "editor"), "editor"),
		"commit.gpgsign":       "true",
		"gpg.program":          script(filepath.Join(hooks, "gpg"), "gpg"),
	}
	for k, v := range cfg {
		gittest.Run(t, dir, "config", k, v)
	}
	for _, hook := range []string{"pre-commit", "post-commit", "commit-msg", "prepare-commit-msg", "reference-transaction", "post-index-change"} {
		script(filepath.Join(hooks, hook), "hooksPath-"+hook)
		script(filepath.Join(dir, ".git", "hooks", hook), "dotgit-"+hook)
	}
	t.Setenv("GIT_EXTERNAL_DIFF", script(filepath.Join(hooks, "envdiff"), "envdiff"))
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.hooksPath'='"+hooks+"'")

	meta := &fakeMeta{}
	env := testEnv(ws)
	env.Meta = meta
	steps := []struct {
		tool string
		args map[string]any
	}{
		{"git_init", map[string]any{}},
		{"git_commit", map[string]any{"message": "first"}},
		{"git_set_base", map[string]any{}},
		{"git_branch", map[string]any{"name": "before-change"}},
	}
	for _, s := range steps {
		data(t, call(t, env, s.tool, s.args))
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u := data(t, call(t, env, "git_uncommitted_changes", map[string]any{}))
	if !strings.Contains(u["status"].(string), "a.txt") || !strings.Contains(u["patch"].(string), "+two") {
		t.Errorf("uncommitted: %v", u)
	}
	data(t, call(t, env, "git_commit", map[string]any{"message": "-second\n\nbody"}))
	c := data(t, call(t, env, "git_changes_since_base", map[string]any{}))
	if !strings.Contains(c["patch"].(string), "+two") || !strings.Contains(c["stat"].(string), "a.txt") {
		t.Errorf("changes since base: %v", c)
	}

	ents, _ := os.ReadDir(markers)
	for _, e := range ents {
		t.Errorf("a repository-configured program ran: %s", e.Name())
	}
	if got := gittest.Run(t, dir, "log", "-1", "--format=%an <%ae>|%s"); got != "Guildhall <guildhall@localhost>|-second" {
		t.Errorf("last commit: %q", got)
	}
	if got := gittest.Run(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); got == "before-change" {
		t.Error("git_branch checked the branch out")
	}
	if got := gittest.Run(t, dir, "rev-parse", "before-change"); got != meta.base {
		t.Errorf("branch at %s, base %s", got, meta.base)
	}
	if out := gittest.Run(t, dir, "ls-files"); strings.Contains(out, ".orchestration") {
		t.Errorf(".orchestration committed: %s", out)
	}
}

func TestGitCommitSkipsBookkeepingAndReportsNothingToCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ws, dir := newWS(t, map[string]string{"a.txt": "a\n", ".orchestration/runs/r/log.jsonl": "{}\n"})
	env := testEnv(ws)
	data(t, call(t, env, "git_init", map[string]any{}))
	data(t, call(t, env, "git_commit", map[string]any{"message": "m"}))
	if out := gittest.Run(t, dir, "ls-files"); out != "a.txt" {
		t.Errorf("tracked: %q", out)
	}
	if r := call(t, env, "git_commit", map[string]any{"message": "again"}); r.Kind != KindError || !strings.Contains(r.Message, "nothing to commit") {
		t.Errorf("%v", r)
	}
	if r := call(t, env, "git_changes_since_base", map[string]any{}); r.Kind != KindUnavailable {
		t.Errorf("no meta: %v", r)
	}
	env.Meta = &fakeMeta{}
	if r := call(t, env, "git_set_base", map[string]any{"commit": "nope"}); r.Kind != KindNotFound {
		t.Errorf("bad commit: %v", r)
	}
}

func TestGitDoesNotClimbToParentRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ws, dir := newWS(t, map[string]string{"a.txt": "a\n"})
	gittest.Run(t, filepath.Dir(dir), "init", "-q")
	r := call(t, testEnv(ws), "git_uncommitted_changes", map[string]any{})
	if r.Kind != KindError || !strings.Contains(r.Message, "not a git repository") {
		t.Errorf("%v", r)
	}
	if strings.Contains(r.Message, dir) {
		t.Errorf("message reveals the workspace path: %s", r.Message)
	}
}

func TestBranchNameValidation(t *testing.T) {
	good := []string{"feature", "fix/issue-12", "a.b", "release_1"}
	bad := []string{"", "-delete", "a..b", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b", "@", "HEAD", "a/", "/a", "a.", "a//b",
		".hidden", "a/.b", "x.lock", "a@{1}", "a\x00b", "a\nb", strings.Repeat("x", 201)}
	for _, n := range good {
		if err := validBranchName(n); err != nil {
			t.Errorf("%q refused: %v", n, err)
		}
	}
	for _, n := range bad {
		if validBranchName(n) == nil {
			t.Errorf("%q accepted", n)
		}
	}
	for _, rev := range []string{"--output=/tmp/x", "a..b", "HEAD@{1}", "a b", ""} {
		if validRevision(rev) == nil {
			t.Errorf("revision %q accepted", rev)
		}
	}
}
