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
	env := spec.Env
	if env == nil {
		env = []string{}
	}
	env = spec.Reaper.Mark(env)
	res, err := supervise(ctx, func() *exec.Cmd {
		cmd := exec.Command(ShellPath, "-c", spec.Command)
		cmd.Args[0] = "sh"
		cmd.Dir = spec.Dir
		cmd.Env = env
		return cmd
	}, spec)
	var le *launchError
	if errors.As(err, &le) {
		// The start error is worded without the paths it may carry: the
		// sandbox helper sends this message to the host as it is.
		if le.pipe {
			return Result{}, fmt.Errorf("shell: pipe: %w", le.err)
		}
		return Result{}, fmt.Errorf("shell: start %s: %s", ShellPath, ErrText(le.err))
	}
	return res, err
}

// Program is one program for Exec: a fixed argv, never a command line.
type Program struct {
	Dir  string
	Argv []string
	// Env is the program's whole environment; nil is this process's, as
	// for exec.Cmd.
	Env      []string
	Timeout  time.Duration
	MaxChars int // per stream
	// Reaper, when set, registers the program while it runs.
	Reaper *Reaper
}

// Exec runs p.Argv the way Run runs the shell: stdin on /dev/null,
// stdout and stderr captured under the head+tail cap, in a session and
// process group of its own that is killed when the program exits, times
// out or ctx is cancelled. It is for the tools that run one fixed program
// (git, wrapped in the sandbox's bwrap): unlike Run it adds no reaper mark
// to the environment and applies no limits. A program that cannot start
// is an error wrapping the cause; a cancelled ctx returns ErrCancelled
// with the result so far.
func Exec(ctx context.Context, p Program) (Result, error) {
	res, err := supervise(ctx, func() *exec.Cmd {
		cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
		cmd.Dir = p.Dir
		cmd.Env = p.Env
		return cmd
	}, Spec{Timeout: p.Timeout, MaxChars: p.MaxChars, Reaper: p.Reaper})
	var le *launchError
	if errors.As(err, &le) {
		if le.pipe {
			return Result{}, fmt.Errorf("pipe: %w", le.err)
		}
		return Result{}, fmt.Errorf("start %s: %w", p.Argv[0], le.err)
	}
	return res, err
}

// launchError is a command that never ran: a pipe for its output could
// not be made, or it could not start. Run and Exec word it each their
// own way.
type launchError struct {
	pipe bool
	err  error
}

func (e *launchError) Error() string { return e.err.Error() }

// supervise runs the command newCmd makes (its path, arguments,
// directory and environment set) for Run and Exec: the command leads a
// new session and process group, with stdin on /dev/null and stdout and
// stderr captured under the head+tail cap of spec.MaxChars; its group is
// killed when it exits, at spec.Timeout or when ctx is cancelled. Of spec
// it reads Timeout, MaxChars, Reaper and Limits only. It returns a
// *launchError when the command never ran.
func supervise(ctx context.Context, newCmd func() *exec.Cmd, spec Spec) (Result, error) {
	cmd, outR, errR, err := launch(newCmd, spec.Reaper, spec.Limits)
	if err != nil {
		return Result{}, err
	}
	limit := spec.MaxChars * utf8.UTFMax
	stdout, stderr := NewCapture(limit), NewCapture(limit)
	pgid := cmd.Process.Pid
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); _, _ = io.Copy(stdout, outR) }()
	go func() { defer readers.Done(); _, _ = io.Copy(stderr, errR) }()
	var watch *watchdog
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
	// What the command left running in its group goes with it.
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

// launch starts a command of newCmd (startLimited may call it twice)
// leading a new session, with stdin on /dev/null and its stdout and
// stderr on the pipes it returns the read ends of.
func launch(newCmd func() *exec.Cmd, reaper *Reaper, l Limits) (_ *exec.Cmd, outR, errR *os.File, _ error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, &launchError{pipe: true, err: err}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, nil, &launchError{pipe: true, err: err}
	}
	newSession := func() *exec.Cmd {
		cmd := newCmd()
		cmd.Stdout, cmd.Stderr = outW, errW // stdin nil: /dev/null
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return cmd
	}
	var cmd *exec.Cmd
	if l.set() {
		cmd, err = startLimited(newSession, reaper, l)
	} else {
		cmd = newSession()
		err = reaper.Start(cmd)
	}
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, nil, nil, &launchError{err: err}
	}
	return cmd, outR, errR, nil
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
