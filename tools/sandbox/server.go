package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/guildhall/guildhall/tools/egress"
)

// ServerSpec is a long-lived program — an MCP server speaking over its
// stdin and stdout — to start in a sandbox of its own. Unlike a shell
// command it outlives a tool call, so it does not share the run's helper:
// it gets its own namespaces, its own HOME and /tmp, its own network
// policy and, with an allowlist, its own proxy, so that one server's
// network rules are never another's or the shell's.
type ServerSpec struct {
	// Name names the server in messages and in its scratch folder's name;
	// an identifier (letters, digits, '_', '-').
	Name string
	// Argv is the program and its arguments; a program name without a
	// slash is looked up on Env's PATH inside the sandbox.
	Argv []string
	// Env is the program's whole environment. HOME and TMPDIR are replaced
	// by the sandbox's own and, with an allowlist, the proxy variables by
	// the sandbox's proxy.
	Env []string
	// Policy is the server's own: its mode (workspace-write, read-only;
	// none runs it unconfined), network and writable paths. When the
	// run's own policy is none (--sandbox none), the server runs
	// unconfined too.
	Policy Policy
	// OnEgress, when set, gets every decision of the server's proxy. It is
	// called from the proxy's goroutines.
	OnEgress func(egress.Decision)
	// Stderr receives the program's standard error; nil discards it.
	Stderr io.Writer
}

// Server is a running sandboxed program: its stdin and stdout, and a way
// to stop it. Stop ends every process the program started.
type Server struct {
	// Stdin and Stdout are the program's standard input and output.
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	// Confined reports whether the program runs in a sandbox.
	Confined bool

	sb      *Sandbox
	ident   string // what .git and .orchestration were at the start (confined)
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	proxy   *egress.Proxy
	scratch string // this server's scratch folder; "" unconfined
	// lifeline is the write end of an unconfined server's shim's
	// lifeline: closing it (or Guildhall dying) ends the server and
	// everything it started.
	lifeline *os.File
	stop     sync.Once
}

// serverExitGrace is how long Stop waits, after closing the program's
// stdin (the MCP way to ask a stdio server to exit), before killing it.
const serverExitGrace = 2 * time.Second

// StartServer starts spec's program: in a sandbox of its own when both the
// run's policy and the server's confine, else as a plain process in a new
// session. It returns once the program is started (a program that cannot
// be found fails here, unconfined, or exits at once with status 127 in the
// sandbox); talking to it is the caller's business. Close of the run's
// sandbox stops every server still running.
func (s *Sandbox) StartServer(spec ServerSpec) (*Server, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, errors.New("a server needs a command")
	}
	if !plainServerName(spec.Name) {
		return nil, fmt.Errorf("server name %q is not an identifier", spec.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, startFailed("the run's sandbox is closed")
	}
	var (
		srv *Server
		err error
	)
	if s.opts.Policy.Confined() && spec.Policy.Confined() {
		srv, err = s.startConfined(spec)
	} else {
		srv, err = s.startUnconfined(spec)
	}
	if err != nil {
		return nil, err
	}
	s.serversMu.Lock()
	s.servers = append(s.servers, srv)
	s.serversMu.Unlock()
	return srv, nil
}

// startUnconfined runs the program as this account's process, in a new
// session (no controlling terminal), registered with the reaper.
func (s *Sandbox) startUnconfined(spec ServerSpec) (*Server, error) {
	path, err := unconfinedProgram(spec.Argv[0], spec.Env, s.opts.Workspace)
	if err != nil {
		return nil, &StartError{Msg: fmt.Sprintf("cannot start %s: %v", spec.Argv[0], err)}
	}
	// The server runs under the shim (shim.go), which takes it and every
	// process it started down when Guildhall goes, a kill -9 included.
	exe, err := s.host.executable()
	if err != nil {
		return nil, startFailed(err.Error())
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, startFailed("the server's lifeline: " + err.Error())
	}
	defer lifeR.Close()
	cmd := exec.Command(exe, append([]string{ServerShimCommand, "--", path}, spec.Argv...)...)
	cmd.Env = spec.Env
	cmd.Dir = s.opts.Workspace
	cmd.ExtraFiles = []*os.File{lifeR}
	srv, err := s.launch(cmd, spec, nil, "")
	if err != nil {
		lifeW.Close()
		return nil, err
	}
	srv.lifeline = lifeW
	return srv, nil
}

