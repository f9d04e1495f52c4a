package initpages

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

const smapsSample = `00400000-01d03000 r-xp 00000000 fe:00 12 /opt/guild hall/guildhall
Size:              25612 kB
Rss:               12900 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
01d03000-03ef6000 r--p 01903000 fe:00 12 /opt/guild hall/guildhall
Size:              34764 kB
Anonymous:             0 kB
VmFlags: rd mr mw me
03ef6000-03f10000 r--p 03af6000 fe:00 12 /opt/guild hall/guildhall
Size:                104 kB
Anonymous:             8 kB
VmFlags: rd mr mw me ac
03f10000-040b5000 rw-p 03b10000 fe:00 12 /opt/guild hall/guildhall
Size:               1684 kB
Anonymous:           400 kB
VmFlags: rd wr mr mw me ac
7f0000000000-7f0000021000 r-xp 00000000 fe:00 99 /usr/lib/x86_64-linux-gnu/libc.so.6
Size:                132 kB
Anonymous:             0 kB
7f0000100000-7f0000200000 r-xp 00000000 fe:00 12 /opt/guild hall/guildhall (deleted)
Anonymous:             0 kB
7f0000300000-7f0000400000 rw-p 00000000 00:00 0
Anonymous:          1024 kB
`

func TestExeMappingsKeepsOnlyCleanReadOnlyMappingsOfTheExecutable(t *testing.T) {
	got := exeMappings(strings.NewReader(smapsSample), "/opt/guild hall/guildhall")
	want := []mapping{{0x400000, 0x1d03000}, {0x1d03000, 0x3ef6000}}
	if len(got) != len(want) {
		t.Fatalf("mappings %x, want %x (not the one with copied-on-write pages, the writable data, another file, a replaced executable or anonymous memory)", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d is %x, want %x", i, got[i], want[i])
		}
	}
}

// The test binary is an executable like the one binary: after Release its
// file pages are no longer resident, and its code still runs.
func TestReleaseUnmapsTheExecutablesPagesAndTheProgramRunsOn(t *testing.T) {
	before := rssFileKiB(t)
	n := Release()
	after := rssFileKiB(t)
	if n == 0 {
		t.Fatal("Release released nothing")
	}
	if after >= before || before-after < 1024 {
		t.Errorf("resident file pages went from %d to %d KiB; want at least 1 MiB fewer", before, after)
	}
	// Code and read-only data fault back in from the page cache.
	if s := strconv.Itoa(before) + strings.Repeat("x", 3); !strings.HasSuffix(s, "xxx") {
		t.Errorf("after Release, strings misbehave: %q", s)
	}
}

func rssFileKiB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				t.Fatalf("RssFile %q: %v", rest, err)
			}
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}
