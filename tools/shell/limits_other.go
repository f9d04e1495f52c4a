//go:build !linux

package shell

import (
	"errors"
	"os/exec"
)

// Resource limits are applied only by the Linux sandbox.
func startLimited(newCmd func() *exec.Cmd, _ *Reaper, _ Limits) (*exec.Cmd, error) {
	return newCmd(), errors.New("per-command resource limits need Linux")
}

type watchdog struct{}

func startWatchdog(int, int) *watchdog       { return nil }
func (w *watchdog) tripped() <-chan struct{} { return nil }
func (w *watchdog) stop() bool               { return false }

func aloneInPIDNamespace() bool { return false }
