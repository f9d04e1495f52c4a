package tools

import (
	"context"
	"encoding/json"
	"strings"
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
	out, err := git(ctx, env, 2000, "init")
	if err != nil {
		return gitFail("git init", err)
	}
	if err := gitExclude(env); err != nil {
		return Fail(KindError, "git init: could not exclude .orchestration")
	}
	return OK(map[string]any{
		"initialized":   true,
		"reinitialized": strings.HasPrefix(strings.TrimSpace(out), "Reinitialized"),
	})
}
