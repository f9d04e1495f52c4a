//go:build linux

package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/proctest"
)

// This test binary, and only it, is a child subreaper, as the guildhall
// binary is.
func TestMain(m *testing.M) {
	if err := EnableSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// A daemon that escaped its session is swept; a child the registry knows
// is left alone, and its own Wait still gets its exit status.
func TestReaperSweepsOrphansOnly(t *testing.T) {
	r := NewReaper()
	keep := exec.Command("sh", "-c", "sleep 1; exit 7")
	if err := r.Start(keep); err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("guildhall-reaper-%d", os.Getpid())
	res, err := Run(context.Background(), Spec{
		Dir: t.TempDir(), Command: "sh -c 'setsid -f sh -c \"sleep 300; : " + mark + "\"; sleep 0.2'; echo started",
		Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second, MaxChars: 1000, Reaper: r,
	})
	if err != nil || res.Stdout != "started\n" {
		t.Fatalf("%+v %v", res, err)
	}
	if n := len(proctest.Matching(mark)); n != 1 {
		t.Fatalf("%d escaped processes before the sweep, want 1", n)
	}
	if killed := r.Sweep(); killed < 1 {
		t.Errorf("the sweep killed %d processes", killed)
	}
	if left := proctest.Matching(mark); len(left) != 0 {
		t.Errorf("escaped processes survived the sweep: %v", left)
	}
	err = keep.Wait()
	r.Waited(keep)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("the registered child's status was lost: %v", err)
	}
	if killed := r.Sweep(); killed != 0 {
		t.Errorf("a second sweep killed %d", killed)
	}
}

func TestCaptureKeepsBothEnds(t *testing.T) {
	c := NewCapture(8)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(c, "%02d", i)
	}
	got, cut := c.Text(8)
	if !cut || !strings.HasPrefix(got, "0001") || !strings.HasSuffix(got, "9899") || !strings.Contains(got, "200 bytes in all") {
		t.Errorf("%q %v", got, cut)
	}
	c = NewCapture(8)
	fmt.Fprint(c, "short")
	if got, cut := c.Text(8); got != "short" || cut {
		t.Errorf("%q %v", got, cut)
	}
}

// The sweep's first check, "has this process any child at all", must not
// skip an orphan that is the only child, nor take the exit status of an
// exited child whose Wait has not run yet.
func TestReaperChildCheck(t *testing.T) {
	if hasChildren() {
		t.Skip("this test binary already has children")
	}
	r := NewReaper()
	if killed := r.Sweep(); killed != 0 {
		t.Fatalf("a sweep with no child killed %d", killed)
	}

	// The only child is an orphan: the command's shell is gone, the daemon
	// it left is not.
	mark := fmt.Sprintf("guildhall-only-orphan-%d", os.Getpid())
	res, err := Run(context.Background(), Spec{
		Dir: t.TempDir(), Command: "sh -c 'setsid -f sh -c \"sleep 300; : " + mark + "\"'; sleep 0.2; echo started",
		Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second, MaxChars: 1000, Reaper: r,
	})
	if err != nil || res.Stdout != "started\n" {
		t.Fatalf("%+v %v", res, err)
	}
	if !hasChildren() {
		t.Fatal("hasChildren missed the adopted orphan")
	}
	// The daemon's shell and its sleep: killing the one reparents the other.
	if killed := r.Sweep(); killed < 1 {
		t.Errorf("the sweep killed %d processes, want the orphan", killed)
	}
	if left := proctest.Matching(mark); len(left) != 0 {
		t.Errorf("the orphan survived the sweep: %v", left)
	}
	if hasChildren() {
		t.Error("the swept orphan is still a child")
	}

	// An exited child nobody has waited for yet keeps its status.
	done := exec.Command("sh", "-c", "exit 5")
	if err := r.Start(done); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if !hasChildren() {
		t.Fatal("hasChildren missed an exited, unwaited child")
	}
	if killed := r.Sweep(); killed != 0 {
		t.Errorf("the sweep killed %d, want 0: the child is registered", killed)
	}
	err = done.Wait()
	r.Waited(done)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Errorf("the exited child's status was lost: %v", err)
	}
}

// A child the rest of the program started on its own, without the
// reaper (the console's notify command), is not an orphan of a shell
// call: a sweep after a call that left a real orphan kills only that one.
func TestReaperSweepSparesUnrelatedChildren(t *testing.T) {
	r := NewReaper()
	notify := exec.Command("sleep", "30")
	if err := notify.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = notify.Process.Kill(); _ = notify.Wait() })
	mark := fmt.Sprintf("guildhall-spare-%d", os.Getpid())
	res, err := Run(context.Background(), Spec{
		Dir: t.TempDir(), Command: "setsid -f sh -c 'sleep 300; : " + mark + "'; sleep 0.2",
		Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second, MaxChars: 1000, Reaper: r,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if killed := r.Sweep(); killed < 1 {
		t.Errorf("the sweep killed %d processes, want the orphan", killed)
	}
	if left := proctest.Matching(mark); len(left) != 0 {
		t.Errorf("the orphan survived: %v", left)
	}
	if err := notify.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the sweep killed a child it did not start: %v", err)
	}
}
