package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/guildhall/guildhall/store"
)

// gitRepo is the workspace's repository, checked for one tool call by
// openGitRepo. Every command of the call runs on it with the git directory
// and the work tree pinned (--git-dir, --work-tree), so neither a .git file
// nor core.worktree can send git elsewhere afterwards.
type gitRepo struct {
	env      *Env
	layout   store.GitLayout
	settings []gitSetting // the hardening, then the neutralised filter drivers
}

// openGitRepo checks the workspace's repository before any git command
// runs on it:
//
//   - its git directory and common directory are inside the workspace, or
//     are this workspace's linked worktree's or submodule's
//     (store.ResolveGitLayout);
//   - nothing in them leads git out of the workspace: no symbolic link to a
//     place outside, no dangling link, no hard-linked file outside objects/,
//     no FIFO or device, no borrowed object store (checkGitTree);
//   - its config includes no file outside the workspace and configures no
//     hook, and every filter driver it names is neutralised (gitConfigPolicy).
//
// A refusal is a *gitError of kind permission_denied that says what was
// found; a workspace without .git is an error that points at git_init.
func openGitRepo(ctx context.Context, env *Env) (*gitRepo, error) {
	if r := gitWorkspaceCheck(env); r != nil {
		return nil, &gitError{Kind: r.Kind, Msg: r.Message}
	}
	layout, err := store.ResolveGitLayout(env.Workspace.canon)
	if err != nil {
		return nil, layoutError(err)
	}
	return checkedRepo(ctx, env, layout)
}

// checkedRepo runs the tree and config checks on a resolved layout.
func checkedRepo(ctx context.Context, env *Env, layout store.GitLayout) (*gitRepo, error) {
	if err := checkGitTree(ctx, layout); err != nil {
		return nil, err
	}
	repo := &gitRepo{env: env, layout: layout, settings: gitHardening()}
	extra, err := repo.configPolicy(ctx)
	if err != nil {
		return nil, err
	}
	repo.settings = append(repo.settings, extra...)
	return repo, nil
}

// layoutError turns a ResolveGitLayout failure into a tool error.
func layoutError(err error) error {
	var refused *store.GitDirError
	switch {
	case errors.Is(err, store.ErrNoRepository):
		return &gitError{Kind: KindError, Msg: "not a git repository: the workspace has no .git (git_init creates one)"}
	case errors.As(err, &refused) && refused.Outside:
		return &gitError{Kind: KindPermissionDenied, Msg: "refused: " + refused.Reason + ". " + gitOutsideAdvice}
	case errors.As(err, &refused):
		return &gitError{Kind: KindPermissionDenied, Msg: "refused: " + refused.Reason}
	}
	return &gitError{Kind: KindError, Msg: "could not inspect the repository"}
}

// gitOutsideAdvice explains a refused outside git directory to the model
// and, through the tool result, to the operator.
const gitOutsideAdvice = "The git tools work only on a repository whose git directory is inside the workspace, " +
	"or on this workspace's own linked worktree (git worktree add) or submodule checkout, whose git directory " +
	"git's own files show to belong to it; git then reads and writes nothing else outside. " +
	"Open the repository's main checkout as the workspace to use them."

// gitPlaceName names p for a message without a host path: relative to
// the workspace, or as $GIT_DIR/... or $GIT_COMMON_DIR/... when it lies in
// a git directory outside it.
func gitPlaceName(l store.GitLayout, p string) string {
	if store.Within(l.Workspace, p) {
		r, _ := filepath.Rel(l.Workspace, p)
		return r
	}
	for _, d := range []struct{ dir, name string }{{l.GitDir, "$GIT_DIR"}, {l.CommonDir, "$GIT_COMMON_DIR"}} {
		if p == d.dir {
			return d.name
		}
		if store.Within(d.dir, p) {
			r, _ := filepath.Rel(d.dir, p)
			return d.name + "/" + r
		}
	}
	return filepath.Base(p)
}

