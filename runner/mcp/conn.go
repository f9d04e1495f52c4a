package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guildhall/guildhall/tools/egress"
	"github.com/guildhall/guildhall/tools/sandbox"
	"github.com/guildhall/guildhall/tools/shell"
)

// maxMessageBytes bounds one message read from a server (a stdio line, an
// SSE event): a server cannot make Guildhall hold more than this at once.
const maxMessageBytes = 4 << 20

// exitWait is how long a broken stdio connection waits for its process's
// exit status, which follows the closed pipe by a moment.
const exitWait = 2 * time.Second

// stderrKeep is how much of a stdio server's stderr is kept (the start
// and the end) for the message that says why it stopped.
const stderrKeep = 4096

// conn is one live connection to a server.
type conn struct {
	session *sdk.ClientSession
	proc    *sandbox.Server // stdio; nil for HTTP
	stderr  *shell.Capture
	broken  chan struct{} // closed once the connection is known gone
	// watched is closed once the exit watcher (stdio) has handled the
	// process's exit, so that a call that saw the exit reports after it.
	watched chan struct{}
}

// awaitWatch waits, briefly, for the exit watcher to have reported.
func (c *conn) awaitWatch() {
	if c.proc == nil {
		return
	}
	t := time.NewTimer(exitWait)
	defer t.Stop()
	select {
	case <-c.watched:
	case <-t.C:
	}
}

// gone reports whether the connection can no longer be used: the
// process exited, or a call found the transport broken.
func (c *conn) gone() bool {
	if c.proc != nil {
		select {
		case <-c.proc.Done():
			return true
		default:
		}
	}
	select {
	case <-c.broken:
		return true
	default:
		return false
	}
}

// stale reports a stdio server whose sandbox no longer protects the
// workspace's .git.
func (c *conn) stale() bool { return c.proc != nil && c.proc.Stale() }

// abandon kills a connection that failed at its start, without the
// grace a working server gets to exit.
func (c *conn) abandon() {
	if c.proc != nil {
		c.proc.Kill()
	}
	c.close()
}

// close ends the session and stops the process.
func (c *conn) close() {
	select {
	case <-c.broken:
	default:
		close(c.broken)
	}
	if c.session != nil {
		done := make(chan struct{})
		go func() { _ = c.session.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
		}
	}
	if c.proc != nil {
		c.proc.Stop()
	}
}

// callTool sends tools/call.
func (c *conn) callTool(ctx context.Context, tool string, args json.RawMessage) (*sdk.CallToolResult, error) {
	res, err := c.session.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil && isConnectionError(err) {
		select {
		case <-c.broken:
		default:
			close(c.broken)
		}
	}
	return res, err
}

// exitText says how a stdio server ended: its status and the end of its
// stderr, cleaned.
func (c *conn) exitText() string {
	if c.proc == nil {
		return "the connection closed"
	}
	var status string
	// The pipe closes a moment before the exit is reaped.
	t := time.NewTimer(exitWait)
	defer t.Stop()
	select {
	case <-c.proc.Done():
		var ee *exec.ExitError
		switch err := c.proc.ExitError(); {
		case err == nil:
			status = "status 0"
		case errors.As(err, &ee) && ee.ExitCode() >= 0:
			status = fmt.Sprintf("status %d", ee.ExitCode())
		default:
			status = "killed"
		}
	case <-t.C:
		status = "its connection closed"
	}
	text, _ := c.stderr.Text(stderrKeep)
	if line := cleanLine(lastLines(text, 3), 400); line != "" {
		return status + ": " + line
	}
	return status + ", nothing on stderr"
}

// lastLines is the last n non-empty lines of s, joined.
func lastLines(s string, n int) string {
	var out []string
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			out = append([]string{l}, out...)
		}
	}
	return strings.Join(out, " | ")
}

// start starts the server, makes the MCP handshake and reads its tools,
// all within the start timeout. What it could not use of the tool list is
// returned as skipped, one line per tool.
func (s *server) start(ctx context.Context) (*conn, []Tool, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(s.cfg.StartTimeout())*time.Second)
	defer cancel()
	c, transport, err := s.connector()
	if err != nil {
		return nil, nil, nil, err
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "guildhall", Version: cmp.Or(s.m.opts.Version, "dev")},
		// No roots, no sampling, no elicitation: a server cannot ask
		// Guildhall for the workspace's layout or for a model reply.
		&sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	c.session, err = client.Connect(ctx, transport, nil)
	if err != nil {
		err = s.startError(ctx, c, "the MCP handshake failed", err)
		c.abandon()
		return nil, nil, nil, err
	}
	list, skipped, err := s.listTools(ctx, c)
	if err != nil {
		err = s.startError(ctx, c, "listing its tools failed", err)
		c.abandon()
		return nil, nil, nil, err
	}
	return c, list, skipped, nil
}

