package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
)

// BenchmarkProcess100ToolTurns measures the whole `guildhall run` process
// doing 100 tool turns (50 read_file, 50 run_shell "echo …") against an
// instantly answering OpenAI-compatible server. It reports:
//   - cpu-ms/run: user+system CPU of guildhall and everything it started;
//   - children-cpu-ms/run: the part spent in processes it started (zero
//     when every command is a shell builtin);
//   - wall-ms/run, peak-rss-MiB and peak-anon-MiB (see measureWith).
//
// GUILDHALL_BENCH_WRAP prefixes the command, e.g. to profile each run with
// "perf record -g -o /tmp/perf%d.data --" (%d is the iteration).
//
// It runs once with the sandbox (the default; the shell commands run in
// the sandbox's helper, whose CPU counts as the children's) and once with
// --sandbox none.
func BenchmarkProcess100ToolTurns(b *testing.B) {
	bin := buildBinary(b)
	for _, mode := range []string{"workspace-write", "none"} {
		b.Run("sandbox="+mode, func(b *testing.B) { benchProcess100(b, bin, mode) })
	}
}

func benchProcess100(b *testing.B, bin, mode string) {
	var cpu, children, wall time.Duration
	var rss, anon int64
	for i := 0; i < b.N; i++ {
		f, ws, guild := hundredTurnWorkspace(b)
		argv := []string{bin, "run", "--workspace", ws, "--guild", guild, "--base-url", f.BaseURL(), "--model", "fake-model", "--no-input", "--json", "--sandbox", mode, "do 100 turns"}
		if w := os.Getenv("GUILDHALL_BENCH_WRAP"); w != "" {
			argv = append(strings.Fields(strings.ReplaceAll(w, "%d", strconv.Itoa(i))), argv...)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		m, out, err := measure(cmd)
		f.Close()
		if err != nil {
			b.Fatalf("run: %v\n%s", err, out)
		}
		if n := bytes.Count(out, []byte(`"type":"tool_result"`)); n != 101 { // 100 turns and finish
			b.Fatalf("the run printed %d tool results, want 101:\n%s", n, out)
		}
		cpu += m.cpu
		children += m.children
		wall += m.wall
		rss = max(rss, m.peakRSS)
		anon = max(anon, m.peakAnon)
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/run")
	b.ReportMetric(float64(children.Milliseconds())/float64(b.N), "children-cpu-ms/run")
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms/run")
	b.ReportMetric(float64(rss)/1024, "peak-rss-MiB")
	b.ReportMetric(float64(anon)/1024, "peak-anon-MiB")
}

// hundredTurnWorkspace is the 100-turn workload: a fake endpoint that
// answers 50 read_file and 50 run_shell calls and a finish, and a one-role
// guild in a fresh workspace.
func hundredTurnWorkspace(b *testing.B) (f *fakellm.Server, ws, guild string) {
	f = fakellm.New()
	f.Queue("solo", hundredTurns(
		func(int) fakellm.Call {
			return fakellm.Call{Name: "read_file", Args: map[string]string{"path": "notes.txt"}}
		},
		func(t int) fakellm.Call {
			return fakellm.Call{Name: "run_shell", Args: map[string]string{"command": "echo turn " + strconv.Itoa(t)}}
		},
		fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "done"}}}})...)
	ws = b.TempDir()
	guild = filepath.Join(b.TempDir(), "guild") // outside: a workspace's own guild asks for trust
	_ = os.MkdirAll(filepath.Join(guild, "prompts"), 0o755)
	_ = os.WriteFile(filepath.Join(guild, "guild.json"), []byte(`{"entryRole":"solo","roles":{"solo":{"systemPrompt":"prompts/solo.md","tools":["read_file","run_shell","finish"]}}}`), 0o644)
	_ = os.WriteFile(filepath.Join(guild, "prompts", "solo.md"), []byte("[role:solo] Work alone."), 0o644)
	_ = os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("some notes\n"), 0o644)
	return f, ws, guild
}

