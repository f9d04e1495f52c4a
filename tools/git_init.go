package tools

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"github.com/guildhall/guildhall/store"
)

// gitInit is git_init {}: create a repository in the workspace (harmless on
// an existing one) and keep .orchestration out of it.
type gitInit struct{}

func (gitInit) Manifest() Manifest { return manifestOf("git_init") }

func (gitInit) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct{}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	if r := gitWorkspaceCheck(env); r != nil {
		return *r
	}
	out, err := gitInitRepo(ctx, env)
	if err != nil {
		return gitFail("git init", err)
	}
	repo, err := openGitRepo(ctx, env)
	if err != nil {
		return gitFail("git init", err)
	}
	note, err := repo.exclude()
	if err != nil {
		return Fail(KindError, "git init: could not exclude .orchestration")
	}
	res := map[string]any{
		"initialized":   true,
		"reinitialized": strings.HasPrefix(strings.TrimSpace(out), "Reinitialized"),
	}
	if note != "" {
		res["note"] = hideWorkspace(env, note)
	}
	return OK(res)
}

// gitInitRepo runs git init on <ws>/.git. An existing repository is checked
// like any other first (an outside git directory, for one, is refused and
// left untouched) and reinitialised without templates, so nothing is copied
// into it; a linked worktree's or submodule's is checked and left as it is. A new one gets a .git directory made here first, through the
// workspace root: Mkdir neither follows nor replaces a link planted at .git,
// so git initialises that directory and no other.
func gitInitRepo(ctx context.Context, env *Env) (string, error) {
	// Where the workspace had no .git, the sandbox put a placeholder
	// there so that no command could make one; git_init is the way one
	// is made.
	if env.Sandbox != nil {
		if err := env.Sandbox.ClearGitPlaceholder(); err != nil {
			return "", &gitError{Kind: KindError, Msg: err.Error()}
		}
	}
	layout, err := store.ResolveGitLayout(env.Workspace.canon)
	switch {
	case errors.Is(err, store.ErrNoRepository):
		if err := env.Workspace.root.Mkdir(".git", 0o755); err != nil {
			return "", &gitError{Kind: KindError, Msg: "could not create .git"}
		}
		dir := filepath.Join(env.Workspace.canon, ".git")
		layout = store.GitLayout{Workspace: env.Workspace.canon, GitDir: dir, CommonDir: dir}
		res, err := gitProcess(ctx, env, layout, gitHardening(), 2000, "init")
		return gitOutput(env, res, err)
	case err != nil:
		return "", layoutError(err)
	}
	repo, err := checkedRepo(ctx, env, layout)
	if err != nil {
		return "", err
	}
	if layout.Linked != "" {
		// A worktree's or submodule's repository exists and belongs to
		// another checkout too: there is nothing to initialise, and
		// nothing of it is rewritten.
		return "Reinitialized existing Git repository (a linked " + layout.Linked + ")", nil
	}
	return repo.run(ctx, 2000, "init", "--template=")
}

// gitOutput is gitRepo.run's handling of a finished command.
func gitOutput(env *Env, res procResult, err error) (string, error) {
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return res.Stdout, &gitError{Kind: KindError, Msg: gitMessage(env, res)}
	}
	return res.Stdout, nil
}
