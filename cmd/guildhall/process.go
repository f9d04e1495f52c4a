package main

import (
	"os"
	"runtime"

	"github.com/guildhall/guildhall/internal/initpages"
)

// settleAnnotation marks, in a command's cobra annotations, the commands
// that go on running: the console, run, resume, demo, serve and attach.
const settleAnnotation = "guildhall.settle"

const (
	settleLong     = "long"     // keeps every processor
	settleHeadless = "headless" // one processor, unless --web serves browsers
)

func settles(kind string) map[string]string { return map[string]string{settleAnnotation: kind} }

// settleIn runs before a command marked as going on running (settles),
// once its flags are parsed and before its set-up: it gives back the
// executable's pages that package initialisation mapped (internal/
// initpages), and runs a headless command on one processor. Here, before
// the set-up, because the set-up's own pages would otherwise come on top
// of initialisation's (a peak of 35 instead of 32 MiB on the 100-turn
// benchmark). Short commands (--version, show, runs) exit before the pages
// would matter and skip it, since mapping their code again would cost them
// about 2 ms. A test calling the CLI in-process leaves the test binary
// alone.
func settleIn(common *commonFlags, kind string) {
	if !common.ownsProcess || kind == "" {
		return
	}
	if kind == settleHeadless && common.web == "" {
		oneProcessorWhenHeadless()
	}
	initpages.Release()
}

// oneProcessorWhenHeadless runs a headless command's Go code on one
// processor, unless GOMAXPROCS in the environment says otherwise.
//
// A headless run is a chain of waits: on the model, on a tool, on the disk.
// Its own work, about 1 ms of CPU a turn, hands off between goroutines at
// every step (the run's loop, the HTTP connection's reader and writer, the
// printer of progress lines, the sandbox's pipes). With two or more
// processors each hand-off wakes another thread, and idle processors spin
// looking for work before they sleep; on one, the same goroutines take turns
// on one thread. Measured on the 100-turn benchmark
// (BenchmarkProcess100ToolTurns, docs/operations.md "Performance") on two
// cores: CPU down by a quarter and wall time down by a fifth, with the
// sandbox and without. The console and --web keep every processor: a
// terminal frame or ten browsers' snapshots are real parallel work.
func oneProcessorWhenHeadless() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
