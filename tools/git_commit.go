package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/guildhall/guildhall/store"
)

// gitCommitMaxMessage caps a commit message, in bytes.
const gitCommitMaxMessage = 10_000

// gitCommit is git_commit {message}: stage every change in the workspace
// (never .orchestration) and commit it with the pinned identity.
type gitCommit struct{}

func (gitCommit) Manifest() Manifest { return manifestOf("git_commit") }

func (gitCommit) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Message string `json:"message"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	if strings.TrimSpace(a.Message) == "" || len(a.Message) > gitCommitMaxMessage || strings.IndexByte(a.Message, 0) >= 0 {
		return Fail(KindInvalidArguments, "message must be non-empty text of at most 10000 bytes")
	}
	repo, err := openGitRepo(ctx, env)
	if err != nil {
		return gitFail("git commit", err)
	}
	note, err := repo.exclude()
	if err != nil {
		return Fail(KindError, "git commit: could not exclude .orchestration")
	}
	// .orchestration is in the exclude file, so --all leaves it out; should
	// it be tracked already, or the exclude have been skipped (note), it is
	// taken out of the index before the commit. (An exclude pathspec here
	// would make git add fail when the directory is ignored.)
	if _, err := repo.run(ctx, 2000, "add", "--all", "--", "."); err != nil {
		return gitFail("git add", err)
	}
	if _, err := repo.run(ctx, 2000, "rm", "--cached", "-r", "-q", "--ignore-unmatch", "--", store.OrchestrationDir); err != nil {
		return gitFail("git rm", err)
	}
	status, err := repo.run(ctx, 2000, "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all")
	if err != nil {
		return gitFail("git status", err)
	}
	if strings.TrimSpace(status) == "" {
		return Fail(KindError, "git commit: nothing to commit; the workspace has no changes since the last commit")
	}
	if _, err := repo.run(ctx, 2000, "commit", "--quiet", "--no-verify", "--no-gpg-sign", "--message", a.Message); err != nil {
		return gitFail("git commit", err)
	}
	sha, err := repo.run(ctx, 200, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return gitFail("git rev-parse", err)
	}
	stat, _ := repo.run(ctx, gitStatMaxChars, append(append([]string{"show"}, gitDiffFlags()...), "--stat", "--format=", "HEAD")...)
	out := map[string]any{"commit": strings.TrimSpace(sha), "stat": strings.TrimSpace(stat)}
	if note != "" {
		out["note"] = hideWorkspace(env, note)
	}
	return OK(out)
}
