package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// shellCall runs command in the embedded shell interpreter in the workspace.
//
// The interpreter (mvdan.cc/sh) runs builtins such as echo, printf, cd and
// test inside this process and execs every other program directly, so a
// trivial command costs no fork and a real one costs one exec instead of
// two (sh, then the program).
func shellCall(ctx context.Context, env *Env, command string, timeout time.Duration) (procResult, error) {
	return runScript(ctx, scriptSpec{
		Dir:      env.Workspace.Dir(),
		Command:  command,
		Env:      SubprocessEnv(env.PassEnv),
		Timeout:  timeout,
		MaxChars: streamMaxChars,
	})
}

// scriptSpec is one shell command line to interpret.
type scriptSpec struct {
	Dir      string
	Command  string
	Env      []string
	Timeout  time.Duration
	MaxChars int // per stream
}

// errShellClosed refuses a program start after the call has ended, e.g.
// from a background job that outlived the script.
var errShellClosed = errors.New("the shell call has ended")

// runScript parses and interprets spec.Command with stdin empty and stdout
// and stderr captured under the head+tail cap. A syntax error is a result
// with exit code 2, as sh reports it. Every external program leads its own
// process group; when it exits its group is killed, and when the script
// ends, times out or is cancelled every group the call started is killed,
// so no background child outlives the call. The timeout bounds builtin-only
// loops too: the interpreter checks its context between statements. A
// failure to set the interpreter up (e.g. a missing workspace directory)
// is returned as an error; everything after that is in the result.
func runScript(ctx context.Context, spec scriptSpec) (procResult, error) {
	limit := spec.MaxChars * utf8.UTFMax
	stdout, stderr := newCapture(limit), newCapture(limit)
	finish := func(res procResult) procResult {
		res.Stdout, res.stdoutCut = stdout.text(spec.MaxChars)
		res.Stderr, _ = stderr.text(spec.MaxChars)
		return res
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(spec.Command), "")
	if err != nil {
		fmt.Fprintln(stderr, syntaxErrorText(err))
		return finish(procResult{ExitCode: 2}), nil
	}

	runCtx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	sh := &shell{groups: map[int]struct{}{}}
	runner, err := sh.newRunner(spec.Dir, spec.Env, nil, stdout, stderr)
	if err != nil {
		return procResult{}, fmt.Errorf("shell: %w", err)
	}
	done := make(chan error, 1)
	go func() {
		// An interpreter bug must not take the console down with it.
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
		grace := time.NewTimer(pipeGrace)
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

	var res procResult
	var status interp.ExitStatus
	switch {
	case interrupted, errors.Is(runErr, context.Canceled), errors.Is(runErr, context.DeadlineExceeded):
		res.ExitCode = -1
		if ctx.Err() != nil {
			return finish(res), errCancelled
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

// start starts cmd in its own process group and records the group, unless
// the call has ended. The lock is held across the start so that close
// cannot miss a group.
func (sh *shell) start(cmd *exec.Cmd) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.closed {
		return errShellClosed
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	sh.groups[cmd.Process.Pid] = struct{}{}
	return nil
}

// reap kills the group of a program that exited, taking any background
// children it left with it.
func (sh *shell) reap(pgid int) {
	sh.mu.Lock()
	delete(sh.groups, pgid)
	sh.mu.Unlock()
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// exec is the interpreter's exec handler: it runs one external program
// directly, in the interpreter's current directory and environment, as the
// leader of a new process group.
func (sh *shell) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	path, err := interp.LookPathDir(hc.Dir, hc.Env, args[0])
	if err != nil {
		return notRunnable(hc, args[0])
	}
	env := environList(hc.Env)
	streams, err := newChildStreams(hc.Stdout, hc.Stderr)
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	defer streams.finish()
	newCmd := func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, path)
		cmd.Args = args
		cmd.Dir = hc.Dir
		cmd.Env = env
		cmd.Stdin = hc.Stdin // nil: /dev/null
		cmd.Stdout, cmd.Stderr = streams.stdout, streams.stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = pipeGrace
		return cmd
	}
	cmd := newCmd()
	err = sh.start(cmd)
	// A file being written when another goroutine forks is briefly busy
	// (go.dev/issue/22315), e.g. a script written and run by one command.
	for delay := time.Millisecond; errors.Is(err, syscall.ETXTBSY) && delay < 300*time.Millisecond; delay *= 2 {
		time.Sleep(delay)
		cmd = newCmd()
		err = sh.start(cmd)
	}
	streams.started()
	switch {
	case errors.Is(err, errShellClosed):
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	case errors.Is(err, syscall.ENOEXEC):
		// Like sh, run a file without a #! line as a script.
		return sh.runScriptFile(ctx, hc, path, args)
	case err != nil:
		fmt.Fprintf(hc.Stderr, "sh: %s: %s\n", args[0], errText(err))
		if errors.Is(err, syscall.ENOENT) {
			return interp.ExitStatus(127)
		}
		return interp.ExitStatus(126)
	}
	err = cmd.Wait()
	sh.reap(cmd.Process.Pid)

	var exitErr *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		return nil
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return interp.ExitStatus(128 + int(ws.Signal()))
		}
		return interp.ExitStatus(exitErr.ExitCode())
	}
	return fmt.Errorf("%s: %w", args[0], err)
}

// notRunnable reports a program that LookPathDir could not resolve, with
// the status sh gives: 127 when it does not exist, 126 when it cannot run.
func notRunnable(hc interp.HandlerContext, name string) error {
	if !strings.Contains(name, "/") {
		fmt.Fprintf(hc.Stderr, "sh: %s: command not found\n", name)
		return interp.ExitStatus(127)
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(hc.Dir, p)
	}
	info, err := os.Stat(p)
	switch {
	case err != nil:
		fmt.Fprintf(hc.Stderr, "sh: %s: No such file or directory\n", name)
		return interp.ExitStatus(127)
	case info.IsDir():
		fmt.Fprintf(hc.Stderr, "sh: %s: Is a directory\n", name)
	default:
		fmt.Fprintf(hc.Stderr, "sh: %s: Permission denied\n", name)
	}
	return interp.ExitStatus(126)
}