// unconfinedProgram finds an unconfined server's program: a name with a
// slash as it is (relative to the workspace, where the server starts), any
// other on env's PATH. Empty and relative PATH entries are skipped, as the
// scoped PATH of the tools skips them: they name folders relative to the
// workspace (./node_modules/.bin), which sandboxed commands write. A
// program that resolves inside the workspace (ws, canonical) is refused:
// a command could have planted or rewritten it, and it would run with the
// operator's full powers.
func unconfinedProgram(name string, env []string, ws string) (string, error) {
	path, err := lookPath(name, env)
	if err != nil {
		return "", err
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(ws, abs)
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if within(canon, ws) {
		return "", fmt.Errorf("it resolves to %s, inside the workspace, and a server with sandbox mode none may not run a program from there (a sandboxed command can rewrite it); install it outside the workspace or let the server run sandboxed", canon)
	}
	return abs, nil
}

// lookPath finds a program as the sandbox's exec helper would: a name
// with a slash as it is, any other on env's PATH's absolute entries.
func lookPath(name string, env []string) (string, error) {
	if filepath.Base(name) != name {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on the server's PATH (its relative entries are not searched)", name)
}

// startConfined starts bwrap, with the exec helper inside starting the
// program: the helper bridges the proxy (it must listen on the sandbox's
// own loopback, which exists only inside) and takes everything down with
// it when the program exits.
func (s *Sandbox) startConfined(spec ServerSpec) (*Server, error) {
	if err := s.host.Check(spec.Policy); err != nil {
		return nil, checkFailed(err)
	}
	if err := s.ensureScratch(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(s.scratch, "mcp-"+spec.Name+"-")
	if err != nil {
		return nil, startFailed("create the server's scratch folder: " + err.Error())
	}
	for _, sub := range []string{"home", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			_ = removeAll(dir)
			return nil, startFailed("create the server's scratch folder: " + err.Error())
		}
	}
	fail := func(err error) (*Server, error) {
		_ = removeAll(dir)
		return nil, err
	}
	var proxy *egress.Proxy
	sock := ""
	if spec.Policy.Network() == NetworkAllowlist {
		sock = filepath.Join(dir, "proxy.sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			return fail(startFailed("start the server's network proxy: " + err.Error()))
		}
		proxy = &egress.Proxy{
			Dialer:     egress.Dialer{Policy: spec.Policy.Allow(), Via: "mcp:" + spec.Name, Resolver: s.opts.Resolver, Dial: s.opts.Dial},
			OnDecision: spec.OnEgress,
		}
		go func() { _ = proxy.Serve(l) }()
	}
	stopProxy := func(err error) (*Server, error) {
		if proxy != nil {
			_ = proxy.Close()
		}
		return fail(err)
	}
	exe, err := s.host.executable()
	if err != nil {
		return stopProxy(startFailed(err.Error()))
	}
	if err := s.guardGit(spec.Policy); err != nil {
		return stopProxy(startFailed(err.Error()))
	}
	ident := watchIdent(s.opts.Workspace)
	l, err := newLayout(spec.Policy, s.opts.Workspace, dir)
	if err != nil {
		return stopProxy(startFailed(err.Error()))
	}
	// The operator's toolchains, as the commands see them: an npx or uvx
	// server finds nvm's node or uv under HOME.
	l.view = s.ensureView()
	args, err := l.args(mountOptions{helperExe: exe, proxySock: sock})
	if err != nil {
		return stopProxy(startFailed(err.Error()))
	}
	args = append(args, "--", helperPath, ExecCommand)
	if sock != "" {
		args = append(args, "--proxy", proxySocket)
	}
	args = append(append(args, "--"), spec.Argv...)
	cmd := exec.Command(s.host.bwrapPath(), args...)
	// The environment stays the one the server was given: its toolchains
	// are mounted, but no cache variable of Guildhall's is added.
	cmd.Env = s.sandboxEnv(spec.Env, l.home, 0)
	srv, err := s.launch(cmd, spec, proxy, dir)
	if err != nil {
		return stopProxy(err)
	}
	srv.Confined, srv.ident = true, ident
	return srv, nil
}

// Stale reports whether the workspace's .git or .orchestration changed
// since the server started (a git init made a .git): its mounts no longer
// protect them, so it must be restarted before it is used again. A server
// that outlives tool calls can race such a change; the caller checks
// after every tool call and before every use.
func (p *Server) Stale() bool {
	return p.Confined && watchIdent(p.sb.opts.Workspace) != p.ident
}

// launch starts cmd with pipes on its stdin and stdout, in a session of
// its own, through the reaper, and watches for its exit.
func (s *Sandbox) launch(cmd *exec.Cmd, spec ServerSpec, proxy *egress.Proxy, scratch string) (*Server, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, startFailed("server pipes: " + err.Error())
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, startFailed("server pipes: " + err.Error())
	}
	cmd.Stderr = spec.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := s.host.reaper.Start(cmd); err != nil {
		return nil, &StartError{Msg: fmt.Sprintf("cannot start %s: %v", spec.Argv[0], err)}
	}
	srv := &Server{Stdin: stdin, Stdout: stdout, sb: s, cmd: cmd, done: make(chan struct{}), proxy: proxy, scratch: scratch}
	go func() {
		srv.waitErr = cmd.Wait()
		s.host.reaper.Waited(cmd)
		close(srv.done)
	}()
	return srv, nil
}

// Done is closed once the program (and, confined, its sandbox) exited.
func (p *Server) Done() <-chan struct{} { return p.done }

// ExitError is how the program ended, once Done is closed: nil for
// status 0, else an *exec.ExitError or the wait's error.
func (p *Server) ExitError() error {
	select {
	case <-p.done:
		return p.waitErr
	default:
		return nil
	}
}

// Stop asks the program to exit by closing its stdin, and kills its whole
// session (its sandbox, when confined) if it has not exited after a short
// grace. It waits for the exit, stops the server's proxy and removes its
// scratch folder. It is safe to call more than once.
func (p *Server) Stop() { p.end(serverExitGrace) }

// Kill is Stop without the grace: for a server that is known not to
// answer (it hung at its start).
func (p *Server) Kill() { p.end(0) }

func (p *Server) end(grace time.Duration) {
	p.stop.Do(func() {
		_ = p.Stdin.Close()
		if grace > 0 {
			t := time.NewTimer(grace)
			select {
			case <-p.done:
			case <-t.C:
			}
			t.Stop()
		}
		if p.lifeline != nil {
			// The shim kills the server's whole tree, escaped
			// daemons included, and exits.
			_ = p.lifeline.Close()
			t := time.NewTimer(serverExitGrace)
			select {
			case <-p.done:
			case <-t.C:
			}
			t.Stop()
		}
		p.kill()
		if !p.Confined {
			// A daemon that left the server's session is reparented to
			// Guildhall (a child subreaper) when its parent dies.
			p.sb.host.reaper.Sweep()
		}
		if p.proxy != nil {
			_ = p.proxy.Close()
		}
		if p.scratch != "" {
			_ = removeAll(p.scratch)
		}
		p.sb.forget(p)
	})
}

// kill sends SIGKILL to the program's session and waits for the exit.
// Confined, the session is bwrap's, whose PID namespace takes every
// process of the server with it.
func (p *Server) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Process.Kill()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	}
}

// forget drops a stopped server from the sandbox's list.
func (s *Sandbox) forget(p *Server) {
	s.serversMu.Lock()
	defer s.serversMu.Unlock()
	for i, q := range s.servers {
		if q == p {
			s.servers = append(s.servers[:i], s.servers[i+1:]...)
			return
		}
	}
}

// plainServerName reports whether name is an identifier that can be part
// of a folder name and a message without quoting.
func plainServerName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
