package tools

import (
	"context"
	"encoding/json"
	"strings"
)

// gitSetBase is git_set_base {commit?}: record a commit (HEAD by default)
// as the run's base for git_changes_since_base.
type gitSetBase struct{}

func (gitSetBase) Manifest() Manifest { return manifestOf("git_set_base") }

func (gitSetBase) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Commit *string `json:"commit"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	rev := "HEAD"
	if a.Commit != nil && *a.Commit != "" {
		rev = *a.Commit
	}
	if err := validRevision(rev); err != nil {
		return Fail(KindInvalidArguments, err.Error())
	}
	if env.Meta == nil {
		return Fail(KindUnavailable, "git_set_base: this run has no record to store a base in")
	}
	repo, err := openGitRepo(ctx, env)
	if err != nil {
		return gitFail("git_set_base", err)
	}
	sha, err := repo.run(ctx, 200, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return Fail(KindNotFound, "git_set_base: "+showPath(rev)+" does not name a commit")
	}
	sha = strings.TrimSpace(sha)
	if err := env.Meta.SetGitBase(sha); err != nil {
		return Fail(KindError, "git_set_base: could not record the base")
	}
	return OK(map[string]any{"base": sha})
}
