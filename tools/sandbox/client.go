package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/guildhall/guildhall/tools/shell"
)

// helperStartTimeout bounds the helper's start: bwrap's namespaces and
// mounts, then the binary's initialisation (tens of milliseconds).
const helperStartTimeout = 20 * time.Second

// helperProc is a running helper: bwrap, with the helper inside as the
// sandbox's PID 1 (--as-pid-1: no bwrap init holds the channel), talking
// over a socket pair passed as its stdin and stdout, which it moves to a
// close-on-exec descriptor before anything runs (helper.go). A socket
// rather than pipes: a socket cannot be reopened by path through /proc,
// and the commands' shells get pipes of their own, never the socket.
// Every frame is authenticated with the helper's own secret (protocol.go).
type helperProc struct {
	cmd       *exec.Cmd
	conn      *os.File
	ch        *channel
	stderr    *shell.Capture
	done      chan struct{} // closed once the process was waited for
	home      string        // HOME inside
	proxyPort int
	ident     string // what .git and .orchestration were at the start
}

// watchIdent is what the workspace's .git and .orchestration are now; a
// change means the mounts no longer fit.
func watchIdent(ws string) string {
	var b strings.Builder
	for _, name := range []string{".git", ".orchestration"} {
		if fi, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			b.WriteString(fileIdent(fi))
		}
		b.WriteByte('|')
	}
	return b.String()
}

// ensureHelper returns the running helper, starting (or restarting) it.
func (s *Sandbox) ensureHelper() (*helperProc, error) {
	if hp := s.helper; hp != nil {
		if !hp.dead() && watchIdent(s.opts.Workspace) == hp.ident {
			return hp, nil
		}
		s.stopHelper()
	}
	if err := s.host.Check(s.opts.Policy); err != nil {
		return nil, checkFailed(err)
	}
	if err := s.ensureScratch(); err != nil {
		return nil, err
	}
	var sock string
	if s.opts.Policy.Network() == NetworkAllowlist {
		var err error
		if sock, err = s.ensureProxy(); err != nil {
			return nil, err
		}
	}
	exe, err := s.host.executable()
	if err != nil {
		return nil, startFailed(err.Error())
	}
	if err := s.guardGit(s.opts.Policy); err != nil {
		return nil, startFailed(err.Error())
	}
	ident := watchIdent(s.opts.Workspace)
	l, err := newLayout(s.opts.Policy, s.opts.Workspace, s.scratch)
	if err != nil {
		return nil, startFailed(err.Error())
	}
	l.view = s.ensureView()
	args, err := l.args(mountOptions{helperExe: exe, proxySock: sock})
	if err != nil {
		return nil, startFailed(err.Error())
	}
	// The helper is the sandbox's PID 1: bwrap's own init would hold the
	// channel as its stdin and stdout, where a command could take it.
	args = append(args, "--as-pid-1", "--clearenv", "--", helperPath, HelperCommand)
	if sock != "" {
		args = append(args, "--proxy", proxySocket)
	}
	hp, err := s.host.startHelper(args)
	if err != nil {
		return nil, err
	}
	hp.home, hp.ident = l.home, ident
	s.helper = hp
	return hp, nil
}

