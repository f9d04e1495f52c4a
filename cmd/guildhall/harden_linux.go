//go:build linux

package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hardenProcess wipes the named variables from the kernel's copy of the
// process environment and makes the process non-dumpable. Both are best
// effort: a failure leaves the process as it was, and the keys are already
// out of the environment children inherit.
func hardenProcess(names []string) {
	wipeEnviron(names)
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// wipeEnviron overwrites, with NUL bytes, every NAME=value entry of the
// named variables in the environment block the kernel set up at exec
// (between env_start and env_end of /proc/self/stat). That block is what
// /proc/<pid>/environ reads; os.Unsetenv changes only Go's own copy.
func wipeEnviron(names []string) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: field 3 is the first.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return
	}
	fields := strings.Fields(string(stat[i+1:]))
	const envStart, envEnd = 50 - 3, 51 - 3
	if len(fields) <= envEnd {
		return
	}
	start, err1 := strconv.ParseInt(fields[envStart], 10, 64)
	end, err2 := strconv.ParseInt(fields[envEnd], 10, 64)
	if err1 != nil || err2 != nil || end <= start || end-start > 1<<24 {
		return
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return
	}
	changed := false
	for off := 0; off < len(block); {
		n := bytes.IndexByte(block[off:], 0)
		if n < 0 {
			n = len(block) - off
		}
		entry := block[off : off+n]
		for _, name := range names {
			if bytes.HasPrefix(entry, []byte(name+"=")) {
				clear(entry)
				changed = true
			}
		}
		off += n + 1
	}
	if changed {
		_, _ = mem.WriteAt(block, start)
	}
}
