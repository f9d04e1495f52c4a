package shell

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// EnableSubreaper makes this process a child subreaper
// (PR_SET_CHILD_SUBREAPER): a process that escapes its parent's session
// and outlives it is reparented here rather than to init, where a Reaper
// sweep finds it. Only a program's main should call it: it changes the
// whole process.
func EnableSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

func isSubreaper() bool {
	// The kernel writes an int through the pointer given as arg2; a heap
	// value does not move while it does.
	v := new(int32)
	err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(v)), 0, 0, 0)
	runtime.KeepAlive(v)
	return err == nil && *v != 0
}

// sweepDeadline bounds one sweep: a process stuck in uninterruptible sleep
// dies when the kernel lets it, and the next sweep reaps it.
const sweepDeadline = 2 * time.Second

func (r *Reaper) sweep() int {
	if !hasChildren() {
		return 0
	}
	deadline := time.Now().Add(sweepDeadline)
	killed := 0
	for {
		r.mu.Lock()
		orphans := r.unknown(children())
		for _, pid := range orphans {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		r.mu.Unlock()
		if len(orphans) == 0 {
			return killed
		}
		killed += len(orphans)
		// Reaping one orphan reparents its own children here, so they
		// appear in the next round.
		for _, pid := range orphans {
			reap(pid, deadline)
		}
		if time.Now().After(deadline) {
			return killed
		}
	}
}

// hasChildren reports whether this process has any child, live or
// exited, in one system call: waitid with WNOHANG fails with ECHILD only
// when there is none, and WNOWAIT leaves an exited child's status for
// whoever waits for it (os/exec's Wait). A command's shell has been
// waited for by the time of the sweep, so most sweeps end here instead
// of reading a file per thread. Any error but ECHILD counts
// as "maybe": the full sweep then decides.
func hasChildren() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return !errors.Is(err, unix.ECHILD)
}

// marked reports whether pid's environment, as it was at its last exec,
// holds the reaper's mark. A process whose environment cannot be read
// (gone, or made unreadable by a set-uid exec) is not taken for one.
func (r *Reaper) marked(pid int) bool {
	if r.mark == "" {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if string(kv) == r.mark {
			return true
		}
	}
	return false
}

// reap waits for pid, and only pid, to exit, until deadline.
func reap(pid int, deadline time.Time) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if got == pid || (err != nil && err != syscall.EINTR) || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// children lists this process's children: /proc/self/task/*/children
// (each thread's own), or a scan of /proc when the kernel lacks that file.
//
// It runs after every shell command, so it reads the task directory once and
// then each thread's file by name: filepath.Glob would also list every
// thread's directory of some fifty entries to match "children" in it.
func children() []int {
	tasks, err := taskIDs()
	if err != nil {
		return scanChildren()
	}
	var out []int
	read := 0
	for _, tid := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + tid + "/children")
		if err != nil {
			continue
		}
		read++
		for _, field := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(field)); err == nil {
				out = append(out, pid)
			}
		}
	}
	if read == 0 { // a kernel without the children files
		return scanChildren()
	}
	return out
}

// taskIDs lists this process's threads.
func taskIDs() ([]string, error) {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// scanChildren finds the processes whose parent is this one, zombies
// among them: an exited orphan still has to be reaped.
func scanChildren() []int {
	self := os.Getpid()
	var out []int
	for _, p := range Procs() {
		if p.PPID == self {
			out = append(out, p.PID)
		}
	}
	return out
}
