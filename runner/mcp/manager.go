package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/tools/egress"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// Options configure the servers of one run (or of one `guildhall check
// --probe`).
type Options struct {
	Servers map[string]Config
	// Sandbox is the run's: stdio servers start through it, each in a
	// sandbox of its own; its policy's mode is the default of theirs.
	Sandbox *sandbox.Sandbox
	// Env is the environment a stdio server starts from (the tool
	// subprocesses' allowlisted one); its declared env is added over it.
	Env []string
	// Egress is the run's egress policy (sandbox.allow): the host of an
	// HTTP server a workspace's file declared must pass it.
	Egress egress.Policy
	// OnState is told of every change of a server's state: the banners.
	// It may be called from the manager's goroutines.
	OnState func(State)
	// OnEgress is told of every network decision made for a server: its
	// proxy's (stdio) or its endpoint's (HTTP).
	OnEgress func(server string, d egress.Decision)
	// Resolver and Dial replace the system's for HTTP servers (tests).
	Resolver egress.Resolver
	Dial     egress.DialFunc
	// Version is Guildhall's, sent in the MCP handshake.
	Version string
}

// The states a State reports.
const (
	// StateReady: the server started and listed its tools.
	StateReady = "ready"
	// StateFailed: the server could not be started (or listed no tools);
	// it is not started again in this run.
	StateFailed = "failed"
	// StateExited: a running server exited, or its connection broke; it
	// starts again at the next use.
	StateExited = "exited"
	// StateUnresponsive: a call timed out and the server did not answer a
	// ping either; it was stopped and starts again at the next use.
	StateUnresponsive = "unresponsive"
)

// State is a change of a server's state. Message is Guildhall's sentence,
// with anything the server said (its stderr, an error) cleaned and cut.
type State struct {
	Server  string
	State   string
	Message string
	// Tools is how many tools a ready server offers, Skipped the tools
	// it offered that were left out, each with why.
	Tools   int
	Skipped []string
	// Offered are a ready server's tools, by full name (server.tool).
	Offered []string
}

// Tool is one tool a server offers, made safe to offer to the model.
type Tool struct {
	Server string
	// Name is the tool's name as the server gives it.
	Name string
	// Description is the server's description, cleaned, capped and
	// framed as the server's text.
	Description string
	// Parameters is the input schema, cleaned (an object schema).
	Parameters json.RawMessage
}

// FullName is the tool's name in the guild and the logs: server.tool.
func (t Tool) FullName() string { return t.Server + "." + t.Name }

// StartError is a server that could not be started: Reason says why
// (Guildhall's words, with the server's own cleaned and cut).
type StartError struct {
	Server, Reason string
}

func (e *StartError) Error() string {
	return fmt.Sprintf("MCP server %q failed to start: %s; it is not started again in this run (guildhall check --probe tries it alone)", e.Server, e.Reason)
}

// maxStarts bounds how often one server is started in a run: a server
// that keeps crashing stops being restarted.
const maxStarts = 3

// Manager starts a run's servers when they are first needed and holds
// their connections until Close.
type Manager struct {
	opts Options

	mu      sync.Mutex
	servers map[string]*server
	closed  bool
}

// New returns a manager of o.Servers. Nothing starts until a server's
// tools are first asked for.
func New(o Options) *Manager {
	m := &Manager{opts: o, servers: map[string]*server{}}
	for name, c := range o.Servers {
		m.servers[name] = &server{name: name, cfg: c, m: m}
	}
	return m
}

// Declared reports whether a server of that name is configured.
func (m *Manager) Declared(name string) bool {
	_, ok := m.servers[name]
	return ok
}

// Names lists the configured servers, sorted.
func (m *Manager) Names() []string {
	return slices.Sorted(maps.Keys(m.servers))
}

// Tools returns the tools server offers, starting it first when it is
// not running. A server that failed to start in this run is not started
// again: its error is returned at once.
func (m *Manager) Tools(ctx context.Context, server string) ([]Tool, error) {
	s, ok := m.servers[server]
	if !ok {
		return nil, fmt.Errorf("no MCP server named %q is declared in the deployment's mcpServers", server)
	}
	_, list, err := s.ensure(ctx)
	return list, err
}

