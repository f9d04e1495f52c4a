// Package mcp connects a run to the Model Context Protocol servers its
// deployment declares (mcpServers), with the official Go SDK: a stdio
// server is a program in a sandbox of its own (tools/sandbox StartServer),
// a streamable-HTTP server an endpoint. The runner sees each server's
// tools as tools like any other, named server.tool and granted per role.
//
// Everything a server says is untrusted: tool names are checked, the
// descriptions and schemas the model is offered and the output it reads
// are cleaned of terminal and bidirectional control, capped, and framed as
// data; a server that does not start, exits or stops answering is a clear
// tool error and an event, never a hang.
package mcp

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/guildhall/guildhall/tools/egress"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// Config is one server of deployment.json's mcpServers, as written.
type Config struct {
	// Type is "stdio" or "http"; empty, it follows from command or url.
	Type string `json:"type,omitempty"`
	// Command, Args and Env start a stdio server. Env's values may be
	// secrets (tokens): they reach only this server and are redacted from
	// every record.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL is a streamable-HTTP server's endpoint and Headers what every
	// request to it carries (an Authorization header, say); their values
	// are secrets as Env's are.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Sandbox is a stdio server's own policy: mode (workspace-write,
	// read-only or none; empty follows the run's), network (off unless
	// "allowlist"), allow and writable.
	Sandbox sandbox.Config `json:"sandbox"`
	// StartTimeoutSeconds bounds the start: the process, the MCP handshake
	// and the tool list (default 30).
	StartTimeoutSeconds int `json:"startTimeoutSeconds,omitempty"`

	// Origin is the file that declared the server, and FromWorkspace is
	// set when that file is the workspace's own (applied because the
	// operator trusts it): such a server's URL must pass the run's egress
	// policy like any other destination the workspace chose.
	Origin        string `json:"-"`
	FromWorkspace bool   `json:"-"`
	// Verify, when set, is asked before every start of a stdio server: it
	// fails when the workspace files the server's command line names are
	// no longer those the operator trusted (runner/trust pins them), and
	// the server is then not started.
	Verify func() error `json:"-"`

	// expandedSecrets are the values ${VAR} references supplied
	// (Expanded), and written the args and URL as written before.
	expandedSecrets []string
	written         *written
}

// Transports.
const (
	Stdio = "stdio"
	HTTP  = "http"
)

// Defaults and bounds of the configuration.
const (
	DefaultStartTimeoutSeconds = 30
	MaxStartTimeoutSeconds     = 600
	// MaxNameLen bounds a server name, so that server__tool fits the
	// 64 characters providers allow a function name.
	MaxNameLen = 32
)

// Transport is the server's transport: stdio or http.
func (c Config) Transport() string {
	switch {
	case c.Type != "":
		return c.Type
	case c.URL != "":
		return HTTP
	}
	return Stdio
}

// StartTimeout is the start's bound, in seconds.
func (c Config) StartTimeout() int {
	if c.StartTimeoutSeconds > 0 {
		return c.StartTimeoutSeconds
	}
	return DefaultStartTimeoutSeconds
}

// Secrets are the values that must never reach a record: every env and
// header value (a denylist of secret-looking names would miss one), and
// every value in the URL's query (?key=…), which an error can quote.
func (c Config) Secrets() []string {
	out := append([]string(nil), c.expandedSecrets...)
	for _, v := range c.Env {
		out = append(out, v)
	}
	if u, err := url.Parse(c.URL); err == nil {
		for _, vs := range u.Query() {
			out = append(out, vs...)
		}
	}
	for _, v := range c.Headers {
		out = append(out, v)
		// "Bearer TOKEN": the token alone may be echoed too.
		if _, tok, ok := strings.Cut(v, " "); ok {
			out = append(out, strings.TrimSpace(tok))
		}
	}
	return out
}

