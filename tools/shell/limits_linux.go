package shell

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// startLimited starts a command of newCmd with l applied before the
// shell runs its first instruction. Go cannot set arbitrary rlimits
// between fork and exec, and prlimit(2) on a running child races with it
// (a child forked before the call keeps the old limits), so the child is
// started traced (PTRACE_TRACEME): the kernel stops it right after
// execve, before any instruction of the shell; the limits are set on it
// with prlimit(2) and the trace is dropped. That costs two system calls
// and a context switch, not another exec. The soft and hard limits are
// set together, so the command cannot raise them back with `ulimit`.
//
// Where tracing is forbidden (Yama's ptrace_scope 3, a seccomp filter
// around Guildhall) the start fails with EPERM; the shell is then started
// plainly and given its limits right after, which leaves the race: what
// it forks in its first instant keeps the old limits.
func startLimited(newCmd func() *exec.Cmd, reaper *Reaper, l Limits) (*exec.Cmd, error) {
	cmd, started, err := startTraced(newCmd(), reaper, l)
	if started || !errors.Is(err, syscall.EPERM) {
		return cmd, err
	}
	return startThenLimit(newCmd(), reaper, l)
}

// startThenLimit starts cmd untraced and sets l on it at once.
func startThenLimit(cmd *exec.Cmd, reaper *Reaper, l Limits) (*exec.Cmd, error) {
	if err := reaper.Start(cmd); err != nil {
		return cmd, err
	}
	if err := setLimits(cmd.Process.Pid, l); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		reaper.Waited(cmd)
		return cmd, err
	}
	return cmd, nil
}

// startTraced is startLimited's way; started reports whether the shell
// started (a later failure killed it).
func startTraced(cmd *exec.Cmd, reaper *Reaper, l Limits) (_ *exec.Cmd, started bool, _ error) {
	// The tracer is the thread that forked the child: keep the start and
	// the detach on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr.Ptrace = true
	if err := reaper.Start(cmd); err != nil {
		return cmd, false, err
	}
	pid := cmd.Process.Pid
	fail := func(err error) error {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		reaper.Waited(cmd)
		return err
	}
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, syscall.WALL, nil)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EINTR) {
			return cmd, true, fail(fmt.Errorf("wait for the traced shell: %w", err))
		}
	}
	if !ws.Stopped() {
		return cmd, true, fail(fmt.Errorf("the traced shell did not stop at exec (status %v)", ws))
	}
	if err := setLimits(pid, l); err != nil {
		return cmd, true, fail(err)
	}
	if err := syscall.PtraceDetach(pid); err != nil {
		return cmd, true, fail(fmt.Errorf("release the traced shell: %w", err))
	}
	return cmd, true, nil
}

// setLimits sets l on pid. A limit above this process's own hard limit
// is lowered to it: only CAP_SYS_RESOURCE may raise a hard limit, and
// the kernel already holds the command to the lower one.
func setLimits(pid int, l Limits) error {
	for _, r := range l.rlimits() {
		var own unix.Rlimit
		if err := unix.Getrlimit(r.resource, &own); err == nil && own.Max < r.hard {
			r.hard = own.Max
			r.soft = min(r.soft, own.Max)
		}
		if err := unix.Prlimit(pid, r.resource, &unix.Rlimit{Cur: r.soft, Max: r.hard}, nil); err != nil {
			return fmt.Errorf("set %s: %w", r.name, err)
		}
	}
	return nil
}

type rlimit struct {
	name       string
	resource   int
	soft, hard uint64
}

