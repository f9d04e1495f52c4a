package initpages

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"syscall"
)

// Release unmaps the executable's read-only, unmodified mappings: its code,
// its read-only data and its pc-line tables. A mapping with any private
// (copy-on-write) page is left alone, since MADV_DONTNEED would throw that
// page's contents away: a position-independent build's relocated
// read-only data, or a debugger's breakpoints in the code. It reports how
// many bytes of mappings it released.
func Release() int {
	exe, err := os.Executable()
	if err != nil {
		return 0
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0
	}
	defer f.Close()
	var released int
	for _, m := range exeMappings(f, exe) {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); errno == 0 {
			released += int(m.end - m.start)
		}
	}
	return released
}

type mapping struct{ start, end uintptr }

// exeMappings reads a smaps listing and returns exe's mappings that are
// not writable and hold no anonymous (copied-on-write) page.
func exeMappings(smaps io.Reader, exe string) []mapping {
	var (
		out       []mapping
		cur       mapping
		candidate bool
	)
	finish := func(anonymous bool) {
		if candidate && !anonymous {
			out = append(out, cur)
		}
		candidate = false
	}
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		line := sc.Bytes()
		if rest, ok := bytes.CutPrefix(line, []byte("Anonymous:")); ok {
			finish(!bytes.Equal(bytes.TrimSpace(rest), []byte("0 kB")))
			continue
		}
		if m, perms, path, ok := parseHeader(line); ok {
			candidate = path == exe && !bytes.ContainsRune(perms, 'w')
			cur = m
		}
	}
	return out
}

// parseHeader parses a mapping's first line in smaps,
// "start-end perms offset dev inode path".
func parseHeader(line []byte) (m mapping, perms []byte, path string, ok bool) {
	f := bytes.Fields(line)
	if len(f) < 6 {
		return m, nil, "", false
	}
	addr, rest, found := bytes.Cut(f[0], []byte("-"))
	if !found {
		return m, nil, "", false
	}
	start, err1 := strconv.ParseUint(string(addr), 16, 64)
	end, err2 := strconv.ParseUint(string(rest), 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return m, nil, "", false
	}
	return mapping{uintptr(start), uintptr(end)}, f[1], string(bytes.Join(f[5:], []byte(" "))), true
}
