package tools

import (
	"context"
	"encoding/json"
)

// gitUncommittedChanges is git_uncommitted_changes {}: the working tree's
// status and its diff against HEAD.
type gitUncommittedChanges struct{}

func (gitUncommittedChanges) Manifest() Manifest { return manifestOf("git_uncommitted_changes") }

func (gitUncommittedChanges) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct{}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	repo, err := openGitRepo(ctx, env)
	if err != nil {
		return gitFail("git status", err)
	}
	status, err := repo.run(ctx, gitStatusMaxChars, "status", "--porcelain=v1", "--untracked-files=all",
		"--ignore-submodules=all", "--", ".", gitNotBookkeeping)
	if err != nil {
		return gitFail("git status", err)
	}
	diff := append([]string{"diff"}, gitDiffFlags()...)
	if repo.hasHead(ctx) {
		diff = append(diff, "HEAD")
	} else {
		diff = append(diff, "--cached")
	}
	patch, truncated, err := repo.patch(ctx, append(diff, "--", ".", gitNotBookkeeping)...)
	if err != nil {
		return gitFail("git diff", err)
	}
	return OK(map[string]any{"status": status, "patch": patch, "truncated": truncated})
}
