package main

import (
	"os"
	"runtime"
)

// settleAnnotation marks, in a command's cobra annotations, the headless
// commands that go on running (run and resume), which use one processor
// unless --web serves browsers.
const settleAnnotation = "guildhall.settle"

const settleHeadless = "headless"

func settles(kind string) map[string]string { return map[string]string{settleAnnotation: kind} }

// settleIn runs before a command marked as going on running (settles),
// once its flags are parsed and before its set-up: a headless command runs
// on one processor. A test calling the CLI in-process leaves the test
// binary alone.
func settleIn(common *commonFlags, kind string) {
	if !common.ownsProcess || kind != settleHeadless || common.web != "" {
		return
	}
	oneProcessorWhenHeadless()
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
