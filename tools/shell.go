package tools

import (
	"context"
	"errors"
	"time"

	"github.com/guildhall/guildhall/tools/sandbox"
	"github.com/guildhall/guildhall/tools/shell"
)

// shellCall runs command with the host's `/bin/sh -c` (tools/shell) in
// the workspace, through the run's sandbox: started by the sandbox's
// helper when the policy confines, by this process when it is none.
// Either way nothing the call started outlives it.
func shellCall(ctx context.Context, env *Env, command string, timeout time.Duration) (procResult, error) {
	if env.Sandbox == nil {
		return procResult{}, errNoSandbox
	}
	res, err := env.Sandbox.Run(ctx, sandbox.Script{
		Dir:      env.Workspace.canon,
		Command:  command,
		Env:      env.subprocessEnv(),
		Timeout:  timeout,
		MaxChars: streamMaxChars,
		Caller:   sandbox.Caller{Role: env.Role, RoleID: env.RoleID},
	})
	if errors.Is(err, shell.ErrCancelled) {
		err = errCancelled
	}
	return fromShell(res), err
}

// errNoSandbox refuses a command when the caller set up no sandbox: the
// subprocess tools never run unconfined by omission.
var errNoSandbox = &sandbox.StartError{Msg: "no sandbox was set up for this run, so the command was not run (a Guildhall bug)"}

// tamperedResult is the result of a call whose sandbox was broken into
// (sandbox.TamperedError); ok is false for any other error.
func tamperedResult(err error, details any) (Result, bool) {
	var te *sandbox.TamperedError
	if !errors.As(err, &te) {
		return Result{}, false
	}
	return Result{Kind: KindSandboxTampered, Message: te.Error(), Details: details}, true
}

// Canonical is the workspace folder with its symbolic links resolved, as
// the sandbox mounts it.
func (w *Workspace) Canonical() string { return w.canon }

func fromShell(r shell.Result) procResult {
	return procResult{ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr, TimedOut: r.TimedOut, stdoutCut: r.StdoutCut}
}

// startFailure is the tool message for a command that could not start:
// the sandbox's own explanation, or the bare reason without paths.
func startFailure(err error) string {
	var se *sandbox.StartError
	if errors.As(err, &se) {
		return se.Error()
	}
	return shell.ErrText(err)
}
