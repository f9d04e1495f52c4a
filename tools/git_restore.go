package tools

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"github.com/guildhall/guildhall/store"
)

// gitRestoreMaxPaths caps the paths of one git_restore call.
const gitRestoreMaxPaths = 100

// gitRestore is git_restore {paths, from?}: put working-tree files back as
// they are in HEAD (the default) or the index, so a role can undo its own
// edits. It runs one fixed argv on the checked, hardened repository:
//
//	git restore --worktree --overlay [--source=HEAD] -- :(top,literal)<path>...
//
// Each path goes through the workspace's containment first (Resolve: no
// climbing out, no link out, never .orchestration) and may not name .git.
// The pathspecs are literal, so no glob or magic in a name widens them.
// --overlay never deletes a file; only tracked files are written, the
// index is left as it is, and filter drivers are neutralised like every
// other git tool's, so no program the repository names runs.
type gitRestore struct{}

func (gitRestore) Manifest() Manifest { return manifestOf("git_restore") }

func (gitRestore) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Paths []string `json:"paths"`
		From  string   `json:"from"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	if a.From == "" {
		a.From = "HEAD"
	}
	switch {
	case a.From != "HEAD" && a.From != "index":
		return Fail(KindInvalidArguments, `from must be "HEAD" or "index"`)
	case len(a.Paths) == 0 || len(a.Paths) > gitRestoreMaxPaths:
		return Fail(KindInvalidArguments, "paths must name between 1 and 100 files or folders")
	}
	if r := gitWorkspaceCheck(env); r != nil {
		return *r
	}
	rels, res := restorePaths(env.Workspace, a.Paths)
	if res != nil {
		return *res
	}
	repo, err := openGitRepo(ctx, env)
	if err != nil {
		return gitFail("git restore", err)
	}
	if a.From == "HEAD" && !repo.hasHead(ctx) {
		return Fail(KindError, `git restore: the repository has no commit yet; restore from "index" instead`)
	}
	argv := []string{"restore", "--worktree", "--overlay"}
	if a.From == "HEAD" {
		argv = append(argv, "--source=HEAD")
	}
	argv = append(argv, "--")
	for _, rel := range rels {
		argv = append(argv, restorePathspec(rel))
	}
	tracked, err := repo.tracksBookkeeping(ctx, a.From)
	if err != nil {
		return gitFail("git restore", err)
	}
	if tracked {
		// A repository that shipped .orchestration files never gets them
		// written over the run's records. (Git refuses an exclude that
		// matches nothing, so it is added only when one would.)
		argv = append(argv, gitNotBookkeeping)
	}
	if _, err := repo.run(ctx, 2000, argv...); err != nil {
		return restoreFail(err)
	}
	return OK(map[string]any{"restored": rels, "from": a.From})
}

// restorePaths checks each path through the workspace's containment and
// refuses .git, returning the canonical relative paths, deduplicated.
func restorePaths(w *Workspace, given []string) ([]string, *Result) {
	var rels []string
	seen := map[string]bool{}
	for _, p := range given {
		rel, err := w.Resolve(p)
		if err != nil {
			r := pathFail(p, err)
			return nil, &r
		}
		for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
			if strings.EqualFold(part, ".git") {
				r := Fail(KindPermissionDenied, showPath(p)+": the repository's .git is never restored")
				return nil, &r
			}
		}
		if !seen[rel] {
			seen[rel] = true
			rels = append(rels, rel)
		}
	}
	return rels, nil
}

// restorePathspec is one path as a literal pathspec from the top of the
// work tree; "." is the whole tree.
func restorePathspec(rel string) string {
	if rel == "." {
		return ":(top)"
	}
	return ":(top,literal)" + filepath.ToSlash(rel)
}

// tracksBookkeeping reports whether HEAD or the index holds anything under
// .orchestration.
func (r *gitRepo) tracksBookkeeping(ctx context.Context, from string) (bool, error) {
	argv := []string{"ls-files", "--cached", "-z", "--", ":(top,literal)" + store.OrchestrationDir}
	if from == "HEAD" {
		argv = []string{"ls-tree", "-r", "-z", "--name-only", "HEAD", "--", ":(top,literal)" + store.OrchestrationDir}
	}
	out, err := r.run(ctx, 200, argv...)
	return strings.TrimSpace(out) != "", err
}

// restoreFail turns git's refusal into a result: a path git does not
// track is not_found, named as the model gave it.
func restoreFail(err error) Result {
	var ge *gitError
	if !errors.As(err, &ge) {
		return gitFail("git restore", err)
	}
	msg := strings.NewReplacer(":(top,literal)", "", ":(top)", ".").Replace(ge.Msg)
	if strings.Contains(msg, "did not match any file(s) known to git") {
		return Fail(KindNotFound, "git restore: "+msg+" (git_restore restores tracked files only; nothing was changed)")
	}
	return Fail(ge.Kind, "git restore: "+msg)
}
