package shell

import (
	"os"
	"strings"
	"syscall"
)

// This file holds the per-command resource limits the sandbox gives a
// shell call: what they are, and how a result tells which one a command
// ran into. Applying them is platform code (limits_linux.go).

// Limits bound one command's resources. A zero field sets no limit.
type Limits struct {
	// CPUSeconds is each process's CPU time (RLIMIT_CPU): SIGXCPU at the
	// limit, SIGKILL a second later.
	CPUSeconds int64 `json:"cpuSeconds,omitempty"`
	// AddressSpace is each process's virtual memory in bytes (RLIMIT_AS).
	AddressSpace int64 `json:"addressSpace,omitempty"`
	// FileSize is the largest file a process may write, in bytes
	// (RLIMIT_FSIZE): SIGXFSZ, or EFBIG where the signal is ignored.
	FileSize int64 `json:"fileSize,omitempty"`
	// Processes is how many processes the command may have at once,
	// counted in its PID namespace (see startWatchdog).
	Processes int `json:"processes,omitempty"`
}

// Limit names one of the limits.
type Limit string

// The limits, by name.
const (
	LimitCPU          Limit = "cpu"
	LimitAddressSpace Limit = "addressSpace"
	LimitFileSize     Limit = "fileSize"
	LimitProcesses    Limit = "processes"
)

func (l Limits) set() bool {
	return l.CPUSeconds > 0 || l.AddressSpace > 0 || l.FileSize > 0 || l.Processes > 0
}

// exceeded reads, from how the shell ended and what it wrote on stderr,
// which limit stopped it. A signal the kernel sends at a limit, as the
// shell's own death or as the status 128+N sh gives a child it killed, is
// a certainty; an error message only says it likely was the limit.
func (l Limits) exceeded(st *os.ProcessState, stderr string) (Limit, bool) {
	sig := syscall.Signal(0)
	if ws, ok := st.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Signaled():
			sig = ws.Signal()
		case ws.Exited() && ws.ExitStatus() > 128:
			sig = syscall.Signal(ws.ExitStatus() - 128)
		}
	}
	cpu := l.CPUSeconds > 0 && (sig == syscall.SIGXCPU ||
		sig == syscall.SIGKILL && (st.UserTime()+st.SystemTime()).Seconds() >= float64(l.CPUSeconds))
	// sh reports a child a signal killed with the signal's name; a
	// program that ignores SIGXFSZ gets EFBIG.
	said := func(s string) bool { return strings.Contains(strings.ToLower(stderr), strings.ToLower(s)) }
	switch {
	case cpu:
		return LimitCPU, false
	case l.FileSize > 0 && sig == syscall.SIGXFSZ:
		return LimitFileSize, false
	case l.CPUSeconds > 0 && said(syscall.SIGXCPU.String()):
		return LimitCPU, true
	case l.FileSize > 0 && (said(syscall.SIGXFSZ.String()) || said(syscall.EFBIG.Error())):
		return LimitFileSize, true
	case l.AddressSpace > 0 && outOfMemory(strings.ToLower(stderr)):
		return LimitAddressSpace, true
	}
	return "", false
}

// outOfMemory recognises what common programs print when an allocation
// fails (lower-cased): libc's strerror, GNU's xalloc_die, Go's runtime,
// C++, Python and V8.
func outOfMemory(stderr string) bool {
	for _, s := range []string{syscall.ENOMEM.Error(), "memory exhausted", "out of memory", "std::bad_alloc",
		"memoryerror", "allocation failed", "fatal process oom", "failed to reserve virtual memory"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}
