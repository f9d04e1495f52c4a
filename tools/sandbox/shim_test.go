package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/proctest"
)

// shimCommand is the server shim running `sh -c script`, given the read
// end of a lifeline; the test closes lifeR once the shim has started, and
// ends the lifeline, as a dying Guildhall does, by closing lifeW.
func shimCommand(t *testing.T, script string) (cmd *exec.Cmd, lifeR, lifeW *os.File) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	lifeR, lifeW, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(exe, ServerShimCommand, "--", "/bin/sh", "sh", "-c", script)
	cmd.ExtraFiles = []*os.File{lifeR}
	return cmd, lifeR, lifeW
}

// An unconfined server that ignores the end of its stdin, with a child
// that left its session (setsid) and a double-forked daemon, is taken
// down whole by its shim once the lifeline ends, which is what the kernel
// does when Guildhall is killed with SIGKILL.
func TestShimKillsTheServerTreeWhenGuildhallDies(t *testing.T) {
	script := `trap '' HUP TERM; setsid sh -c 'trap "" HUP TERM; echo escaped $$; exec sleep 300' & ` +
		`(setsid sh -c 'echo daemon $$; exec sleep 301' &) ; echo server $$; exec sleep 302 < /dev/null`
	cmd, lifeR, lifeW := shimCommand(t, script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lifeR.Close()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	pids := map[string]int{}
	sc := bufio.NewScanner(out)
	for len(pids) < 3 && sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 {
			pids[f[0]], _ = strconv.Atoi(f[1])
		}
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if len(pids) != 3 {
		t.Fatalf("the server's processes did not start: %v", pids)
	}
	time.Sleep(200 * time.Millisecond)
	for name, pid := range pids {
		if proctest.Gone(pid) {
			t.Fatalf("%s (%d) is not running before the lifeline ends", name, pid)
		}
	}
	lifeW.Close() // as the kernel does for a Guildhall killed with SIGKILL
	deadline := time.Now().Add(5 * time.Second)
	for name, pid := range pids {
		if !proctest.WaitGone(pid, time.Until(deadline)) {
			t.Errorf("%s (%d) outlived Guildhall", name, pid)
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("the shim did not exit")
	}
}

// A server that exits takes the processes it started with it, and the
// shim exits with the server's status.
func TestShimExitsWithTheServer(t *testing.T) {
	cmd, lifeR, lifeW := shimCommand(t, `setsid sh -c 'echo $$; exec sleep 300' & sleep 0.2; exit 3`)
	defer lifeW.Close()
	b, err := cmd.Output()
	lifeR.Close()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 {
		t.Fatalf("shim exit: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 {
		t.Fatalf("no child pid: %q", b)
	}
	if !proctest.WaitGone(pid, 5*time.Second) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Error("the server's escaped child outlived it")
	}
}