// BenchmarkProcessStartup measures `guildhall --version`: what every
// command pays before doing anything, mostly the package initialisation of
// the dependencies linked into the one binary (see docs/operations.md,
// "Performance").
func BenchmarkProcessStartup(b *testing.B) {
	bin := buildBinary(b)
	var cpu time.Duration
	var rss, anon int64
	for b.Loop() {
		m, out, err := measure(exec.Command(bin, "--version"))
		if err != nil || !bytes.Contains(out, []byte("guildhall version")) {
			b.Fatalf("--version: %v\n%s", err, out)
		}
		cpu += m.cpu
		rss = max(rss, m.peakRSS)
		anon = max(anon, m.peakAnon)
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/run")
	b.ReportMetric(float64(rss)/1024, "peak-rss-MiB")
	b.ReportMetric(float64(anon)/1024, "peak-anon-MiB")
}

type usage struct {
	cpu, children, wall time.Duration
	peakRSS             int64 // KiB
	// peakAnon is the highest RssAnon seen (KiB): the heap and stacks the
	// process allocated, which is what the host must find for it. RSS also
	// counts the executable's clean file pages, which the page cache shares
	// between processes and takes back under pressure.
	peakAnon int64
}

// measure runs cmd to completion and polls /proc/PID while it runs, because
// two figures cannot be had from wait4:
//   - the CPU wait4 reports includes the children the process reaped, so
//     their share is read from cutime+cstime in /proc/PID/stat (clock ticks
//     of 10 ms); the last reading includes every child, since each tool call
//     reaps its processes before the next model call;
//   - wait4's ru_maxrss of a process started by Go's os/exec includes the
//     parent's (this benchmark's) RSS: the child is cloned with CLONE_VM and
//     exec records the old address space's high-water mark. VmHWM in
//     /proc/PID/status is the process's own peak; it only grows, so the last
//     reading before exit is the peak;
//   - anonymous memory has no high-water mark, so RssAnon is sampled at
//     every reading and its largest value kept (a peak shorter than the
//     2 ms period can be missed).
func measure(cmd *exec.Cmd) (usage, []byte, error) { return measureWith(cmd, nil) }

// measureWith is measure that also calls poll, when not nil, at every
// reading, with the process's /proc directory and the time since its start.
// A command whose output already goes somewhere keeps it there (and the
// output returned is empty).
func measureWith(cmd *exec.Cmd, poll func(proc string, since time.Duration)) (usage, []byte, error) {
	var out bytes.Buffer
	if cmd.Stdout == nil && cmd.Stderr == nil {
		cmd.Stdout, cmd.Stderr = &out, &out
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return usage{}, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	proc := "/proc/" + strconv.Itoa(cmd.Process.Pid)
	var ticks, hwm, anon int64
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return usage{wall: time.Since(start), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
				children: time.Duration(ticks) * 10 * time.Millisecond, peakRSS: hwm, peakAnon: anon}, out.Bytes(), err
		case <-tick.C:
			if t, ok := childTicks(proc + "/stat"); ok {
				ticks = t
			}
			if h, a, ok := memoryNow(proc + "/status"); ok {
				hwm, anon = h, max(anon, a)
			}
			if poll != nil {
				poll(proc, time.Since(start))
			}
		}
	}
}

// childTicks reads cutime+cstime from a /proc/PID/stat line.
func childTicks(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	// Fields after the parenthesised command name; cutime and cstime are
	// fields 16 and 17 of the whole line, 14 and 15 after ") ".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, false
	}
	cu, err1 := strconv.ParseInt(f[13], 10, 64)
	cs, err2 := strconv.ParseInt(f[14], 10, 64)
	return cu + cs, err1 == nil && err2 == nil
}

// highWaterRSS reads VmHWM (KiB) from /proc/PID/status; a zombie has none.
func highWaterRSS(path string) (int64, bool) {
	hwm, _, ok := memoryNow(path)
	return hwm, ok
}

// memoryNow reads VmHWM and RssAnon (KiB) from /proc/PID/status.
func memoryNow(path string) (hwm, anon int64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	field := func(name string) (int64, bool) {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, found := strings.CutPrefix(line, name); found {
				if f := strings.Fields(rest); len(f) > 0 {
					n, err := strconv.ParseInt(f[0], 10, 64)
					return n, err == nil
				}
			}
		}
		return 0, false
	}
	hwm, ok = field("VmHWM:")
	anon, _ = field("RssAnon:")
	return hwm, anon, ok
}
