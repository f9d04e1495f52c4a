// Package proctest finds, for the tests of the subprocess tools, the
// processes a command left behind: by pid, or by a mark the test put on
// their command lines. A zombie counts as gone: it runs nothing, and only
// its parent's wait removes it.
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Gone reports whether pid no longer runs.
func Gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows "(comm)", found from its last ")": a command may
	// name itself with spaces and parentheses.
	fields := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
	return len(fields) > 0 && string(fields[0]) == "Z"
}

// WaitGone waits, at most d, for pid to go (a SIGKILL to take effect) and
// reports whether it did.
func WaitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !Gone(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// Matching lists the live processes whose command line holds mark.
func Matching(mark string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(mark)) && !Gone(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// WaitNoneMatching fails t unless, within d, no live process has mark on
// its command line; those still there when it fails are killed, so that
// a failing test leaves none behind.
func WaitNoneMatching(t testing.TB, mark string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := Matching(mark)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes outlived the call: %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