// Call calls tool of server with args (a JSON object, already checked
// against the tool's schema), within timeout. Every failure is a Result
// the model can act on: a server that is down, an unknown tool, a
// timeout, a server that exits or stops answering during the call.
func (m *Manager) Call(ctx context.Context, server, tool string, args json.RawMessage, timeout time.Duration) tools.Result {
	s, ok := m.servers[server]
	if !ok {
		return tools.Fail(tools.KindNotFound, fmt.Sprintf("no MCP server named %q is declared; use only the tools you were given", server))
	}
	c, list, err := s.ensure(ctx)
	if err != nil {
		return tools.Fail(tools.KindUnavailable, err.Error())
	}
	found := false
	for _, t := range list {
		found = found || t.Name == tool
	}
	if !found {
		return tools.Fail(tools.KindNotFound, fmt.Sprintf("MCP server %q offers no tool %q; use only the tools you were given", server, cleanLine(tool, 130)))
	}
	return s.call(ctx, c, tool, args, timeout)
}

// DropStale stops every running stdio server whose sandbox no longer
// fits the workspace (its .git or .orchestration changed since it
// started); each starts afresh at its next use. The runner calls it after
// every tool call, so that a server never goes on with a .git it could
// write.
func (m *Manager) DropStale() {
	m.stopWhere(func(c *conn) bool { return c.stale() })
}

// StopConfined stops every running server that runs in a sandbox; each
// starts again at its next call. git_init calls it first: a confined
// server's mounts rely on the workspace's .git placeholder, which git_init
// removes, and a server left running across it could write the new .git.
func (m *Manager) StopConfined() {
	m.stopWhere(func(c *conn) bool { return c.proc != nil && c.proc.Confined })
}

func (m *Manager) stopWhere(stop func(*conn) bool) {
	for _, s := range m.servers {
		s.mu.Lock()
		c := s.conn
		stopped := c != nil && stop(c)
		if stopped {
			s.conn = nil
			s.starts--
		}
		s.mu.Unlock()
		if stopped {
			c.close()
		}
	}
}

// Close stops every server. Calls after it fail.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.mu.Lock()
			c := s.conn
			s.conn = nil
			s.mu.Unlock()
			if c != nil {
				c.close()
			}
		}()
	}
	wg.Wait()
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// report tells OnState, unless the manager is closed: holding the lock,
// so that nothing is reported once Close has begun (the run's log may be
// closed right after). OnState must not call back into the manager.
func (m *Manager) report(st State) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.opts.OnState != nil && !m.closed {
		m.opts.OnState(st)
	}
}

// server is one configured server and its connection, if any.
type server struct {
	name string
	cfg  Config
	m    *Manager

	mu     sync.Mutex
	conn   *conn
	tools  []Tool
	failed error // a failed start: not retried in this run
	starts int
}

// ensure returns the live connection and the tool list, starting the
// server when it is down.
func (s *server) ensure(ctx context.Context) (*conn, []Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m.isClosed() {
		return nil, nil, fmt.Errorf("MCP server %q is not available: the run is over", s.name)
	}
	if s.conn != nil && s.conn.stale() {
		// Not a failure: the workspace's .git appeared or changed, and a
		// fresh sandbox mounts it read-only.
		c := s.conn
		s.conn = nil
		c.close()
		s.starts--
	}
	if c := s.conn; c != nil && c.gone() {
		// It exited between calls, and its watcher has not told yet.
		s.conn = nil
		c.close()
		s.m.report(State{Server: s.name, State: StateExited,
			Message: fmt.Sprintf("MCP server %q exited (%s); it starts again now", s.name, c.exitText())})
	}
	if s.conn != nil {
		return s.conn, s.tools, nil
	}
	if s.failed != nil {
		return nil, nil, s.failed
	}
	if s.starts >= maxStarts {
		s.failed = fmt.Errorf("MCP server %q stopped %d times in this run and is not started again", s.name, s.starts)
		return nil, nil, s.failed
	}
	s.starts++
	c, list, skipped, err := s.start(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("MCP server %q did not start: the run was stopped", s.name)
		}
		s.failed = &StartError{Server: s.name, Reason: err.Error()}
		s.m.report(State{Server: s.name, State: StateFailed, Message: s.failed.Error()})
		return nil, nil, s.failed
	}
	s.conn, s.tools = c, list
	offered := make([]string, len(list))
	for i, t := range list {
		offered[i] = t.FullName()
	}
	s.m.report(State{Server: s.name, State: StateReady, Tools: len(list), Skipped: skipped, Offered: offered,
		Message: fmt.Sprintf("MCP server %q is ready with %d tools", s.name, len(list))})
	if c.proc != nil {
		go s.watch(c)
	}
	return c, list, nil
}

