package tools

import (
	"context"
	"encoding/json"
	"strings"
)

// gitBranch is git_branch {name}: create a branch at HEAD without checking
// it out.
type gitBranch struct{}

func (gitBranch) Manifest() Manifest { return manifestOf("git_branch") }

func (gitBranch) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Name string `json:"name"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	if err := validBranchName(a.Name); err != nil {
		return Fail(KindInvalidArguments, err.Error())
	}
	repo, err := openGitRepo(ctx, env)
	if err != nil {
		return gitFail("git branch", err)
	}
	if !repo.hasHead(ctx) {
		return Fail(KindError, "git branch: the repository has no commit yet; commit first")
	}
	if _, err := repo.run(ctx, 200, "check-ref-format", "--branch", a.Name); err != nil {
		return Fail(KindInvalidArguments, "git branch: invalid branch name")
	}
	if _, err := repo.run(ctx, 2000, "branch", "--no-track", a.Name, "HEAD"); err != nil {
		return gitFail("git branch", err)
	}
	sha, err := repo.run(ctx, 200, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return gitFail("git rev-parse", err)
	}
	return OK(map[string]any{"branch": a.Name, "commit": strings.TrimSpace(sha)})
}
