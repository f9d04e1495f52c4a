package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/guildhall/guildhall/store"
)

// Git output caps, in characters.
const (
	gitPatchMaxChars  = 50_000
	gitStatMaxChars   = 10_000
	gitStatusMaxChars = 20_000
	gitErrMaxChars    = 2_000
)

// Identity every git tool commits as.
const (
	gitName  = "Guildhall"
	gitEmail = "guildhall@localhost"
)

// gitHardening is passed with -c before every git subcommand: no hooks, no
// fsmonitor hook, no pager, no signing, no credential helper, no automatic
// gc, no submodule recursion, and a pinned identity. Command-line config
// outranks every config file, the repository's own included.
func gitHardening() []string {
	return []string{
		"core.hooksPath=/dev/null",
		"core.fsmonitor=false",
		"core.pager=cat",
		"commit.gpgsign=false",
		"tag.gpgsign=false",
		"credential.helper=",
		"gc.auto=0",
		"maintenance.auto=false",
		"diff.ignoreSubmodules=all",
		"status.submoduleSummary=false",
		"user.name=" + gitName,
		"user.email=" + gitEmail,
		"init.defaultBranch=main",
		"color.ui=false",
	}
}

// gitDiffFlags keep a diff from running configured external diff and
// textconv programs.
func gitDiffFlags() []string {
	return []string{"--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all"}
}

// gitNotBookkeeping is a pathspec that leaves .orchestration out.
const gitNotBookkeeping = ":(top,exclude).orchestration"

// gitError is a git command that failed; Msg is its trimmed stderr.
type gitError struct {
	Kind string
	Msg  string
}

func (e *gitError) Error() string { return e.Msg }

// gitFail turns a git error into a result.
func gitFail(what string, err error) Result {
	var ge *gitError
	if errors.As(err, &ge) {
		return Fail(ge.Kind, what+": "+ge.Msg)
	}
	return Fail(KindError, what+": "+err.Error())
}

// git runs one git command in the workspace with a fixed argv (never a
// shell), the hardening config, and an environment that has no secrets, no
// inherited GIT_* variables (GIT_DIR, GIT_CONFIG_*, GIT_EXTERNAL_DIFF ...),
// no system or global config, no prompts and no pager. Repository discovery
// stops at the workspace. Every clean/smudge/process filter the repository
// configures is overridden with an empty command (see neutralFilters).
func git(ctx context.Context, env *Env, maxChars int, args ...string) (string, error) {
	extra, err := neutralFilters(ctx, env)
	if err != nil {
		return "", err
	}
	res, err := gitRaw(ctx, env, extra, maxChars, args...)
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return res.Stdout, &gitError{Kind: KindError, Msg: gitMessage(env, res)}
	}
	return res.Stdout, nil
}

func gitRaw(ctx context.Context, env *Env, extraConfig []string, maxChars int, args ...string) (procResult, error) {
	timeout, _ := callTimeout(env, nil)
	argv := []string{"git"}
	for _, kv := range gitHardening() {
		argv = append(argv, "-c", kv)
	}
	argv = append(argv, args...)
	res, err := runProcess(ctx, procSpec{
		Dir:      env.Workspace.canon,
		Argv:     argv,
		Env:      gitEnv(env, extraConfig),
		Timeout:  timeout,
		MaxChars: maxChars,
		// A sandbox per command, without network; .git writable only for
		// the commands that write it (git_sandbox.go).
		Sandbox: env.Sandbox, WritableGit: gitWrites(args),
	})
	switch {
	case errors.Is(err, errCancelled):
		return res, &gitError{Kind: KindError, Msg: "cancelled"}
	case err != nil:
		return res, &gitError{Kind: KindUnavailable, Msg: "could not start git: " + errText(err)}
	case res.TimedOut:
		return res, &gitError{Kind: KindTimeout, Msg: fmt.Sprintf("git timed out after %s", timeout)}
	}
	return res, nil
}

// gitEnv builds git's environment. extraConfig holds key=value pairs passed
// through GIT_CONFIG_COUNT, which needs no quoting whatever the key holds.
func gitEnv(env *Env, extraConfig []string) []string {
	var out []string
	for _, kv := range SubprocessEnv(env.PassEnv) {
		if strings.HasPrefix(strings.ToUpper(kv), "GIT_") {
			continue
		}
		out = append(out, kv)
	}
	out = append(out,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_EDITOR=true",
		"GIT_ASKPASS=",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(env.Workspace.canon),
		"GIT_AUTHOR_NAME="+gitName, "GIT_AUTHOR_EMAIL="+gitEmail,
		"GIT_COMMITTER_NAME="+gitName, "GIT_COMMITTER_EMAIL="+gitEmail,
	)
	out = append(out, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(extraConfig)))
	for i, kv := range extraConfig {
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, k), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, v))
	}
	return out
}