// runScriptFile runs a file the kernel refused with ENOEXEC as a shell
// script in a new interpreter of the same call, as POSIX shells do.
func (sh *shell) runScriptFile(ctx context.Context, hc interp.HandlerContext, path string, args []string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(hc.Stderr, "sh: %s: %s\n", args[0], errText(err))
		return interp.ExitStatus(126)
	}
	if line, _, _ := bytes.Cut(b, []byte("\n")); bytes.IndexByte(line, 0) >= 0 {
		fmt.Fprintf(hc.Stderr, "sh: %s: cannot execute binary file\n", args[0])
		return interp.ExitStatus(126)
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(b), "")
	if err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %s\n", args[0], strings.TrimPrefix(syntaxErrorText(err), "sh: "))
		return interp.ExitStatus(2)
	}
	r, err := sh.newRunner(hc.Dir, environList(hc.Env), hc.Stdin, hc.Stdout, hc.Stderr, args[1:]...)
	if err != nil {
		return err
	}
	return r.Run(ctx, file)
}

// environList is the exported environment a program gets from the
// interpreter's variables.
func environList(env expand.Environ) []string {
	vars := map[string]string{}
	var order []string
	for name, vr := range env.Each {
		if !vr.IsSet() || !vr.Exported || vr.Kind != expand.String {
			// A later entry (an overlay) unsets or unexports an earlier one.
			delete(vars, name)
			continue
		}
		if _, seen := vars[name]; !seen {
			order = append(order, name)
		}
		vars[name] = vr.String()
	}
	list := make([]string, 0, len(vars))
	for _, name := range order {
		if v, ok := vars[name]; ok {
			list = append(list, name+"="+v)
		}
	}
	return list
}

// childStreams are the stdout and stderr a program is started with. A
// program gets an *os.File as is (a pipe of a pipeline, a redirected file);
// any other writer (the call's captures, a $(...) buffer) is fed through a
// pipe drained by this process. Handing exec.Cmd a plain writer instead
// would make Wait wait for every holder of the pipe, including background
// grandchildren, before the group could be killed.
type childStreams struct {
	stdout, stderr  io.Writer // nil, an *os.File of the interpreter, or a pipe
	closeAfterStart []*os.File
	readers         []*os.File
	drained         sync.WaitGroup
}

func newChildStreams(stdout, stderr io.Writer) (*childStreams, error) {
	s := &childStreams{}
	var err error
	if s.stdout, err = s.fileFor(stdout); err != nil {
		s.finish()
		return nil, err
	}
	if sameWriter(stdout, stderr) {
		// One pipe keeps the order of 2>&1 output.
		s.stderr = s.stdout
		return s, nil
	}
	if s.stderr, err = s.fileFor(stderr); err != nil {
		s.finish()
		return nil, err
	}
	return s, nil
}

// sameWriter reports whether a and b are the same pointer; comparing other
// dynamic types could panic.
func sameWriter(a, b io.Writer) bool {
	ta := reflect.TypeOf(a)
	return ta != nil && ta == reflect.TypeOf(b) && ta.Kind() == reflect.Pointer && a == b
}

func (s *childStreams) fileFor(w io.Writer) (io.Writer, error) {
	if w == nil {
		return nil, nil // exec.Cmd opens /dev/null
	}
	if f, ok := w.(*os.File); ok && f != nil {
		return f, nil
	}
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	s.closeAfterStart = append(s.closeAfterStart, pw)
	s.readers = append(s.readers, r)
	s.drained.Add(1)
	go func() { defer s.drained.Done(); _, _ = io.Copy(w, r) }()
	return pw, nil
}

// started closes this process's copies of the pipes' write ends, so the
// readers see EOF once the program's group is gone.
func (s *childStreams) started() {
	for _, f := range s.closeAfterStart {
		f.Close()
	}
	s.closeAfterStart = nil
}

// finish waits, bounded, for the pipes to drain, in case a process escaped
// the group with them, then closes them.
func (s *childStreams) finish() {
	s.started()
	drainPipes(&s.drained, s.readers...)
}

// openStdStreams maps the /dev paths of the standard streams to the
// interpreter's own streams, so that `echo x >/dev/stderr` reaches the
// captured stderr rather than this process's terminal.
func openStdStreams(next interp.OpenHandlerFunc) interp.OpenHandlerFunc {
	return func(ctx context.Context, path string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
		hc := interp.HandlerCtx(ctx)
		switch path {
		case "/dev/stdin", "/dev/fd/0":
			return stdStream{r: hc.Stdin}, nil
		case "/dev/stdout", "/dev/fd/1":
			return stdStream{w: hc.Stdout}, nil
		case "/dev/stderr", "/dev/fd/2":
			return stdStream{w: hc.Stderr}, nil
		}
		return next(ctx, path, flag, perm)
	}
}

// stdStream is a standard stream opened by path; closing it leaves the
// stream open.
type stdStream struct {
	r io.Reader
	w io.Writer
}

func (s stdStream) Read(p []byte) (int, error) {
	if s.r == nil {
		return 0, io.EOF
	}
	return s.r.Read(p)
}

func (s stdStream) Write(p []byte) (int, error) {
	if s.w == nil {
		return 0, syscall.EBADF
	}
	return s.w.Write(p)
}

func (stdStream) Close() error { return nil }
