package shell

import (
	"bytes"
	"os"
	"strconv"
)

// Proc is one process as its /proc/PID/stat file tells it.
type Proc struct {
	PID  int
	PPID int
	// State is the kernel's one-letter state: "Z" for a zombie, an exited
	// process its parent has not waited for yet.
	State string
}

// Procs lists every process /proc shows, for the callers that must find
// processes by parent (the reaper on a kernel without the children files,
// the server shim's kill of all it started). A process that exits while
// the list is read, or whose stat file does not parse, is left out.
func Procs() []Proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if p, ok := parseStat(pid, b); ok {
			out = append(out, p)
		}
	}
	return out
}

// parseStat reads the state and parent from a stat line. The fields that
// follow "(comm)" are state, then ppid; comm is searched from its last ")"
// because a process may name itself with spaces and parentheses.
func parseStat(pid int, b []byte) (Proc, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return Proc{}, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return Proc{}, false
	}
	return Proc{PID: pid, PPID: ppid, State: string(f[0])}, true
}