// watch reports a stdio server that exits while it is the live
// connection (not one Guildhall stopped).
func (s *server) watch(c *conn) {
	defer close(c.watched)
	<-c.proc.Done()
	if s.drop(c) {
		s.m.report(State{Server: s.name, State: StateExited,
			Message: fmt.Sprintf("MCP server %q exited (%s); it starts again at the next use", s.name, c.exitText())})
	}
}

// drop forgets c if it is still the live connection and stops it; it
// reports whether it was.
func (s *server) drop(c *conn) bool { return s.dropWith(c, c.close) }

// dropHung is drop for a server that stopped answering: killed at once.
func (s *server) dropHung(c *conn) bool { return s.dropWith(c, c.abandon) }

func (s *server) dropWith(c *conn, stop func()) bool {
	s.mu.Lock()
	live := s.conn == c
	if live {
		s.conn = nil
	}
	s.mu.Unlock()
	if live {
		stop()
	}
	return live
}

// pingTimeout bounds the ping that tells a slow call from a hung server.
const pingTimeout = 3 * time.Second

// call runs one tool call on c.
func (s *server) call(ctx context.Context, c *conn, tool string, args json.RawMessage, timeout time.Duration) tools.Result {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.callTool(cctx, tool, args)
	if err != nil && ctx.Err() == nil && isConnectionError(err) {
		// A stdio server that exits breaks its pipe before its exit status
		// is known: wait for the exit watcher, so the message names it.
		c.awaitWatch()
	}
	full := s.name + "." + tool
	switch {
	case err == nil:
		return convert(s.name, tool, res)
	case ctx.Err() != nil:
		return tools.Fail("interrupted", fmt.Sprintf("%s was cancelled: the run is stopping", full))
	case c.gone():
		c.awaitWatch()
		msg := fmt.Sprintf("MCP server %q exited during the call (%s); it starts again at the next call", s.name, c.exitText())
		if s.drop(c) {
			s.m.report(State{Server: s.name, State: StateExited, Message: msg})
		}
		return tools.Fail(tools.KindUnavailable, msg)
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		pctx, pcancel := context.WithTimeout(ctx, pingTimeout)
		perr := c.session.Ping(pctx, nil)
		pcancel()
		if perr == nil {
			return tools.Fail(tools.KindTimeout, fmt.Sprintf("%s did not finish within %s", full, timeout))
		}
		msg := fmt.Sprintf("MCP server %q did not answer %s within %s, nor a ping after it; it was stopped and starts again at the next call", s.name, tool, timeout)
		if s.dropHung(c) {
			s.m.report(State{Server: s.name, State: StateUnresponsive, Message: msg})
		}
		return tools.Fail(tools.KindTimeout, msg)
	case isConnectionError(err):
		msg := fmt.Sprintf("the connection to MCP server %q broke during the call (%s); it is made again at the next call", s.name, cleanLine(err.Error(), 300))
		if s.drop(c) {
			s.m.report(State{Server: s.name, State: StateExited, Message: msg})
		}
		return tools.Fail(tools.KindUnavailable, msg)
	}
	return tools.Fail(tools.KindError, fmt.Sprintf("MCP server %q refused the call of %s: %s", s.name, tool, cleanLine(err.Error(), 500)))
}

// isConnectionError reports an error that means the transport is gone,
// not that the server answered with an error.
func isConnectionError(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false // a timeout (which is also a net.Error), not a broken transport
	}
	var ue *url.Error
	var ne net.Error
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed) ||
		errors.Is(err, syscall.EPIPE) || errors.As(err, &ue) || errors.As(err, &ne) {
		return true
	}
	// The streamable client reports a session the server dropped in words,
	// and the SDK does not wrap the error of a pipe closed under it.
	msg := err.Error()
	return strings.Contains(msg, "broken session") || strings.Contains(msg, os.ErrClosed.Error())
}
