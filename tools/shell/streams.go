package shell

import (
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/interp"
)

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
	DrainPipes(&s.drained, s.readers...)
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
