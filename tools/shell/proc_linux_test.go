package shell

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Proc
		ok   bool
	}{
		{"42 (sh) S 7 42 42 0", Proc{PID: 42, PPID: 7, State: "S"}, true},
		{"42 (a) b) (c) Z 9 1", Proc{PID: 42, PPID: 9, State: "Z"}, true},
		{"42 (x y) R 1", Proc{PID: 42, PPID: 1, State: "R"}, true},
		{"42 (sh S 7", Proc{}, false},
		{"42 (sh) S", Proc{}, false},
		{"42 (sh) S x", Proc{}, false},
		{"", Proc{}, false},
	} {
		got, ok := parseStat(42, []byte(tc.line))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

func TestProcsFindsThisProcess(t *testing.T) {
	for _, p := range Procs() {
		if p.PID == os.Getpid() {
			if p.PPID != os.Getppid() {
				t.Errorf("this process's parent is %d, want %d", p.PPID, os.Getppid())
			}
			return
		}
	}
	t.Error("Procs does not list this process")
}
