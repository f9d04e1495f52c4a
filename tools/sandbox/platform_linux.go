package sandbox

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/guildhall/guildhall/tools/shell"
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
// inSandboxAsInit, inSandboxNamespace) does that mean "every process of
// the call".
func killAllButMe() { _ = syscall.Kill(-1, syscall.SIGKILL) }

// inSandboxNamespace reports whether this process is where the sandbox
// puts a server's exec helper: PID 2 of a PID namespace whose init (PID 1,
// bwrap's reaper) is its parent. In the host's namespace PID 2 is always the
// kernel's kthreadd, so a helper started by hand refuses to run.
func inSandboxNamespace() bool { return os.Getpid() == 2 && os.Getppid() == 1 }

// inSandboxAsInit reports whether this process is where the sandbox puts
// its shell helper: PID 1 of a PID namespace it entered at its start
// (bwrap --as-pid-1), whose parent is outside the namespace (getppid is
// 0). On a host PID 1 is the system's init, so a helper started by hand
// refuses to run.
func inSandboxAsInit() bool { return os.Getpid() == 1 && os.Getppid() == 0 }

// takeChannel moves the helper's channel, its stdin and stdout (one
// socket), to a close-on-exec descriptor, and puts /dev/null in their
// place: no program the helper starts, and no descriptor a program could
// name, reaches the channel.
func takeChannel() (*os.File, error) {
	fd, err := unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("move the channel off stdin: %w", err)
	}
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("open /dev/null: %w", err)
	}
	defer unix.Close(null)
	for _, std := range []int{0, 1} {
		if err := unix.Dup2(null, std); err != nil {
			_ = unix.Close(fd)
			return nil, fmt.Errorf("close the channel's descriptor %d: %w", std, err)
		}
	}
	return os.NewFile(uintptr(fd), "helper channel"), nil
}

// reapOrphans reaps, as each exits, the orphans a command leaves behind
// while it runs (they are the helper's, as the namespace's init), until
// the returned function is called. The sweep after each command reaps
// the rest.
func reapOrphans(r *shell.Reaper) (stop func()) {
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-chld:
				r.ReapExited()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(chld)
		close(done)
	}
}

// socketPair returns the two ends of a Unix stream socket pair, both
// closed on exec (exec.Cmd dups the child's end into place).
func socketPair() (*os.File, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "helper"), os.NewFile(uintptr(fds[1]), "helper"), nil
}