// connector builds the connection's process (stdio) and transport.
func (s *server) connector() (*conn, sdk.Transport, error) {
	c := &conn{broken: make(chan struct{}), watched: make(chan struct{}), stderr: shell.NewCapture(stderrKeep)}
	if s.cfg.Transport() == HTTP {
		return c, &sdk.StreamableClientTransport{
			Endpoint: s.cfg.URL, HTTPClient: s.m.httpClient(s.name, s.cfg),
			MaxRetries: -1, DisableStandaloneSSE: true, MaxEventSize: maxMessageBytes,
		}, nil
	}
	sb := s.m.opts.Sandbox
	if sb == nil {
		return nil, nil, errors.New("no sandbox to start it in")
	}
	if s.cfg.Verify != nil {
		if err := s.cfg.Verify(); err != nil {
			return nil, nil, cleanError(err)
		}
	}
	policy, err := s.cfg.Policy(sb.Policy().Mode())
	if err != nil {
		return nil, nil, fmt.Errorf("its sandbox: %w", err)
	}
	spec := sandbox.ServerSpec{
		Name: s.name, Argv: append([]string{s.cfg.Command}, s.cfg.Args...),
		Env: serverEnv(s.m.opts.Env, s.cfg.Env), Policy: policy, Stderr: c.stderr,
	}
	if f := s.m.opts.OnEgress; f != nil {
		spec.OnEgress = func(d egress.Decision) { f(s.name, d) }
	}
	c.proc, err = sb.StartServer(spec)
	if err != nil {
		return nil, nil, cleanError(err)
	}
	return c, &sdk.IOTransport{Reader: c.proc.Stdout, Writer: c.proc.Stdin, MaxLineLength: maxMessageBytes}, nil
}

// startError says why a start failed: the time ran out, or the process
// exited (with its status and stderr), or what the transport said.
func (s *server) startError(ctx context.Context, c *conn, what string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer within %d seconds (mcpServers.%s.startTimeoutSeconds)", what, s.cfg.StartTimeout(), s.name)
	}
	if c.proc != nil && isConnectionError(err) {
		return fmt.Errorf("%s: the server exited (%s)", what, c.exitText())
	}
	return fmt.Errorf("%s: %s", what, cleanLine(err.Error(), 400))
}

// cleanError is err's text, cleaned, as an error.
func cleanError(err error) error { return errors.New(cleanLine(err.Error(), 400)) }

// listTools reads the server's tools, page by page, keeping at most
// MaxTools, and turns each into a Tool the model may be offered.
func (s *server) listTools(ctx context.Context, c *conn) ([]Tool, []string, error) {
	var (
		list    []Tool
		skipped []string
		seen    = map[string]bool{}
		cursor  string
	)
	for page := 0; page < maxListPages; page++ {
		res, err := c.session.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, nil, err
		}
		for _, t := range res.Tools {
			if t == nil {
				continue
			}
			if len(list) >= MaxTools {
				skipped = append(skipped, fmt.Sprintf("tools after the first %d are left out", MaxTools))
				return list, skipped, nil
			}
			tool, why := s.admit(t, seen)
			if why != "" {
				skipped = append(skipped, why)
				continue
			}
			seen[tool.Name] = true
			list = append(list, tool)
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			return list, skipped, nil
		}
		cursor = res.NextCursor
	}
	skipped = append(skipped, fmt.Sprintf("tool list pages after the first %d are left out", maxListPages))
	return list, skipped, nil
}

// admit checks one listed tool: a valid, new name and a usable schema.
func (s *server) admit(t *sdk.Tool, seen map[string]bool) (Tool, string) {
	if !toolName().MatchString(t.Name) {
		return Tool{}, fmt.Sprintf("a tool named %q: names are 1 to 128 letters, digits, '_', '-' and '.'", cleanLine(t.Name, 60))
	}
	if seen[t.Name] {
		return Tool{}, fmt.Sprintf("%s: listed twice; the first is used", t.Name)
	}
	schema, err := cleanSchema(t.InputSchema)
	if err != nil {
		return Tool{}, fmt.Sprintf("%s: %v", t.Name, err)
	}
	return Tool{Server: s.name, Name: t.Name, Description: describe(s.name, t.Name, t.Description), Parameters: schema}, ""
}

// serverEnv is base with the server's declared variables set over it.
func serverEnv(base []string, declared map[string]string) []string {
	out := make([]string, 0, len(base)+len(declared))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, over := declared[name]; !over {
			out = append(out, kv)
		}
	}
	for _, k := range Names(declared) {
		out = append(out, k+"="+declared[k])
	}
	return out
}
