package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// start starts cmd and records its group, unless the call has ended. The
// lock is held across the start so that close cannot miss a group.
func (sh *shell) start(cmd *exec.Cmd) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.closed {
		return errClosed
	}
	if err := sh.reaper.Start(cmd); err != nil {
		return err
	}
	sh.groups[cmd.Process.Pid] = struct{}{}
	return nil
}

// exec is the interpreter's exec handler: it runs one external program
// directly, in the interpreter's current directory and environment, as the
// leader of a new session. A new session, not only a new process group:
// the program then has no controlling terminal, so it cannot open
// /dev/tty or push keystrokes into the operator's terminal with TIOCSTI.
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
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = PipeGrace
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
	case errors.Is(err, errClosed):
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	case errors.Is(err, syscall.ENOEXEC):
		// Like sh, run a file without a #! line as a script.
		return sh.runScriptFile(ctx, hc, path, args)
	case err != nil:
		fmt.Fprintf(hc.Stderr, "sh: %s: %s\n", args[0], ErrText(err))
		if errors.Is(err, syscall.ENOENT) {
			return interp.ExitStatus(127)
		}
		return interp.ExitStatus(126)
	}
	err = cmd.Wait()
	sh.reaper.Waited(cmd)
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
		fmt.Fprintf(hc.Stderr, "sh: %s: %s\n", args[0], ErrText(err))
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
