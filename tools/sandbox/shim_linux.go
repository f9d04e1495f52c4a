package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guildhall/guildhall/tools/shell"
)

// shimMain runs an unconfined server under the shim (shim.go).
func shimMain(args []string, diag io.Writer) int {
	if len(args) < 3 || args[0] != "--" {
		fmt.Fprintln(diag, "guildhall server shim: usage: -- PATH ARGV0 [ARGS...]")
		return 2
	}
	path, argv := args[1], args[2:]
	lifeline := os.NewFile(shimLifelineFD, "lifeline")
	if lifeline == nil {
		fmt.Fprintln(diag, "guildhall server shim: no lifeline")
		return 2
	}
	syscall.CloseOnExec(shimLifelineFD)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(diag, "guildhall server shim:", err)
		return 2
	}
	// The server's death signal is tied to the thread that starts it;
	// this goroutine keeps its thread until the shim exits.
	runtime.LockOSThread()
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(diag, "guildhall: cannot start %s: %v\n", argv[0], cleanErr(err))
		return 127
	}
	server := cmd.Process.Pid
	gone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, lifeline)
		close(gone)
		killDescendants()
	}()
	// Every child is waited for here, the server's exit included, so no
	// orphan's zombie stays.
	status := 128 + 9
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			break // ECHILD: nothing is left below the shim
		}
		if pid == server {
			if ws.Exited() {
				status = ws.ExitStatus()
			}
			go killDescendants()
		}
	}
	select {
	case <-gone:
		return 128 + 9
	default:
		return status
	}
}

// killDescendants sends SIGKILL to every process below this one, round
// after round until none is left (a process may fork while it is
// killed), for at most a few seconds.
func killDescendants() {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		pids := descendants(os.Getpid())
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// descendants lists the live processes below root, from /proc (a zombie
// is dead already: no signal reaches it).
func descendants(root int) []int {
	parent := map[int]int{}
	for _, p := range shell.Procs() {
		if p.State != "Z" {
			parent[p.PID] = p.PPID
		}
	}
	var out []int
	for pid := range parent {
		for p, hops := parent[pid], 0; hops < 1024; p, hops = parent[p], hops+1 {
			if p == root {
				out = append(out, pid)
				break
			}
			if p <= 1 {
				break
			}
		}
	}
	return out
}
