package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/guildhall/guildhall/tools/egress"
	"github.com/guildhall/guildhall/tools/shell"
)

// HelperCommand is the hidden sub-command that makes the guildhall binary
// (or a test binary) the in-sandbox helper. It is dispatched before any
// command-line parsing (RunHelperIfAsked).
const HelperCommand = "__guildhall-sandbox-helper"

// ExecCommand is the hidden sub-command that makes the binary the exec
// helper of a long-lived server (StartServer): it bridges the proxy, then
// runs the server on its own stdin and stdout.
const ExecCommand = "__guildhall-sandbox-exec"

// RunHelperIfAsked runs the helper and exits when this process was
// started as one; otherwise it returns at once. A program's main, or a
// test's TestMain, calls it first.
func RunHelperIfAsked() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case HelperCommand:
		// The helper serves one request at a time; on one processor its
		// goroutines (the request reader, the shell, the pipes' copiers)
		// take turns on one thread instead of waking others.
		if os.Getenv("GOMAXPROCS") == "" {
			runtime.GOMAXPROCS(1)
		}
		os.Exit(helperMain(os.Args[2:], os.Stderr))
	case ExecCommand:
		os.Exit(execMain(os.Args[2:], os.Stderr))
	case ServerShimCommand:
		os.Exit(shimMain(os.Args[2:], os.Stderr))
	}
}

// helperMain serves requests read from the channel (its stdin and
// stdout, a socket), one at a time, until the channel ends. It is the
// sandbox's PID 1 (bwrap --as-pid-1), so the processes a command leaves
// behind are reparented to it: it reaps them as they exit (reapOrphans),
// and after each command it kills every other process in the sandbox, so
// nothing a command started (a background job, a `setsid -f` daemon)
// outlives it. When the channel ends (Guildhall went away) it exits, and
// the kernel kills what is left of its PID namespace.
//
// Before anything else it makes itself undumpable (no command may read
// its memory or take its descriptors with pidfd_getfd or /proc), moves
// the channel to a close-on-exec descriptor with /dev/null in its place
// on stdin and stdout (no program it starts inherits it), and reads its
// secret from it: every frame after that is authenticated (protocol.go).
func helperMain(args []string, diag io.Writer) int {
	if !inSandboxAsInit() {
		fmt.Fprintln(diag, "guildhall: the sandbox helper only runs inside the sandbox Guildhall starts")
		return 2
	}
	if err := undumpable(); err != nil {
		fmt.Fprintln(diag, "guildhall sandbox helper:", err)
		return 2
	}
	conn, err := takeChannel()
	if err != nil {
		fmt.Fprintln(diag, "guildhall sandbox helper:", err)
		return 2
	}
	defer conn.Close()
	var sock string
	if len(args) == 2 && args[0] == "--proxy" {
		sock = args[1]
	} else if len(args) != 0 {
		fmt.Fprintln(diag, "guildhall sandbox helper: unexpected arguments")
		return 2
	}
	secret := make([]byte, secretSize)
	if _, err := io.ReadFull(conn, secret); err != nil {
		fmt.Fprintln(diag, "guildhall sandbox helper: read the secret:", err)
		return 2
	}
	ch := newChannel(secret, fromHelper)
	clear(secret)
	// As the namespace's init it adopts every orphan; as a subreaper the
	// Reaper's sweep (which checks for one) reaps them after a command.
	if err := shell.EnableSubreaper(); err != nil {
		fmt.Fprintln(diag, "guildhall sandbox helper:", err)
		return 2
	}
	reaper := shell.NewReaper()
	stopReaping := reapOrphans(reaper)
	defer stopReaping()
	hi := hello{Version: protocolVersion}
	if sock != "" {
		port, err := bridgeProxy(sock)
		if err != nil {
			hi.Error = "proxy bridge: " + err.Error()
		}
		hi.ProxyPort = port
	}
	if err := ch.write(conn, hi); err != nil || hi.Error != "" {
		return 1
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	reqs := make(chan request)
	go func() {
		defer close(reqs)
		defer stop()
		for {
			var req request
			if err := ch.read(conn, &req); err != nil {
				return
			}
			select {
			case reqs <- req:
			case <-ctx.Done():
				return
			}
		}
	}()
	for req := range reqs {
		resp := serve(ctx, req, reaper)
		killAllButMe()
		reaper.Sweep()
		if ctx.Err() != nil {
			return 0
		}
		if err := ch.write(conn, resp); err != nil {
			return 1
		}
	}
	killAllButMe()
	reaper.Sweep()
	return 0
}

// serve runs one request's command.
func serve(ctx context.Context, req request, reaper *shell.Reaper) response {
	res, err := shell.Run(ctx, shell.Spec{
		Dir: req.Dir, Command: req.Command, Env: req.Env,
		Timeout: time.Duration(req.TimeoutMs) * time.Millisecond, MaxChars: req.MaxChars, Limits: req.Limits,
		Reaper: reaper,
	})
	if err != nil && !errors.Is(err, shell.ErrCancelled) {
		return response{Failure: err.Error()}
	}
	if note := limitNote(res, req.Limits); note != "" {
		res.Stderr += "\n" + note + "\n"
	}
	return response{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, TimedOut: res.TimedOut, StdoutCut: res.StdoutCut}
}

// bridgeProxy listens on the sandbox's own loopback and carries each
// connection to Guildhall's proxy over the Unix socket bound in at sock:
// programs speak TCP to a proxy, and the sandbox has no other way out.
func bridgeProxy(sock string) (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go bridge(c, sock)
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	n, _ := strconv.Atoi(port)
	return n, nil
}

func bridge(c net.Conn, sock string) {
	defer c.Close()
	up, err := net.Dial("unix", sock)
	if err != nil {
		return
	}
	defer up.Close()
	egress.Pipe(c, up, c)
}