// startHelper starts bwrap with args and waits for the helper's hello.
func (h *Host) startHelper(args []string) (*helperProc, error) {
	ours, theirs, err := socketPair()
	if err != nil {
		return nil, startFailed("socket pair: " + err.Error())
	}
	defer theirs.Close()
	cmd := exec.Command(h.bwrapPath(), args...)
	cmd.Stdin, cmd.Stdout = theirs, theirs
	stderr := shell.NewCapture(4096)
	cmd.Stderr = stderr
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := h.reaper.Start(cmd); err != nil {
		ours.Close()
		return nil, startFailed("start bwrap: " + err.Error())
	}
	hp := &helperProc{cmd: cmd, conn: ours, stderr: stderr, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		h.reaper.Waited(cmd)
		close(hp.done)
	}()
	secret, err := newSecret()
	if err != nil {
		hp.kill()
		return nil, startFailed(err.Error())
	}
	hp.ch = newChannel(secret, toHelper)
	got := make(chan error, 1)
	var hi hello
	go func() {
		// The socket's buffer takes the secret whether or not the
		// helper reads yet.
		if _, err := ours.Write(secret); err != nil {
			got <- fmt.Errorf("send the helper its secret: %w", err)
			return
		}
		got <- hp.ch.read(ours, &hi)
	}()
	t := time.NewTimer(helperStartTimeout)
	defer t.Stop()
	select {
	case err = <-got:
	case <-t.C:
		err = fmt.Errorf("no answer within %s", helperStartTimeout)
	}
	switch {
	case err == nil && hi.Error != "":
		err = fmt.Errorf("%s", hi.Error)
	case err == nil && hi.Version != protocolVersion:
		err = fmt.Errorf("the helper speaks protocol %d, not %d (was the binary replaced while running?)", hi.Version, protocolVersion)
	}
	var te *TamperedError
	if errors.As(err, &te) {
		hp.kill()
		return nil, te
	}
	if err != nil {
		hp.kill()
		return nil, startFailed(hp.failure(err))
	}
	hp.proxyPort = hi.ProxyPort
	return hp, nil
}

// failure describes why the helper stopped, with bwrap's own words.
func (hp *helperProc) failure(err error) string {
	msg, _ := hp.stderr.Text(2000)
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return err.Error()
	}
	return fmt.Sprintf("%v: %s", err, msg)
}

// dead reports whether the helper's process has exited.
func (hp *helperProc) dead() bool {
	select {
	case <-hp.done:
		return true
	default:
		return false
	}
}

// kill ends the helper and everything in its sandbox: bwrap leads the
// session; its PID namespace dies with it.
func (hp *helperProc) kill() {
	_ = syscall.Kill(-hp.cmd.Process.Pid, syscall.SIGKILL)
	_ = hp.cmd.Process.Kill()
	hp.conn.Close()
	t := time.NewTimer(shell.PipeGrace)
	defer t.Stop()
	select {
	case <-hp.done:
	case <-t.C:
	}
}

func (s *Sandbox) stopHelper() {
	if s.helper != nil {
		s.helper.kill()
		s.helper = nil
	}
}

// call sends one request and waits for its response, at most limit. A
// cancelled ctx or the limit kills the helper (it is restarted at the next
// call); so does a helper that dies. A response that fails its
// authentication kills it too and is a *TamperedError.
func (hp *helperProc) call(ctx context.Context, req request, limit time.Duration) (shell.Result, error) {
	if err := hp.ch.write(hp.conn, req); err != nil {
		hp.kill()
		return gone(), nil
	}
	got := make(chan error, 1)
	var resp response
	go func() { got <- hp.ch.read(hp.conn, &resp) }()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-got:
		var te *TamperedError
		if errors.As(err, &te) {
			hp.kill()
			return shell.Result{ExitCode: -1}, te
		}
		if err != nil {
			hp.kill()
			return gone(), nil
		}
	case <-ctx.Done():
		hp.kill()
		<-got
		return shell.Result{ExitCode: -1}, shell.ErrCancelled
	case <-t.C:
		hp.kill()
		<-got
		return shell.Result{ExitCode: -1, TimedOut: true}, nil
	}
	if resp.Failure != "" {
		return shell.Result{}, fmt.Errorf("%s", resp.Failure)
	}
	return shell.Result{ExitCode: resp.ExitCode, Stdout: resp.Stdout, Stderr: resp.Stderr,
		TimedOut: resp.TimedOut, StdoutCut: resp.StdoutCut}, nil
}

// gone is the result of a command whose sandbox shell died under it.
func gone() shell.Result {
	return shell.Result{ExitCode: -1, Stderr: "sh: the sandbox's shell stopped before the command finished (a command may have killed it); it starts again at the next command\n"}
}