// Names lists the map's keys, sorted: env and header names are shown,
// never their values.
func Names(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// Summary describes the server in one line for check and the trust
// prompt, without any secret: the command and its arguments or the URL
// without user information or query, the sandbox, and the names (only)
// of env and headers. runMode is the run's sandbox mode.
func (c Config) Summary(runMode sandbox.Mode) string {
	if c.written != nil {
		// Show what the operator wrote, not what the environment put in.
		c.Args, c.URL = c.written.args, c.written.url
	}
	var b strings.Builder
	if c.Transport() == HTTP {
		fmt.Fprintf(&b, "streamable HTTP %s", PublicURL(c.URL))
		if len(c.Headers) > 0 {
			fmt.Fprintf(&b, ", headers %s (values hidden)", strings.Join(Names(c.Headers), ", "))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "stdio %s", strings.Join(append([]string{c.Command}, c.Args...), " "))
	fmt.Fprintf(&b, " (%s)", c.SandboxSummary(runMode))
	if len(c.Env) > 0 {
		fmt.Fprintf(&b, ", env %s (values hidden)", strings.Join(Names(c.Env), ", "))
	}
	return b.String()
}

// SandboxSummary is the stdio server's sandbox in a few words.
func (c Config) SandboxSummary(runMode sandbox.Mode) string {
	mode := c.Mode(runMode)
	if mode == sandbox.None {
		return "unconfined: no sandbox"
	}
	s := "sandbox " + string(mode) + ", network "
	if c.Sandbox.Network == string(sandbox.NetworkAllowlist) {
		s += "allowlist " + strings.Join(c.Sandbox.Allow, " ")
	} else {
		s += "off"
	}
	if len(c.Sandbox.Writable) > 0 {
		s += ", writable " + strings.Join(c.Sandbox.Writable, " ")
	}
	return s
}

// Mode is the stdio server's effective sandbox mode: none whenever the
// run's is none, else its own, else the run's. A server a workspace's file
// declared never gets a looser mode than the run's: only the operator's
// own configuration loosens a sandbox.
func (c Config) Mode(runMode sandbox.Mode) sandbox.Mode {
	if runMode == sandbox.None {
		return sandbox.None
	}
	if runMode == "" {
		runMode = sandbox.WorkspaceWrite
	}
	own := sandbox.Mode(c.Sandbox.Mode)
	if own == "" || c.FromWorkspace && LooserMode(own, runMode) {
		return runMode
	}
	return own
}

// LooserMode reports whether mode a confines less than b: none is looser
// than workspace-write, which is looser than read-only ("" is
// workspace-write, the default).
func LooserMode(a, b sandbox.Mode) bool { return modeRank(a) < modeRank(b) }

func modeRank(m sandbox.Mode) int {
	switch m {
	case sandbox.None:
		return 0
	case sandbox.ReadOnly:
		return 2
	}
	return 1
}

// Policy is the stdio server's own sandbox policy.
func (c Config) Policy(runMode sandbox.Mode) (sandbox.Policy, error) {
	sc := c.Sandbox
	sc.Mode = string(c.Mode(runMode))
	return sandbox.NewPolicy(sc)
}

// PublicURL is u without user information, query or fragment, which can
// carry credentials: what messages and the trust prompt show.
func PublicURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(not a URL)"
	}
	p.User, p.RawQuery, p.Fragment, p.ForceQuery = nil, "", "", false
	return p.String()
}

// Problem is one thing wrong with a server's entry: the path of the field
// below the entry (keys as strings, array indexes as ints; empty for the
// entry itself) and what is wrong, as a sentence naming the field.
type Problem struct {
	Path []any
	Msg  string
}

var (
	serverName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`) })
	envName    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	// headerName is an HTTP token (RFC 9110).
	headerName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") })
)

// CheckName reports what is wrong with a server name, or "". A name is an
// identifier — a letter, then letters, digits, '-' and '_', with no "__"
// (the separator of the name a provider is sent) — of at most 32
// characters, so that it can head a tool name on every provider.
func CheckName(name string) string {
	switch {
	case !serverName().MatchString(name):
		return "is not a server name: start with a letter, then use letters, digits, '-' and '_'"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("is longer than %d characters", MaxNameLen)
	case strings.Contains(name, "__"):
		return `holds "__", which separates the server from the tool in the names providers are sent`
	}
	return ""
}

// Check validates one server's entry. builtins are the tool names a server
// name may not shadow (server names head tool names, and a server called
// like a built-in tool would read as that tool in logs and prompts).
func Check(name string, c Config, builtins map[string]bool) []Problem {
	var ps []Problem
	add := func(msg string, path ...any) { ps = append(ps, Problem{Path: path, Msg: msg}) }
	where := "mcpServers." + name
	if msg := CheckName(name); msg != "" {
		add(fmt.Sprintf("mcpServers key %q %s", name, msg))
	} else if builtins[name] {
		add(fmt.Sprintf("mcpServers key %q is the name of a built-in tool; name the server differently", name))
	}
	switch c.Type {
	case "", Stdio, HTTP:
	case "sse":
		add(where+`.type "sse" is the deprecated HTTP+SSE transport, which Guildhall does not speak; use the server's streamable HTTP endpoint with "type": "http"`, "type")
		return ps
	default:
		add(fmt.Sprintf(`%s.type %q is not one of stdio, http`, where, c.Type), "type")
		return ps
	}
	if c.StartTimeoutSeconds < 0 || c.StartTimeoutSeconds > MaxStartTimeoutSeconds {
		add(fmt.Sprintf("%s.startTimeoutSeconds must be from 1 to %d", where, MaxStartTimeoutSeconds), "startTimeoutSeconds")
	}
	switch {
	case c.Command != "" && c.URL != "":
		add(where + " has both command and url; a server is either a program (command) or an endpoint (url)")
	case c.Transport() == HTTP:
		ps = append(ps, checkHTTP(where, c)...)
	default:
		ps = append(ps, checkStdio(where, c)...)
	}
	return ps
}

