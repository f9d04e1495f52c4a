package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// checkerMaxCommands caps the commands of one typecheck or test call.
const checkerMaxCommands = 16

// checker is typecheck or test {commands[], timeoutSeconds?}: each command
// runs through the same embedded shell as run_shell (shellCall), in order,
// each with the call's timeout; the run stops at the first timeout or
// failure to set the shell up. A non-zero exit is a normal result and does
// not stop the run.
type checker struct{ name string }

func (c checker) Manifest() Manifest { return manifestOf(c.name) }

// checkerResult is one command's entry, in the original system's shape
// {command, exitCode, stdout, stderr}: the result's data is the array of
// them, which its guilds' prompts read. A timed-out entry is marked and
// has a null exit code, as there.
type checkerResult struct {
	Command  string `json:"command"`
	ExitCode *int   `json:"exitCode"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	TimedOut bool   `json:"timedOut,omitempty"`
}

func entry(command string, res procResult) checkerResult {
	e := checkerResult{Command: command, Stdout: res.Stdout, Stderr: res.Stderr, TimedOut: res.TimedOut}
	if !res.TimedOut {
		code := res.ExitCode
		e.ExitCode = &code
	}
	return e
}

func (c checker) Call(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Commands       []string `json:"commands"`
		TimeoutSeconds *float64 `json:"timeoutSeconds"`
	}
	if r := decodeArgs(args, &a); r != nil {
		return *r
	}
	if len(a.Commands) == 0 || len(a.Commands) > checkerMaxCommands {
		return Fail(KindInvalidArguments, fmt.Sprintf("commands must hold 1 to %d commands", checkerMaxCommands))
	}
	for i, command := range a.Commands {
		if strings.TrimSpace(command) == "" {
			return Fail(KindInvalidArguments, fmt.Sprintf("commands[%d] is empty; every command must be a non-empty string", i))
		}
	}
	timeout, r := callTimeout(env, a.TimeoutSeconds)
	if r != nil {
		return *r
	}
	// The details of a failure carry the command and the entries so far,
	// as the original's do.
	results := []checkerResult{}
	for i, command := range a.Commands {
		res, err := shellCall(ctx, env, command, timeout)
		if r, ok := tamperedResult(err, map[string]any{"command": command, "results": results}); ok {
			return r
		}
		switch {
		case errors.Is(err, errCancelled):
			results = append(results, entry(command, res))
			return Result{Kind: KindError, Message: "cancelled", Details: map[string]any{"command": command, "results": results}}
		case err != nil:
			return Result{Kind: KindUnavailable, Details: map[string]any{"command": command, "results": results},
				Message: fmt.Sprintf("%s could not start command %d (%q): %s; the remaining commands were not run", c.name, i+1, command, errText(err))}
		}
		results = append(results, entry(command, res))
		if res.TimedOut {
			return Result{Kind: KindTimeout, Details: map[string]any{"command": command, "afterSeconds": timeout.Seconds(), "results": results},
				Message: fmt.Sprintf("%s timed out after %s on command %d (%q); the remaining commands were not run", c.name, timeout, i+1, command)}
		}
	}
	return OK(results)
}
