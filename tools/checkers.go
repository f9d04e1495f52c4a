package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

type checkerResult struct {
	Command string `json:"command"`
	procResult
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
	timeout, r := callTimeout(env, a.TimeoutSeconds)
	if r != nil {
		return *r
	}
	results := []checkerResult{}
	for i, command := range a.Commands {
		res, err := shellCall(ctx, env, command, timeout)
		switch {
		case errors.Is(err, errCancelled):
			results = append(results, checkerResult{command, res})
			return Result{Kind: KindError, Message: "cancelled", Details: map[string]any{"results": results}}
		case err != nil:
			return Result{Kind: KindUnavailable, Details: map[string]any{"results": results},
				Message: fmt.Sprintf("command %d could not start: %s; the remaining commands were not run", i+1, errText(err))}
		}
		results = append(results, checkerResult{command, res})
		if res.TimedOut {
			return Result{Kind: KindTimeout, Details: map[string]any{"results": results},
				Message: fmt.Sprintf("command %d timed out after %s; the remaining commands were not run", i+1, timeout)}
		}
	}
	return OK(map[string]any{"results": results})
}
