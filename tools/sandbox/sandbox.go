package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guildhall/guildhall/internal/rmtree"
	"github.com/guildhall/guildhall/tools/egress"
	"github.com/guildhall/guildhall/tools/shell"
)

// Host is what a Guildhall process knows about sandboxing: where bwrap and
// the helper binary are, and the registry of every process it started
// (shell.Reaper), which must be one per process. A program's main makes
// one; a library caller without one gets NewHost's defaults.
type Host struct {
	mu     sync.Mutex
	bwrap  string // resolved by a successful Check
	exe    string // the helper binary; "" means os.Executable()
	reaper *shell.Reaper
}

// NewHost returns a host whose helper is this process's own executable.
func NewHost() *Host { return &Host{reaper: shell.NewReaper()} }

// WithExecutable sets the helper binary (tests use the real guildhall).
func (h *Host) WithExecutable(path string) *Host {
	h.mu.Lock()
	h.exe = path
	h.mu.Unlock()
	return h
}

// Reaper is the process's registry of started processes.
func (h *Host) Reaper() *shell.Reaper { return h.reaper }

func (h *Host) executable() (string, error) {
	h.mu.Lock()
	exe := h.exe
	h.mu.Unlock()
	if exe != "" {
		return exe, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the guildhall binary for the sandbox helper: %w", err)
	}
	return exe, nil
}

// Caller names the role whose tool call a command runs for, so that an
// egress attempt can be attributed.
type Caller struct {
	Role, RoleID string
}

