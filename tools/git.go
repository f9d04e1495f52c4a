package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// gitSetting is one config key and value handed to git through
// GIT_CONFIG_KEY_<n> and GIT_CONFIG_VALUE_<n>. The key travels whole, so a
// driver name holding '=', dots, quotes, spaces or any other byte reaches
// git exactly as git printed it; nothing ever splits a "key=value" string.
type gitSetting struct{ key, value string }

// gitHardening is the config every git command runs with. Command-line
// config outranks every config file, the repository's own and its includes.
// It turns off hooks, the fsmonitor hook, the pager, signing and signature
// checks, credential helpers, every transport, automatic gc and
// maintenance, rerere, submodule recursion and the mailmap; points the
// global excludes and attributes files, which a repository may redirect to
// any host file, at /dev/null, with the diff order file; and pins the
// identity.
func gitHardening() []gitSetting {
	return []gitSetting{
		{"core.hooksPath", "/dev/null"},
		{"core.fsmonitor", "false"},
		{"core.pager", "cat"},
		{"core.excludesFile", "/dev/null"},
		{"core.attributesFile", "/dev/null"},
		{"diff.orderFile", "/dev/null"},
		{"commit.gpgSign", "false"},
		{"tag.gpgSign", "false"},
		{"log.showSignature", "false"},
		{"log.mailmap", "false"},
		{"credential.helper", ""},
		{"protocol.allow", "never"},
		{"gc.auto", "0"},
		{"maintenance.auto", "false"},
		{"rerere.enabled", "false"},
		{"diff.ignoreSubmodules", "all"},
		{"status.submoduleSummary", "false"},
		{"submodule.recurse", "false"},
		{"user.name", gitName},
		{"user.email", gitEmail},
		{"init.defaultBranch", "main"},
		{"color.ui", "false"},
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

// gitEnv builds git's environment: the allowlisted variables without any
// inherited GIT_* one (GIT_DIR, GIT_CONFIG_*, GIT_EXTERNAL_DIFF ...), no
// system or global config, no prompts, no pager, no transport at all
// (GIT_ALLOW_PROTOCOL empty outranks every protocol.*.allow a repository
// sets, so a partial clone's lazy fetch cannot start a remote helper, an
// upload-pack or ssh), and settings passed through GIT_CONFIG_COUNT.
func gitEnv(env *Env, settings []gitSetting) []string {
	var out []string
	for _, kv := range env.subprocessEnv() {
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
		"GIT_SEQUENCE_EDITOR=true",
		"GIT_ASKPASS=",
		"GIT_ALLOW_PROTOCOL=",
		"GIT_NO_LAZY_FETCH=1",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(env.Workspace.canon),
		"GIT_AUTHOR_NAME="+gitName, "GIT_AUTHOR_EMAIL="+gitEmail,
		"GIT_COMMITTER_NAME="+gitName, "GIT_COMMITTER_EMAIL="+gitEmail,
	)
	out = append(out, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(settings)))
	for i, s := range settings {
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, s.key), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, s.value))
	}
	return out
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