// neutralFilters lists the repository's filter drivers and returns config
// that empties each one's clean, smudge and process commands, so staging and
// diffing run no workspace-chosen filter program. It narrows, but does not
// close, the staging exposure docs/security.md describes: config changed by
// another process after this listing is not seen.
func neutralFilters(ctx context.Context, env *Env) ([]string, error) {
	res, err := gitRaw(ctx, env, nil, 64<<10, "config", "--null", "--get-regexp", `^filter\.`)
	if err != nil {
		return nil, err
	}
	// Exit 1 means no match; other failures (not a repository) are left to
	// the real command to report.
	seen := map[string]bool{}
	var out []string
	for _, entry := range strings.Split(res.Stdout, "\x00") {
		key, _, _ := strings.Cut(entry, "\n")
		name, ok := strings.CutPrefix(key, "filter.")
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[:i]
		}
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		out = append(out,
			"filter."+name+".clean=", "filter."+name+".smudge=",
			"filter."+name+".process=", "filter."+name+".required=false")
	}
	return out, nil
}

// gitMessage is a failed command's stderr (or stdout), capped, with the
// workspace's host path replaced by ".".
func gitMessage(env *Env, res procResult) string {
	msg := strings.TrimSpace(res.Stderr)
	if msg == "" {
		msg = strings.TrimSpace(res.Stdout)
	}
	if msg == "" {
		msg = fmt.Sprintf("git exited with status %d", res.ExitCode)
	}
	msg = hideWorkspace(env, msg)
	out, _ := capChars(msg, gitErrMaxChars)
	return out
}

// hideWorkspace replaces the workspace's host path in git output with ".".
func hideWorkspace(env *Env, s string) string {
	for _, dir := range []string{env.Workspace.canon, env.Workspace.dir} {
		if dir != "" && dir != "/" {
			s = strings.ReplaceAll(s, dir, ".")
		}
	}
	return s
}

// gitHasHead reports whether the repository has a commit.
func gitHasHead(ctx context.Context, env *Env) bool {
	_, err := git(ctx, env, 200, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	return err == nil
}

// gitExclude keeps .orchestration out of the repository's view.
func gitExclude(env *Env) error {
	if err := (store.Workspace{Dir: env.Workspace.canon}).EnsureGitExclude(); err != nil {
		return fmt.Errorf("git exclude: %w", err)
	}
	return nil
}

// validBranchName applies git check-ref-format's rules for a branch name.
func validBranchName(name string) error {
	switch {
	case name == "":
		return errors.New("branch name is empty")
	case len(name) > 200:
		return errors.New("branch name is longer than 200 characters")
	case strings.HasPrefix(name, "-"):
		return errors.New("branch name may not start with '-'")
	case name == "@" || name == "HEAD":
		return fmt.Errorf("%q is reserved", name)
	case strings.Contains(name, ".."), strings.Contains(name, "@{"), strings.Contains(name, "//"):
		return errors.New("branch name may not contain '..', '@{' or '//'")
	case strings.HasPrefix(name, "/"), strings.HasSuffix(name, "/"), strings.HasSuffix(name, "."):
		return errors.New("branch name may not start or end with '/' or end with '.'")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return fmt.Errorf("branch name may not contain %q", r)
		}
	}
	for _, comp := range strings.Split(name, "/") {
		if strings.HasPrefix(comp, ".") || strings.HasSuffix(comp, ".lock") {
			return errors.New("no part of a branch name may start with '.' or end with '.lock'")
		}
	}
	return nil
}

// validRevision accepts the revision forms git_set_base takes: a commit id,
// HEAD, a branch name, optionally with ~N or ^ suffixes.
func validRevision(rev string) error {
	if rev == "" || len(rev) > 256 || strings.HasPrefix(rev, "-") {
		return errors.New("commit must be a commit id, HEAD, or a branch name")
	}
	for _, r := range rev {
		ok := r == '.' || r == '_' || r == '/' || r == '-' || r == '~' || r == '^' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !ok {
			return fmt.Errorf("commit may not contain %q", r)
		}
	}
	if strings.Contains(rev, "..") {
		return errors.New("commit must name one commit, not a range")
	}
	return nil
}

// gitWorkspaceCheck refuses git tools outside a workspace.
func gitWorkspaceCheck(env *Env) *Result {
	if env.Workspace == nil {
		r := Fail(KindUnavailable, "no workspace")
		return &r
	}
	if _, err := os.Stat(env.Workspace.canon); err != nil {
		r := Fail(KindUnavailable, "the workspace is not accessible")
		return &r
	}
	return nil
}