// Options open a sandbox for one run.
type Options struct {
	Policy Policy
	// Workspace is the canonical workspace folder.
	Workspace string
	// OnEgress, when set, gets every decision of the allowlist proxy with
	// the caller of the tool call it happened in. It is called from the
	// proxy's goroutines.
	OnEgress func(egress.Decision, Caller)
	// Resolver and Dial replace the proxy's name lookups and connections
	// (tests map names to local servers); nil in production.
	Resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Sandbox confines one run's commands. Shell commands share one helper,
// started at the first command and restarted after a crash, a timeout, a
// cancellation, or a change of the workspace's .git (so that a .git made
// by a command is mounted read-only from then on); git commands get a
// sandbox each. Close ends it all. A Sandbox runs one command at a time.
type Sandbox struct {
	host *Host
	opts Options

	mu      sync.Mutex // held for a whole command
	scratch string     // per-run folder: home/, tmp/, proxy.sock
	helper  *helperProc
	// viewMu guards view: the helper (under mu) and the MCP servers
	// (started concurrently) both read it.
	viewMu sync.Mutex
	view   *hostView // toolchains and build caches, found at the first command or server
	proxy  *egress.Proxy
	closed bool

	// guardMu guards guard, the hold on the workspace's .git placeholder
	// (gitguard.go), shared by the helper, the git commands and the
	// servers.
	guardMu sync.Mutex
	guard   gitGuard

	// tampered is set for good once a helper's channel carried a frame
	// the helper did not send (TamperedError): no later command runs.
	tampered atomic.Pointer[TamperedError]

	// serversMu guards servers, the long-lived servers still running
	// (StartServer): a server that exits is forgotten without waiting
	// for a shell command holding mu.
	serversMu sync.Mutex
	servers   []*Server

	egressMu sync.Mutex
	caller   Caller
	logged   int
	dropped  int
	lastDrop egress.Decision
	refused  []string // hosts the proxy refused during the call (refusal.go)
}

// maxEgressEvents bounds how many decisions one call reports; a command
// looping over denied hosts must not flood the log.
const maxEgressEvents = 64

// Open prepares a sandbox for a run and checks that the workspace can be
// sandboxed. Nothing starts until the first command, which runs Check
// first (once per host) and fails with its error when the machine cannot
// sandbox: a program checks at startup instead, to fail before any work.
func (h *Host) Open(o Options) (*Sandbox, error) {
	s := &Sandbox{host: h, opts: o}
	if !o.Policy.Confined() {
		return s, nil
	}
	if err := CheckWorkspace(o.Policy, o.Workspace); err != nil {
		return nil, err
	}
	return s, nil
}

// CheckWorkspace reports whether ws (canonical) can be sandboxed with p:
// an absolute folder other than /, not holding the operator's home
// folder, with .orchestration a real folder if present.
func CheckWorkspace(p Policy, ws string) error {
	if !p.Confined() {
		return nil
	}
	_, err := newLayout(p, ws, "-")
	return err
}

// Policy is the sandbox's policy.
func (s *Sandbox) Policy() Policy { return s.opts.Policy }

// Reaper is the host's process registry, for callers that start
// processes themselves (Command).
func (s *Sandbox) Reaper() *shell.Reaper { return s.host.reaper }

// Script is one shell command line for Run.
type Script struct {
	Dir      string
	Command  string
	Env      []string
	Timeout  time.Duration
	MaxChars int
	Caller   Caller
}

// StartError is a sandbox that could not start; its message says why.
type StartError struct{ Msg string }

func (e *StartError) Error() string { return e.Msg }

func startFailed(msg string) *StartError {
	return &StartError{Msg: "the sandbox could not start: " + msg}
}

// checkFailed wraps an error that already says what failed.
func checkFailed(err error) *StartError { return &StartError{Msg: err.Error()} }

// Run runs one command line with /bin/sh -c: started by the helper when
// the policy confines, else by this process, in a new session. Either way every process the call started is gone when it
// returns. Errors are those of shell.Run, plus *StartError.
func (s *Sandbox) Run(ctx context.Context, sc Script) (shell.Result, error) {
	defer s.host.reaper.Sweep()
	if !s.opts.Policy.Confined() {
		return shell.Run(ctx, shell.Spec{
			Dir: sc.Dir, Command: sc.Command, Env: sc.Env, Timeout: sc.Timeout, MaxChars: sc.MaxChars,
			Reaper: s.host.reaper,
		})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return shell.Result{}, startFailed("the run's sandbox is closed")
	}
	if te := s.tampered.Load(); te != nil {
		return shell.Result{ExitCode: -1}, te
	}
	s.setCaller(sc.Caller)
	defer s.endCall()
	hp, err := s.ensureHelper()
	if err != nil {
		return shell.Result{}, s.noteTampered(err)
	}
	env := s.sandboxEnv(sc.Env, hp.home, hp.proxyPort)
	var cacheErr error
	if v := s.currentView(); v != nil {
		env = v.env(env, s.opts.Policy, s.opts.Workspace)
		cacheErr = v.cacheErr
	}
	req := request{Dir: sc.Dir, Command: sc.Command, Env: env, TimeoutMs: sc.Timeout.Milliseconds(), MaxChars: sc.MaxChars,
		Limits: s.opts.Policy.Limits().shellLimits()}
	res, err := hp.call(ctx, req, sc.Timeout+shell.PipeGrace+5*time.Second)
	err = s.noteTampered(err)
	if note := refusalNote(s.opts.Policy, res.ExitCode, res.Stdout+"\n"+res.Stderr, s.takeRefused()); err == nil && !res.TimedOut && note != "" {
		res.Stderr = appendLine(res.Stderr, note)
	}
	if cacheErr != nil && err == nil && res.ExitCode != 0 {
		// A failed build may be failing for want of its cache: say so.
		res.Stderr = appendLine(res.Stderr, "guildhall: the workspace's build caches are missing: "+cacheErr.Error())
	}
	// A command's own timeout leaves the helper as it was (it killed the
	// command's processes); a helper that died starts afresh.
	if hp.dead() {
		s.stopHelper()
	}
	return res, err
}

// Tampered is the error that broke the sandbox, or nil: a helper's
// channel carried a frame its helper did not send. The run must stop.
func (s *Sandbox) Tampered() error {
	if te := s.tampered.Load(); te != nil {
		return te
	}
	return nil
}

// noteTampered records err when it is a *TamperedError, and returns it.
func (s *Sandbox) noteTampered(err error) error {
	var te *TamperedError
	if errors.As(err, &te) {
		s.tampered.CompareAndSwap(nil, te)
	}
	return err
}

// Warm starts the helper ahead of the first command, so that its start
// (the binary's own initialisation, bubblewrap's namespaces) overlaps the
// run's first model call instead of delaying its first command. A failure
// is not reported here: the next Run starts again and reports it.
func (s *Sandbox) Warm() {
	if !s.opts.Policy.Confined() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && s.tampered.Load() == nil {
		_, err := s.ensureHelper()
		_ = s.noteTampered(err)
	}
}

// Command turns a program's argv and environment into those of the same
// program in a sandbox of its own (for the git tools), with no network
// and .git writable only when gitWritable. Without confinement it returns
// them as they are. The caller starts the process through Reaper().
func (s *Sandbox) Command(argv, env []string, gitWritable bool) ([]string, []string, error) {
	if !s.opts.Policy.Confined() {
		return argv, env, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, startFailed("the run's sandbox is closed")
	}
	if err := s.host.Check(s.opts.Policy); err != nil {
		return nil, nil, checkFailed(err)
	}
	if err := s.ensureScratch(); err != nil {
		return nil, nil, err
	}
	if !gitWritable {
		// A git command that writes needs a repository, which git_init
		// makes after ClearGitPlaceholder; the others get the guard.
		if err := s.guardGit(s.opts.Policy); err != nil {
			return nil, nil, startFailed(err.Error())
		}
	}
	l, err := newLayout(s.opts.Policy, s.opts.Workspace, s.scratch)
	if err != nil {
		return nil, nil, startFailed(err.Error())
	}
	args, err := l.args(mountOptions{gitWritable: gitWritable})
	if err != nil {
		return nil, nil, startFailed(err.Error())
	}
	out := append([]string{s.host.bwrapPath()}, args...)
	out = append(out, "--")
	out = append(out, argv...)
	return out, s.sandboxEnv(env, l.home, 0), nil
}

// sandboxEnv is env with HOME and TMPDIR pointing at the sandbox's own,
// and, with a proxy, the proxy variables every common client reads.
func (s *Sandbox) sandboxEnv(env []string, home string, proxyPort int) []string {
	drop := map[string]bool{"HOME": true, "TMPDIR": true}
	var proxyVars []string
	if proxyPort > 0 {
		url := fmt.Sprintf("http://127.0.0.1:%d", proxyPort)
		for _, n := range proxyVarNames {
			drop[n] = true
			proxyVars = append(proxyVars, n+"="+url)
		}
		for _, n := range []string{"NO_PROXY", "no_proxy"} {
			drop[n] = true
		}
	}
	out := make([]string, 0, len(env)+len(proxyVars)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] {
			out = append(out, kv)
		}
	}
	out = append(out, "HOME="+home, "TMPDIR="+sandboxTmp)
	return append(out, proxyVars...)
}

