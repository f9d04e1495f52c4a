// Package shell is the embedded command interpreter the subprocess tools
// run model-chosen commands in: mvdan.cc/sh with its builtins in-process and
// every external program exec'd directly in a new session, output captured
// under a head+tail cap, and nothing the call started left running.
//
// The same code runs in two places: in Guildhall's own process when the
// sandbox is off (tools/sandbox mode none), and inside the sandbox helper
// when it is on, so a command behaves the same either way.
package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// PipeGrace bounds how long output is drained after a program's session
// was killed, in case a process escaped it with the pipes, and how long a
// timed-out interpreter may take to unwind.
const PipeGrace = 2 * time.Second

// ErrCancelled reports a command stopped because its context was cancelled
// (not by its own timeout).
var ErrCancelled = errors.New("cancelled")

// errClosed refuses a program start after the call has ended, e.g. from a
// background job that outlived the script.
var errClosed = errors.New("the shell call has ended")

// Spec is one shell command line to interpret.
type Spec struct {
	Dir      string
	Command  string
	Env      []string
	Timeout  time.Duration
	MaxChars int // per stream
	// Reaper, when set, registers every program the call starts, so that
	// a sweep afterwards can tell them from orphans it must kill.
	Reaper *Reaper
}

// Result is what a command did. ExitCode is -1 when it was killed.
type Result struct {
	ExitCode int    `json:"exitCode"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	TimedOut bool   `json:"timedOut"`
	// StdoutCut is set when stdout exceeded the cap.
	StdoutCut bool `json:"-"`
}

// Run parses and interprets spec.Command with stdin empty and stdout and
// stderr captured under the head+tail cap. A syntax error is a result with
// exit code 2, as sh reports it. Every external program leads its own
// session (so it has no controlling terminal) and process group; when it
// exits its group is killed, and when the script ends, times out or is
// cancelled every group the call started is killed. The timeout bounds
// builtin-only loops too: the interpreter checks its context between
// statements. A failure to set the interpreter up (e.g. a missing working
// directory) is returned as an error; everything after that is in the
// result. A cancelled ctx returns ErrCancelled with the result so far.
func Run(ctx context.Context, spec Spec) (Result, error) {
	limit := spec.MaxChars * utf8.UTFMax
	stdout, stderr := NewCapture(limit), NewCapture(limit)
	finish := func(res Result) Result {
		res.Stdout, res.StdoutCut = stdout.Text(spec.MaxChars)
		res.Stderr, _ = stderr.Text(spec.MaxChars)
		return res
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(spec.Command), "")
	if err != nil {
		fmt.Fprintln(stderr, syntaxErrorText(err))
		return finish(Result{ExitCode: 2}), nil
	}

	runCtx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	sh := &shell{groups: map[int]struct{}{}, reaper: spec.Reaper}
	runner, err := sh.newRunner(spec.Dir, spec.Env, nil, stdout, stderr)
	if err != nil {
		return Result{}, fmt.Errorf("shell: %w", err)
	}
	done := make(chan error, 1)
	go func() {
		// An interpreter bug must not take the process down with it.
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("interpreter failure: %v", p)
			}
		}()
		done <- runner.Run(runCtx, file)
	}()
	var runErr error
	select {
	case runErr = <-done:
	case <-runCtx.Done():
		// Kill what runs so that the handlers waiting on it return; a
		// builtin blocked in a system call (opening a FIFO, say) cannot be
		// interrupted, so the interpreter is abandoned after a grace period.
		sh.close()
		grace := time.NewTimer(PipeGrace)
		select {
		case runErr = <-done:
		case <-grace.C:
			runErr = runCtx.Err()
		}
		grace.Stop()
	}
	// Once the deadline or the cancellation has come, the script's end is
	// theirs even if it then finished normally: `sleep 30 & wait` returns
	// because the kill ended the job.
	interrupted := runCtx.Err() != nil
	// Background jobs may still run: cancelling stops their interpreters
	// at the next statement, and closing kills their programs and refuses
	// new ones.
	cancel()
	sh.close()

	var res Result
	var status interp.ExitStatus
	switch {
	case interrupted, errors.Is(runErr, context.Canceled), errors.Is(runErr, context.DeadlineExceeded):
		res.ExitCode = -1
		if ctx.Err() != nil {
			return finish(res), ErrCancelled
		}
		res.TimedOut = true
	case runErr == nil:
	case errors.As(runErr, &status):
		res.ExitCode = int(status)
	default:
		// A fatal interpreter error, such as running out of descriptors
		// for a pipe: the script stopped where it was.
		fmt.Fprintf(stderr, "sh: %v\n", runErr)
		res.ExitCode = 2
	}
	return finish(res), nil
}

// syntaxErrorText renders a parse error the way a shell reports one.
func syntaxErrorText(err error) string {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("sh: %s: syntax error: %s", pe.Pos, pe.Text)
	}
	return fmt.Sprintf("sh: syntax error: %v", err)
}

// shell is the state of one shell call: the process groups it started and
// still has to kill. Once closed it starts nothing more.
type shell struct {
	mu     sync.Mutex
	closed bool
	groups map[int]struct{} // pgids of programs still running
	reaper *Reaper
}

// newRunner builds an interpreter that runs external programs through
// sh.exec and maps /dev/stdin, /dev/stdout and /dev/stderr to its own
// streams rather than this process's.
func (sh *shell) newRunner(dir string, env []string, stdin io.Reader, stdout, stderr io.Writer, params ...string) (*interp.Runner, error) {
	r, err := interp.New(
		interp.Dir(dir),
		interp.Env(expand.ListEnviron(env...)),
		interp.StdIO(stdin, stdout, stderr),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return sh.exec }),
		interp.OpenHandler(openStdStreams(interp.DefaultOpenHandler())),
		interp.Params(append([]string{"--"}, params...)...),
	)
	if err != nil {
		return nil, fmt.Errorf("interpreter: %w", err)
	}
	return r, nil
}

// close kills every process group the call started and refuses new ones.
func (sh *shell) close() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.closed = true
	for pgid := range sh.groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		delete(sh.groups, pgid)
	}
}

// reap kills the group of a program that exited, taking any background
// children it left with it.
func (sh *shell) reap(pgid int) {
	sh.mu.Lock()
	delete(sh.groups, pgid)
	sh.mu.Unlock()
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
