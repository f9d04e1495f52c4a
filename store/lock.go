package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockFile is the workspace lock under .orchestration.
const LockFile = "lock"

// Lock is a held workspace lock. One run at a time per workspace: the lock is
// an flock on .orchestration/lock, so the kernel releases it when the holder
// dies, even by kill -9, and a stale file never blocks a new run.
type Lock struct {
	f *os.File
}

// BusyError is returned when another process holds the workspace.
type BusyError struct {
	RunID string
	PID   int
}

func (e *BusyError) Error() string {
	if e.RunID == "" {
		return fmt.Sprintf("workspace busy: locked by pid %d", e.PID)
	}
	return fmt.Sprintf("workspace busy: run %s by pid %d", e.RunID, e.PID)
}

type lockInfo struct {
	PID   int    `json:"pid"`
	RunID string `json:"runId,omitempty"`
}

// AcquireLock takes the workspace lock without waiting.
func (w Workspace) AcquireLock() (*Lock, error) {
	if err := w.EnsureRecords(false); err != nil {
		return nil, err
	}
	path := filepath.Join(w.Orchestration(), LockFile)
	f, err := openRecord(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open workspace lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, busyError(path)
		}
		return nil, fmt.Errorf("lock workspace: %w", err)
	}
	l := &Lock{f: f}
	if err := l.SetRun(""); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// Holder reports the process holding the workspace lock, or nil when none
// does. It only looks: the answer may change at once, so a caller that
// goes on to run still takes the lock with AcquireLock.
func (w Workspace) Holder() *BusyError {
	path := filepath.Join(w.Orchestration(), LockFile)
	f, err := openRecord(path, os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return busyError(path)
		}
		return nil
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return nil
}

func busyError(path string) *BusyError {
	var info lockInfo
	b, _ := ReadRecord(path, MaxSmallRecordBytes)
	_ = json.Unmarshal(b, &info)
	return &BusyError{RunID: info.RunID, PID: info.PID}
}

// SetRun records which run holds the lock, for the busy message.
func (l *Lock) SetRun(runID string) error {
	b, _ := json.Marshal(lockInfo{PID: os.Getpid(), RunID: runID})
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("write workspace lock: %w", err)
	}
	if _, err := l.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("write workspace lock: %w", err)
	}
	return nil
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	err := l.f.Close()
	l.f = nil
	return err
}