// Close stops the servers, the helper and the proxy and removes the run's
// scratch folder. Commands and servers after Close fail with a StartError.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.serversMu.Lock()
	servers := s.servers
	s.servers = nil
	s.serversMu.Unlock()
	for _, p := range servers {
		p.Stop()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopHelper()
	if s.proxy != nil {
		_ = s.proxy.Close()
	}
	s.host.reaper.Sweep()
	s.releaseGit()
	if s.scratch != "" {
		return removeAll(s.scratch)
	}
	return nil
}

// ensureScratch creates the run's scratch folder: the sandbox's HOME and
// /tmp, outside the workspace, private to the operator.
func (s *Sandbox) ensureScratch() error {
	if s.scratch != "" {
		return nil
	}
	dir, err := os.MkdirTemp("", "guildhall-sandbox-")
	if err != nil {
		return startFailed("create the scratch folder: " + err.Error())
	}
	for _, sub := range []string{"home", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			_ = os.RemoveAll(dir)
			return startFailed("create the scratch folder: " + err.Error())
		}
	}
	s.scratch = dir
	return nil
}

// ensureProxy starts the allowlist proxy on a Unix socket in the scratch
// folder, once per run.
func (s *Sandbox) ensureProxy() (string, error) {
	sock := filepath.Join(s.scratch, "proxy.sock")
	if s.proxy != nil {
		return sock, nil
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		return "", startFailed("start the network proxy: " + err.Error())
	}
	p := &egress.Proxy{
		Dialer:     egress.Dialer{Policy: s.opts.Policy.Allow(), Via: "proxy", Resolver: s.opts.Resolver, Dial: s.opts.Dial},
		OnDecision: s.decision,
	}
	s.proxy = p
	go func() { _ = p.Serve(l) }()
	return sock, nil
}

func (s *Sandbox) setCaller(c Caller) {
	s.egressMu.Lock()
	s.caller, s.logged, s.dropped, s.refused = c, 0, 0, nil
	s.egressMu.Unlock()
}

// takeRefused returns the hosts the proxy refused during the call.
func (s *Sandbox) takeRefused() []string {
	s.egressMu.Lock()
	defer s.egressMu.Unlock()
	r := s.refused
	s.refused = nil
	return r
}

// endCall reports how many decisions of the call were not logged, if any.
func (s *Sandbox) endCall() {
	s.egressMu.Lock()
	c, n, d := s.caller, s.dropped, s.lastDrop
	s.caller, s.logged, s.dropped = Caller{}, 0, 0
	s.egressMu.Unlock()
	if n > 0 && s.opts.OnEgress != nil {
		d.Reason = fmt.Sprintf("%d more attempts during this call were not logged (the last is this one)", n)
		s.opts.OnEgress(d, c)
	}
}

// decision is the proxy's report of one request.
func (s *Sandbox) decision(d egress.Decision) {
	s.egressMu.Lock()
	c := s.caller
	if !d.Allowed && len(s.refused) < 2*maxRefusedHosts && !slices.Contains(s.refused, d.Host) {
		s.refused = append(s.refused, d.Host)
	}
	if s.logged >= maxEgressEvents {
		s.dropped++
		s.lastDrop = d
		s.egressMu.Unlock()
		return
	}
	s.logged++
	s.egressMu.Unlock()
	if s.opts.OnEgress != nil {
		s.opts.OnEgress(d, c)
	}
}

// removeAll removes the scratch folder, making folders a command locked
// (chmod 000) removable first.
func removeAll(dir string) error {
	if err := rmtree.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the sandbox's scratch folder: %w", err)
	}
	return nil
}
