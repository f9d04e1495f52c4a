package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// runShell is run_shell {command, timeoutSeconds?} → {exitCode, stdout,
// stderr, timedOut}. The command runs with /bin/sh -c
// (see shellCall). A non-zero exit, a syntax error included, is a normal
// result.
type runShell struct{}

func (runShell) Manifest() Manifest { return manifestOf("run_shell") }

func (runShell) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Command        string   `json:"command"`
		TimeoutSeconds *float64 `json:"timeoutSeconds"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	timeout, r := callTimeout(env, a.TimeoutSeconds)
	if r != nil {
		return *r
	}
	res, err := shellCall(ctx, env, a.Command, timeout)
	if r, ok := tamperedResult(err, nil); ok {
		return r
	}
	switch {
	case errors.Is(err, errCancelled):
		return Result{Kind: KindError, Message: "the command was cancelled and every process it started was killed", Details: res}
	case err != nil:
		return Fail(KindUnavailable, "could not start the shell: "+errText(err))
	case res.TimedOut:
		return Result{Kind: KindTimeout, Details: res,
			Message: fmt.Sprintf("the command timed out after %s and every process it started was killed", timeout)}
	}
	return OK(res)
}

// errText is a start error's reason without the paths it may carry, or
// the sandbox's own explanation.
func errText(err error) string { return startFailure(err) }
