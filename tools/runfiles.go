package tools

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/guildhall/guildhall/store"
)

// errNoRun reports a call made without a current run.
var errNoRun = errors.New("no current run")

// runRoot opens a run's directory, RunsDir/<runID>, as an os.Root. When
// RunsDir is inside the workspace (it normally is) the directory is opened
// through the workspace's root and through real directories only
// (openRealDir): a symbolic link planted as .orchestration, runs or the run
// folder by a workspace command is refused, so write_plan can neither
// leave the workspace nor land in .git. create makes the directory when
// missing. The run id is validated before any filesystem access.
func runRoot(env *Env, runID string, create bool) (*os.Root, error) {
	if !store.ValidRunID(runID) {
		return nil, fmt.Errorf("run id %q is not of the form run-YYYYMMDD-HHMMSS", runID)
	}
	if env.RunsDir == "" {
		return nil, errNoRun
	}
	if env.Workspace != nil {
		if rel, ok := env.Workspace.relInside(env.RunsDir); ok {
			dir := path.Join(filepath.ToSlash(rel), runID)
			r, err := openRealDir(env.Workspace.root, dir, create)
			if err != nil {
				return nil, runDirErr(create, err)
			}
			return r, nil
		}
	}
	runs, err := os.OpenRoot(env.RunsDir)
	if err != nil {
		return nil, classify(err)
	}
	defer runs.Close()
	r, err := openRealChild(runs, runID, create)
	if err != nil {
		return nil, runDirErr(create, err)
	}
	return r, nil
}

func runDirErr(create bool, err error) error {
	pe := wrapPathErr("", err)
	if create {
		return fmt.Errorf("create run directory: %w", pe)
	}
	return pe
}

// openRunFile opens a file of a run's folder for reading: a regular file,
// never a FIFO, device or link (a FIFO would block the call for ever).
func openRunFile(root *os.Root, name string) (*os.File, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, classify(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &PathError{Kind: KindNotFound, Reason: reasonNotRegular}
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, classify(err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &PathError{Kind: KindNotFound, Reason: reasonNotRegular}
	}
	return f, nil
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
