// Package shell runs the commands of the subprocess tools (run_shell, test,
// typecheck) the way the spec says: the host's `/bin/sh -c COMMAND`, with
// stdin empty, stdout and stderr captured under a head+tail cap, the
// scoped environment the caller gives, and nothing the call started left
// running: the shell leads a session and process group of its own, which
// is killed when it exits, times out or is cancelled.
//
// The same code runs in two places: in Guildhall's own process when the
// sandbox is off (tools/sandbox mode none), and inside the sandbox helper
// when it is on, so a command behaves the same either way. Inside the
// sandbox the call also gets resource limits (Limits), applied to the
// shell before it runs its first instruction.
package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// ShellPath is the shell every command runs in, as the spec says (`sh -c`).
const ShellPath = "/bin/sh"

// PipeGrace bounds how long output is drained after a command's process
// group was killed, in case a process escaped it with the pipes.
const PipeGrace = 2 * time.Second

// ErrCancelled reports a command stopped because its context was cancelled
// (not by its own timeout).
var ErrCancelled = errors.New("cancelled")

// Spec is one shell command line to run.
type Spec struct {
	Dir      string
	Command  string
	Env      []string
	Timeout  time.Duration
	MaxChars int // per stream
	// Reaper, when set, registers the shell and marks its environment, so
	// that a sweep afterwards kills what it left and nothing else.
	Reaper *Reaper
	// Limits bound the command's resources; the zero value sets none.
	// They are meant for a shell alone in its PID namespace (the sandbox
	// helper's): the process limit counts every process there.
	Limits Limits
}

// Result is what a command did. ExitCode is -1 when it was killed.
type Result struct {
	ExitCode int    `json:"exitCode"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	TimedOut bool   `json:"timedOut"`
	// StdoutCut is set when stdout exceeded the cap.
	StdoutCut bool `json:"-"`
	// Exceeded names the limit of Spec.Limits the command ran into
	// (LimitCPU, ...), "" when none; Likely says the name is a reading of
	// the command's output rather than a certainty.
	Exceeded Limit `json:"-"`
	Likely   bool  `json:"-"`
}

// Run runs `/bin/sh -c spec.Command` in spec.Dir with spec.Env, stdin on
// /dev/null and stdout and stderr captured under the head+tail cap. The
// shell leads a new session (so it has no controlling terminal and cannot
// reach the operator's with TIOCSTI) and process group; when it exits, its
// group is killed, taking background jobs with it, and so it is when the
// timeout or a cancellation comes first. A shell that cannot start (a
// missing working directory) is returned as an error; everything after
// that is in the result, a syntax error included (sh's exit status 2). A
// cancelled ctx returns ErrCancelled with the result so far.
func Run(ctx context.Context, spec Spec) (Result, error) {
	limit := spec.MaxChars * utf8.UTFMax
	stdout, stderr := NewCapture(limit), NewCapture(limit)
	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("shell: pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return Result{}, fmt.Errorf("shell: pipe: %w", err)
	}
	env := spec.Env
	if env == nil {
		env = []string{}
	}
	env = spec.Reaper.Mark(env)
	newCmd := func() *exec.Cmd {
		cmd := exec.Command(ShellPath, "-c", spec.Command)
		cmd.Args[0] = "sh"
		cmd.Dir = spec.Dir
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = outW, errW // stdin nil: /dev/null
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return cmd
	}
	var cmd *exec.Cmd
	var watch *watchdog
	if spec.Limits.set() {
		cmd, err = startLimited(newCmd, spec.Reaper, spec.Limits)
	} else {
		cmd = newCmd()
		err = spec.Reaper.Start(cmd)
	}
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return Result{}, fmt.Errorf("shell: start %s: %s", ShellPath, ErrText(err))
	}
	pgid := cmd.Process.Pid
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); _, _ = io.Copy(stdout, outR) }()
	go func() { defer readers.Done(); _, _ = io.Copy(stderr, errR) }()
	if spec.Limits.Processes > 0 && aloneInPIDNamespace() {
		watch = startWatchdog(spec.Limits.Processes, pgid)
	}

	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); spec.Reaper.Waited(cmd); close(waited) }()
	timer := time.NewTimer(spec.Timeout)
	defer timer.Stop()
	var res Result
	var runErr error
	select {
	case <-waited:
	case <-watch.tripped():
		<-waited
	case <-timer.C:
		res.TimedOut = true
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-waited
	case <-ctx.Done():
		runErr = ErrCancelled
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-waited
	}
	// What the shell left running in its group goes with it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if watch.stop() {
		res.Exceeded = LimitProcesses
	}
	DrainPipes(&readers, outR, errR)

	res.ExitCode = cmd.ProcessState.ExitCode()
	res.Stdout, res.StdoutCut = stdout.Text(spec.MaxChars)
	res.Stderr, _ = stderr.Text(spec.MaxChars)
	if res.Exceeded == "" && spec.Limits.set() && !res.TimedOut && runErr == nil {
		res.Exceeded, res.Likely = spec.Limits.exceeded(cmd.ProcessState, res.Stderr)
	}
	if res.TimedOut || runErr != nil {
		res.ExitCode = -1
	}
	return res, runErr
}

// DrainPipes waits for the readers copying from pipes to finish, at most
// PipeGrace (a process that escaped its group may still hold a write end),
// then closes the pipes, which ends the readers.
func DrainPipes(readers *sync.WaitGroup, pipes ...*os.File) {
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	grace := time.NewTimer(PipeGrace)
	select {
	case <-drained:
	case <-grace.C:
	}
	grace.Stop()
	for _, p := range pipes {
		p.Close()
	}
	<-drained
}

// ErrText is a start error's reason without the paths it may carry.
func ErrText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	if errors.Is(err, exec.ErrNotFound) {
		return "executable not found"
	}
	return "start failed"
}
