package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/guildhall/guildhall/store"
)

// errNoRun reports a call made without a current run.
var errNoRun = errors.New("no current run")

// runRoot opens a run's directory, RunsDir/<runID>, as an os.Root. When
// RunsDir is inside the workspace (it normally is) the directory is opened
// through the workspace's root, so a symlink planted under .orchestration by
// a workspace command still cannot lead outside. create makes the directory
// when missing. The run id is validated before any filesystem access.
func runRoot(env *Env, runID string, create bool) (*os.Root, error) {
	if !store.ValidRunID(runID) {
		return nil, fmt.Errorf("run id %q is not of the form run-YYYYMMDD-HHMMSS", runID)
	}
	if env.RunsDir == "" {
		return nil, errNoRun
	}
	if env.Workspace != nil {
		if rel, ok := env.Workspace.relInside(env.RunsDir); ok {
			dir := filepath.ToSlash(filepath.Join(rel, runID))
			if create {
				if err := env.Workspace.root.MkdirAll(dir, 0o755); err != nil {
					return nil, fmt.Errorf("create run directory: %w", classify(err))
				}
			}
			r, err := env.Workspace.root.OpenRoot(dir)
			if err != nil {
				return nil, classify(err)
			}
			return r, nil
		}
	}
	runs, err := os.OpenRoot(env.RunsDir)
	if err != nil {
		return nil, classify(err)
	}
	defer runs.Close()
	if create {
		if err := runs.MkdirAll(runID, 0o755); err != nil {
			return nil, fmt.Errorf("create run directory: %w", classify(err))
		}
	}
	r, err := runs.OpenRoot(runID)
	if err != nil {
		return nil, classify(err)
	}
	return r, nil
}

// runFail maps a runRoot or run-file error to a result.
func runFail(what string, err error) Result {
	var pe *PathError
	switch {
	case errors.As(err, &pe) && pe.Kind == KindNotFound:
		return Fail(KindNotFound, what+" not found")
	case errors.As(err, &pe):
		return Fail(pe.Kind, what+": "+pe.Reason)
	case errors.Is(err, os.ErrNotExist):
		return Fail(KindNotFound, what+" not found")
	case errors.Is(err, errNoRun):
		return Fail(KindUnavailable, "there is no current run")
	}
	return Fail(KindUnavailable, what+": "+err.Error())
}
