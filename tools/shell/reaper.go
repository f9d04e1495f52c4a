package shell

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"sync"
)

// Reaper knows every process this Guildhall process started and has not
// waited for yet, so that, when the process is a child subreaper, a sweep
// can find the processes a tool call left behind: anything that escaped
// its session (`setsid -f`, a double-forking daemon) is reparented to this
// process when its parent dies, and shows up as a child nobody started.
//
// A sweep kills and reaps only those orphans, each by its pid: it never
// waits for "any child", so it cannot take an exit status from os/exec's
// own Wait. One Reaper serves a whole process. A shell it starts (Run
// with Spec.Reaper) carries its mark in the environment, which every
// descendant inherits, a daemon that left its session too; a sweep kills
// only the unknown children that carry it, so a child the rest of the
// program starts on its own (the console's notify command, an editor) is
// never taken for an orphan. A descendant that execs with a scrubbed
// environment escapes the sweep: only the sandbox, whose PID namespace
// dies with the helper, holds a hostile command. Tool calls run one at a time, so an orphan found
// at the end of a call belongs to that call.
//
// nil is ready to use and registers nothing.
type Reaper struct {
	mu   sync.Mutex
	live map[int]struct{}
	mark string // MarkVar=token, in the environment of what Start starts
}

// MarkVar is the environment variable that marks the processes a Reaper
// started and their descendants.
const MarkVar = "GUILDHALL_REAPER"

// NewReaper returns an empty registry with a mark of its own.
func NewReaper() *Reaper {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &Reaper{mark: MarkVar + "=" + hex.EncodeToString(b)}
}

// Mark returns env with the reaper's mark added, for a process whose
// orphans a sweep must kill.
func (r *Reaper) Mark(env []string) []string {
	if r == nil {
		return env
	}
	if env == nil {
		env = os.Environ()
	}
	return append(env[:len(env):len(env)], r.mark)
}

// Start starts cmd and registers it until Waited.
func (r *Reaper) Start(cmd *exec.Cmd) error {
	if r == nil {
		return cmd.Start()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	if r.live == nil {
		r.live = map[int]struct{}{}
	}
	r.live[cmd.Process.Pid] = struct{}{}
	return nil
}

// Waited unregisters cmd once its Wait has returned.
func (r *Reaper) Waited(cmd *exec.Cmd) {
	if r == nil || cmd.Process == nil {
		return
	}
	r.mu.Lock()
	delete(r.live, cmd.Process.Pid)
	r.mu.Unlock()
}

// Sweep kills and reaps every child of this process that the registry
// does not know: orphans adopted because this process is a child
// subreaper. It does nothing unless the process is one (see
// EnableSubreaper), and returns the number of processes it killed.
func (r *Reaper) Sweep() int {
	if r == nil || !isSubreaper() {
		return 0
	}
	return r.sweep()
}

// unknown returns the children not in the registry that carry its mark.
// The caller holds r.mu.
func (r *Reaper) unknown(children []int) []int {
	var out []int
	for _, pid := range children {
		if _, ok := r.live[pid]; !ok && r.marked(pid) {
			out = append(out, pid)
		}
	}
	return out
}