// hideGitDirs replaces the host paths of a layout's git directories
// outside the workspace in git's messages, deepest first.
func hideGitDirs(l store.GitLayout, s string) string {
	if l.Linked == "" {
		return s
	}
	if l.GitDir != l.CommonDir {
		s = strings.ReplaceAll(s, l.GitDir, "$GIT_DIR")
	}
	return strings.ReplaceAll(s, l.CommonDir, "$GIT_COMMON_DIR")
}

// refusal is a permission_denied tool error.
func refusal(format string, a ...any) error {
	return &gitError{Kind: KindPermissionDenied, Msg: "refused: " + fmt.Sprintf(format, a...)}
}

// raw runs one git command on the repository: a fixed argv (never a
// shell) through runProcess, in the workspace, with the repository's
// settings and environment.
func (r *gitRepo) raw(ctx context.Context, maxChars int, args ...string) (procResult, error) {
	return gitProcess(ctx, r.env, r.layout, r.settings, maxChars, args...)
}

// gitProcess runs git with the git directory and work tree of layout
// pinned.
func gitProcess(ctx context.Context, env *Env, layout store.GitLayout, settings []gitSetting, maxChars int, args ...string) (procResult, error) {
	timeout, _ := callTimeout(env, nil)
	argv := append([]string{"git", "--no-pager", "--git-dir=" + layout.GitDir, "--work-tree=" + layout.Workspace}, args...)
	res, err := runProcess(ctx, procSpec{
		Dir:      layout.Workspace,
		Argv:     argv,
		Env:      gitEnv(env, settings),
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
	// Only git's messages: stdout is data (a diff, a config listing).
	res.Stderr = hideGitDirs(layout, res.Stderr)
	return res, nil
}

// run runs a git command and returns its stdout; a non-zero exit is an
// error carrying git's message.
func (r *gitRepo) run(ctx context.Context, maxChars int, args ...string) (string, error) {
	res, err := r.raw(ctx, maxChars, args...)
	return gitOutput(r.env, res, err)
}

// patch runs a diff capped at gitPatchMaxChars, reporting truncation.
func (r *gitRepo) patch(ctx context.Context, args ...string) (string, bool, error) {
	res, err := r.raw(ctx, gitPatchMaxChars, args...)
	if err != nil {
		return "", false, err
	}
	if res.ExitCode != 0 {
		return "", false, &gitError{Kind: KindError, Msg: gitMessage(r.env, res)}
	}
	return res.Stdout, res.stdoutCut, nil
}

// hasHead reports whether the repository has a commit.
func (r *gitRepo) hasHead(ctx context.Context) bool {
	_, err := r.run(ctx, 200, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	return err == nil
}

// untracked lists untracked, not ignored files (never .orchestration).
func (r *gitRepo) untracked(ctx context.Context) ([]string, bool, error) {
	out, err := r.run(ctx, 64<<10, "ls-files", "--others", "--exclude-standard", "-z", "--", ".", gitNotBookkeeping)
	if err != nil {
		return nil, false, err
	}
	files := []string{}
	for _, f := range strings.Split(out, "\x00") {
		if f == "" || strings.HasPrefix(f, "[… output truncated") {
			continue
		}
		if len(files) == gitMaxUntracked {
			return files, true, nil
		}
		files = append(files, f)
	}
	return files, false, nil
}

// exclude keeps .orchestration out of the repository's view. A skipped
// exclude (store.GitExcludeSkipped) is returned as a note, not an error:
// git_commit takes .orchestration out of the index before it commits, and
// the status and diff tools leave it out by pathspec, whatever the exclude
// file says.
func (r *gitRepo) exclude() (note string, err error) {
	err = (store.Workspace{Dir: r.layout.Workspace}).EnsureGitExclude()
	var skip *store.GitExcludeSkipped
	if errors.As(err, &skip) {
		return skip.Error(), nil
	}
	return "", err
}
