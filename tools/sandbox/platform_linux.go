package sandbox

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func inodeOf(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return "?"
}

// undumpable keeps the sandbox's own programs from reading the helper's
// memory or descriptors through /proc or attaching to it with ptrace.
func undumpable() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// killAllButMe sends SIGKILL to every process this one may signal except
// itself and init. Only inside the sandbox's PID namespace (see
// inSandboxNamespace) does that mean "every process of the call".
func killAllButMe() { _ = syscall.Kill(-1, syscall.SIGKILL) }

// inSandboxNamespace reports whether this process is where the sandbox
// puts its helper: PID 2 of a PID namespace whose init (PID 1, bwrap's
// reaper) is its parent. In the host's namespace PID 2 is always the
// kernel's kthreadd, so a helper started by hand refuses to run.
func inSandboxNamespace() bool { return os.Getpid() == 2 && os.Getppid() == 1 }

// socketPair returns the two ends of a Unix stream socket pair, both
// closed on exec (exec.Cmd dups the child's end into place).
func socketPair() (*os.File, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "helper"), os.NewFile(uintptr(fds[1]), "helper"), nil
}
