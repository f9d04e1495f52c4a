package shell

// Reaping exited orphans while a call still runs. A process that is a PID
// namespace's init (the sandbox helper) adopts every orphan of the
// namespace; between two sweeps their zombies would pile up, each holding
// a process slot, for as long as the call runs.

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReapExited reaps the children that have exited and that the registry
// does not know: orphans. It kills nothing, so an orphan still running
// goes on. It stops at the first exited child the registry knows (whose
// status is os/exec's to take), and returns how many it reaped. Safe to
// call at any time: a child being started is registered under the same
// lock before anyone can see it here as unknown.
func (r *Reaper) ReapExited() int {
	if r == nil {
		return 0
	}
	n := 0
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		pid := siginfoPid(&info)
		if err != nil || pid <= 0 {
			return n
		}
		r.mu.Lock()
		_, known := r.live[pid]
		if !known {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
		r.mu.Unlock()
		if known {
			return n
		}
		n++
	}
}

// siginfoPid is si_pid of a waitid result: the first field of the union
// after three ints, aligned to a pointer.
func siginfoPid(info *unix.Siginfo) int {
	off := uintptr(12)
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 16
	}
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), off)))
}
