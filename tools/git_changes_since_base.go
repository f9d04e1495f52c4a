package tools

import (
	"context"
	"encoding/json"
	"strings"
)

// gitMaxUntracked caps the untracked files listed with a change set.
const gitMaxUntracked = 200

// gitChangesSinceBase is git_changes_since_base {}: what changed between the
// run's base commit and the working tree (stat, patch, untracked files).
type gitChangesSinceBase struct{}

func (gitChangesSinceBase) Manifest() Manifest { return manifestOf("git_changes_since_base") }

func (gitChangesSinceBase) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct{}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	if env.Meta == nil || env.Meta.GitBase() == "" {
		return Fail(KindUnavailable, "no base commit is set for this run; the orchestrator sets one with git_set_base")
	}
	base := env.Meta.GitBase()
	if !isHexID(base) {
		return Fail(KindError, "the recorded base is not a commit id")
	}
	repo, err := openGitRepo(ctx, env)
	if err != nil {
		return gitFail("git diff", err)
	}
	diff := append([]string{"diff"}, gitDiffFlags()...)
	stat, err := repo.run(ctx, gitStatMaxChars, append(append(diff, "--stat", base, "--"), ".", gitNotBookkeeping)...)
	if err != nil {
		return gitFail("git diff", err)
	}
	patch, truncated, err := repo.patch(ctx, append(append(diff, base, "--"), ".", gitNotBookkeeping)...)
	if err != nil {
		return gitFail("git diff", err)
	}
	untracked, more, err := repo.untracked(ctx)
	if err != nil {
		return gitFail("git ls-files", err)
	}
	return OK(map[string]any{
		"base": base, "stat": strings.TrimSpace(stat), "patch": patch,
		"untracked": untracked, "untrackedTruncated": more, "truncated": truncated,
	})
}

func isHexID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}