// rlimits are the kernel limits l sets. RLIMIT_NPROC backs the watchdog
// where the kernel enforces it: it counts the threads of every process
// of the operator's uid in the sandbox's user namespace (since Linux
// 5.14), but never those of root, which is exempt. Threads count there,
// so it is set well above the process limit: the watchdog's count is
// the limit a user meets.
func (l Limits) rlimits() []rlimit {
	var out []rlimit
	if l.CPUSeconds > 0 {
		// SIGXCPU at the soft limit says why; SIGKILL a second later stops
		// a program that ignores it.
		out = append(out, rlimit{"RLIMIT_CPU", unix.RLIMIT_CPU, uint64(l.CPUSeconds), uint64(l.CPUSeconds) + 1})
	}
	if l.AddressSpace > 0 {
		out = append(out, rlimit{"RLIMIT_AS", unix.RLIMIT_AS, uint64(l.AddressSpace), uint64(l.AddressSpace)})
	}
	if l.FileSize > 0 {
		out = append(out, rlimit{"RLIMIT_FSIZE", unix.RLIMIT_FSIZE, uint64(l.FileSize), uint64(l.FileSize)})
	}
	if l.Processes > 0 {
		n := uint64(l.Processes)*threadsPerProcess + 64
		out = append(out, rlimit{"RLIMIT_NPROC", unix.RLIMIT_NPROC, n, n})
	}
	return out
}

// threadsPerProcess is the room RLIMIT_NPROC leaves for threads: a Go or
// Node program runs about ten.
const threadsPerProcess = 16

// watchInterval is how often the watchdog counts processes: what a fork
// bomb adds between two counts is what it can overshoot by.
const watchInterval = 5 * time.Millisecond

// watchdog counts the processes in this process's PID namespace, other
// than itself and the namespace's init, while a command runs, and stops
// the command when they reach the limit. The kernel's own process limit
// cannot do it: RLIMIT_NPROC counts threads, per user, and exempts root,
// who is whom Guildhall runs as in many containers. A count of /proc is
// one getdents per tick however many processes there are.
type watchdog struct {
	limit int
	pgid  int
	trip  chan struct{} // closed once it stopped the command
	done  chan struct{} // closed to stop the watchdog
	ended chan struct{} // closed when the loop has returned
	once  sync.Once
}

func startWatchdog(limit, pgid int) *watchdog {
	w := &watchdog{limit: limit, pgid: pgid, trip: make(chan struct{}), done: make(chan struct{}), ended: make(chan struct{})}
	go w.loop()
	return w
}

func (w *watchdog) loop() {
	defer close(w.ended)
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
		}
		if countProcesses() < w.limit {
			continue
		}
		w.killAll()
		close(w.trip)
		return
	}
}

// killAll kills the command's processes. Alone in a PID namespace (the
// sandbox helper is its init or init's only child) that is every process
// it may signal; anywhere else, the command's process group. Killing one
// round leaves processes forked meanwhile, so it repeats until none is
// left or a deadline passes.
func (w *watchdog) killAll() {
	alone := aloneInPIDNamespace()
	deadline := time.Now().Add(PipeGrace)
	for {
		if alone {
			_ = syscall.Kill(-1, syscall.SIGKILL)
		} else {
			_ = syscall.Kill(-w.pgid, syscall.SIGKILL)
		}
		if !alone || countProcesses() == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// tripped is closed when the watchdog stopped the command; nil (never
// ready) without a watchdog.
func (w *watchdog) tripped() <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.trip
}

// stop ends the watchdog and reports whether it stopped the command. It
// waits for the loop, which may be killing the command as the command's
// end is seen.
func (w *watchdog) stop() bool {
	if w == nil {
		return false
	}
	w.once.Do(func() { close(w.done) })
	<-w.ended
	select {
	case <-w.trip:
		return true
	default:
		return false
	}
}

// aloneInPIDNamespace reports whether this process is the init of its
// PID namespace or init's child, as the sandbox helper is: in the host's
// namespace PIDs 1 and 2 are init and the kernel's kthreadd.
func aloneInPIDNamespace() bool { return os.Getpid() <= 2 }

// countProcesses counts the processes of /proc other than this one and
// PID 1.
func countProcesses() int {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	self := strconv.Itoa(os.Getpid())
	n := 0
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' || name == self || name == "1" {
			continue
		}
		n++
	}
	return n
}