func checkStdio(where string, c Config) []Problem {
	var ps []Problem
	add := func(msg string, path ...any) { ps = append(ps, Problem{Path: path, Msg: msg}) }
	if strings.TrimSpace(c.Command) == "" {
		add(where + " has no command; give the program to start (a stdio server) or a url (a streamable HTTP server)")
	}
	if len(c.Headers) > 0 {
		add(where+".headers are for HTTP servers; a stdio server takes env", "headers")
	}
	for _, k := range Names(c.Env) {
		if !envName().MatchString(k) {
			add(fmt.Sprintf("%s.env key %q is not an environment variable name (letters, digits and '_')", where, k), "env", k)
		}
	}
	s := c.Sandbox
	if s.Mode != "" {
		if _, err := sandbox.ParseMode(s.Mode); err != nil {
			add(fmt.Sprintf("%s.sandbox.mode %q is not one of workspace-write, read-only, none", where, s.Mode), "sandbox", "mode")
		}
	}
	if s.Network != "" {
		if _, err := sandbox.ParseNetwork(s.Network); err != nil {
			add(fmt.Sprintf("%s.sandbox.network %q is not one of off (the default), allowlist", where, s.Network), "sandbox", "network")
		}
	}
	if len(s.Allow) > 0 && s.Network != string(sandbox.NetworkAllowlist) {
		add(fmt.Sprintf(`%s.sandbox.allow lists hosts, but the server's network is off; set "network": "allowlist" to use them`, where), "sandbox", "allow")
	}
	for i, pat := range s.Allow {
		if _, err := egress.ParsePolicy([]string{pat}); err != nil {
			add(fmt.Sprintf("%s.sandbox.allow[%d] %q: %s", where, i, pat, strings.TrimPrefix(err.Error(), fmt.Sprintf("allow[0] %q: ", pat))), "sandbox", "allow", i)
		}
	}
	for i, w := range s.Writable {
		if _, err := sandbox.CheckWritable(w); err != nil {
			add(fmt.Sprintf("%s.sandbox.writable[%d] %q: %v", where, i, w, err), "sandbox", "writable", i)
		}
	}
	return ps
}

func checkHTTP(where string, c Config) []Problem {
	var ps []Problem
	add := func(msg string, path ...any) { ps = append(ps, Problem{Path: path, Msg: msg}) }
	if c.URL == "" {
		add(where + ` has "type": "http" but no url; give the server's streamable HTTP endpoint`)
	} else if msg := urlProblem(withPlaceholders(c.URL)); msg != "" {
		add(fmt.Sprintf("%s.url %s", where, msg), "url")
	}
	if len(c.Args) > 0 || len(c.Env) > 0 {
		add(where+".args and env are for stdio servers; an HTTP server takes headers", "args")
	}
	if c.Sandbox.Mode != "" || c.Sandbox.Network != "" || len(c.Sandbox.Allow) > 0 || len(c.Sandbox.Writable) > 0 {
		add(where+".sandbox applies to stdio servers (a program Guildhall starts); an HTTP server runs elsewhere", "sandbox")
	}
	for _, k := range Names(c.Headers) {
		v := c.Headers[k]
		switch {
		case !headerName().MatchString(k):
			add(fmt.Sprintf("%s.headers key %q is not an HTTP header name", where, k), "headers", k)
		case strings.ContainsAny(v, "\r\n\x00"):
			add(fmt.Sprintf("%s.headers[%q] holds a line break or NUL", where, k), "headers", k)
		case http.CanonicalHeaderKey(k) == "Host" || http.CanonicalHeaderKey(k) == "Content-Length" || strings.HasPrefix(http.CanonicalHeaderKey(k), "Mcp-"):
			add(fmt.Sprintf("%s.headers[%q] is set by the client itself", where, k), "headers", k)
		}
	}
	return ps
}

// ParseHTTPURL parses an endpoint a file names, which must be an http://
// or https:// URL with a host. It is the check every such endpoint shares
// (an MCP server's url here, web_search's endpoint in the runner); each
// caller adds its own rules. problem says what is wrong, or "".
func ParseHTTPURL(raw string) (u *url.URL, problem string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, "must be an http:// or https:// URL"
	case u.Hostname() == "":
		return nil, "has no host"
	}
	return u, ""
}

// urlProblem says what is wrong with an MCP server's URL, or "".
func urlProblem(raw string) string {
	u, msg := ParseHTTPURL(raw)
	switch {
	case msg != "":
		return msg
	case u.User != nil:
		return "carries a user name or password; put credentials in headers, whose values are kept out of every record"
	case u.Fragment != "":
		return "has a fragment, which an endpoint cannot use"
	}
	return ""
}
