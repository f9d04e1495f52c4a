// Package sandbox confines the commands the subprocess tools run
// (run_shell, typecheck, test and the git family) with bubblewrap: a
// read-only view of the host with the workspace writable, the real HOME,
// /tmp, /run and Guildhall's own state out of sight, new user, PID, network,
// IPC, UTS and cgroup namespaces, no capabilities, and the network either
// off or reachable only through Guildhall's allowlisting proxy
// (tools/egress).
//
// Shell commands run in one persistent helper per run: the guildhall
// binary itself, started under bwrap with a hidden sub-command
// (HelperCommand), which runs each command with /bin/sh -c through the
// same code as the unconfined path (tools/shell), under the per-command
// resource limits (limits.go), and which kills every process of a call
// when the call ends. The git
// tools run each command in a sandbox of its own.
//
// The package knows no tool, provider or screen: tools call it.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/guildhall/guildhall/tools/egress"
)

// Mode says what the sandbox lets a command write.
type Mode string

// The modes.
const (
	// WorkspaceWrite: the workspace and the operator's extra writable
	// paths are writable; everything else is read-only or hidden.
	WorkspaceWrite Mode = "workspace-write"
	// ReadOnly: the workspace is read-only too; only the sandbox's own
	// HOME and /tmp (and the extra writable paths) take writes.
	ReadOnly Mode = "read-only"
	// None runs commands unconfined, as the operator's own processes.
	None Mode = "none"
)

// Network says what a command may reach.
type Network string

// The network policies.
const (
	// NetworkOff: a network namespace of its own with nothing in it but
	// loopback: no DNS, no host loopback, no abstract sockets of the host.
	NetworkOff Network = "off"
	// NetworkAllowlist: the same, plus an HTTP(S) proxy that Guildhall
	// runs outside and that reaches only the allowlisted hosts.
	NetworkAllowlist Network = "allowlist"
)

// Config is the sandbox section of deployment.json, as written.
type Config struct {
	Mode     string   `json:"mode,omitempty"`
	Network  string   `json:"network,omitempty"`
	Allow    []string `json:"allow,omitempty"`
	Writable []string `json:"writable,omitempty"`
	// ReadOnly are more host paths to show read-only at their real paths,
	// beside the toolchains found (toolchains.go); the operator's alone.
	ReadOnly []string `json:"readOnly,omitempty"`
	// Limits bound each shell command's resources (limits.go).
	Limits LimitsConfig `json:"limits,omitempty"`
}

// Policy is a validated sandbox configuration.
type Policy struct {
	mode     Mode
	network  Network
	allow    egress.Policy
	writable []string // canonical
	readOnly []string // canonical
	limits   LimitsConfig
}

// NewPolicy validates c. Empty fields take the defaults: workspace-write,
// network off. Every error names the field and what is wrong.
func NewPolicy(c Config) (Policy, error) {
	p := Policy{mode: WorkspaceWrite, network: NetworkOff}
	if c.Mode != "" {
		m, err := ParseMode(c.Mode)
		if err != nil {
			return Policy{}, err
		}
		p.mode = m
	}
	if c.Network != "" {
		n, err := ParseNetwork(c.Network)
		if err != nil {
			return Policy{}, err
		}
		p.network = n
	}
	allow, err := egress.ParsePolicy(c.Allow)
	if err != nil {
		return Policy{}, fmt.Errorf("sandbox.%w", err)
	}
	p.allow = allow
	if err := c.Limits.Check(); err != nil {
		return Policy{}, err
	}
	p.limits = c.Limits
	for i, w := range c.Writable {
		canon, err := CheckWritable(w)
		if err != nil {
			return Policy{}, fmt.Errorf("sandbox.writable[%d] %q: %w", i, w, err)
		}
		p.writable = append(p.writable, canon)
	}
	for i, r := range c.ReadOnly {
		canon, err := CheckReadOnly(r)
		if err != nil {
			return Policy{}, fmt.Errorf("sandbox.readOnly[%d] %q: %w", i, r, err)
		}
		p.readOnly = append(p.readOnly, canon)
	}
	return p, nil
}

// ParseMode parses a mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case WorkspaceWrite, ReadOnly, None:
		return m, nil
	}
	return "", fmt.Errorf("sandbox mode %q is not one of workspace-write, read-only, none", s)
}

// ParseNetwork parses a network policy name.
func ParseNetwork(s string) (Network, error) {
	switch n := Network(s); n {
	case NetworkOff, NetworkAllowlist:
		return n, nil
	}
	return "", fmt.Errorf("sandbox network %q is not one of off, allowlist", s)
}

// WithMode returns p with its mode replaced (the --sandbox flag).
func (p Policy) WithMode(m Mode) Policy {
	p.mode = m
	return p
}

// Mode is the policy's mode.
func (p Policy) Mode() Mode { return p.mode }

// Network is the policy's network policy.
func (p Policy) Network() Network { return p.network }

// Allow is the network allowlist (used when Network is NetworkAllowlist).
func (p Policy) Allow() egress.Policy { return p.allow }

// Writable lists the extra writable paths, canonical.
func (p Policy) Writable() []string { return append([]string(nil), p.writable...) }

// ReadOnly lists the operator's extra read-only paths, canonical.
func (p Policy) ReadOnly() []string { return append([]string(nil), p.readOnly...) }

// Limits are the per-command resource limits, defaults filled in.
func (p Policy) Limits() LimitsConfig { return p.limits.Effective() }

// Confined reports whether commands run in a sandbox.
func (p Policy) Confined() bool { return p.mode != None }

// Summary is the policy in one line, for headers and `guildhall check`:
// "sandbox: workspace-write, network off",
// "sandbox: read-only, network allowlist (3 hosts)" or
// "sandbox: none (commands run unconfined)".
func (p Policy) Summary() string {
	if p.mode == None || p.mode == "" {
		if p.network == NetworkAllowlist {
			// The allowlist still governs the web tools.
			return "sandbox: none (commands run unconfined; the web tools reach " + plural(p.allow.Hosts(), "allowed host") + ")"
		}
		return "sandbox: none (commands run unconfined)"
	}
	s := "sandbox: " + string(p.mode) + ", network " + string(p.network)
	if p.network == NetworkAllowlist {
		s += " (" + plural(p.allow.Hosts(), "host") + ")"
	}
	if n := len(p.writable); n > 0 {
		s += ", " + plural(n, "extra writable path")
	}
	if n := len(p.readOnly); n > 0 {
		s += ", " + plural(n, "extra read-only path")
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// CheckWritable validates one extra writable path and returns it
// canonical: absolute, existing, not "/", not a kernel or device tree, not
// the operator's HOME or a folder holding it, and not covering (or inside)
// the credentials under HOME, the user runtime folder (agent sockets) or
// Guildhall's own state and configuration.
func CheckWritable(p string) (string, error) {
	canon, h, err := extraPath{
		relative: "a writable path must be absolute",
		missing:  "the path does not exist; create it first",
		root:     "making / writable turns the sandbox off; name the folders instead",
		system:   "%s is not a place for writable files (the kernel, devices or daemons' sockets live there)",
		home:     "it would make your home folder %s writable; name a folder inside it, such as a build cache",
	}.check(p)
	if err != nil {
		return "", err
	}
	for _, secret := range h.protected() {
		if within(canon, secret) || within(secret, canon) {
			return "", fmt.Errorf("it overlaps %s, which holds credentials, agent sockets or Guildhall's own state", secret)
		}
	}
	return canon, nil
}

// CheckReadOnly validates one sandbox.readOnly path and returns it
// canonical: absolute, existing, not "/", not a kernel, device or daemon
// tree, not a home folder or a folder holding one (HOME stays masked: name
// the folder inside it), and not a denylisted path or inside one. A
// denylisted path inside it is masked (denylist.go).
func CheckReadOnly(p string) (string, error) {
	canon, h, err := extraPath{
		relative: "a read-only path must be absolute",
		missing:  "the path does not exist",
		root:     "/ is read-only in the sandbox already; name the folders under a hidden one, such as HOME",
		system:   "%s cannot be shown (the kernel, devices or daemons' sockets live there)",
		home:     "it would show your home folder %s; name a folder inside it, such as a toolchain's",
	}.check(p)
	if err != nil {
		return "", err
	}
	if _, denied := deniedWithin(h.denied(), canon); denied {
		return "", errors.New("it is on the sandbox's credential denylist (or inside a path that is), which is never shown")
	}
	return canon, nil
}

// extraPath words, for one kind of path the operator adds to the sandbox,
// the refusals of the checks every kind shares (check).
type extraPath struct {
	relative, missing, root string
	system                  string // a format taking the kernel, device or daemon tree
	home                    string // a format taking the home folder
}

// check resolves p and refuses, in w's words, a path that is relative or
// missing, "/", a kernel, device or daemon tree (or holds one), or a home
// folder or a folder holding one. It returns p canonical and the host's
// locations, for the checks of p's own kind.
func (w extraPath) check(p string) (string, host, error) {
	if !filepath.IsAbs(p) {
		return "", host{}, errors.New(w.relative)
	}
	canon, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", host{}, errors.New(w.missing)
		}
		return "", host{}, fmt.Errorf("cannot resolve it: %w", err)
	}
	if canon == "/" {
		return "", host{}, errors.New(w.root)
	}
	for _, sys := range []string{"/proc", "/sys", "/dev", "/run", "/var/run"} {
		if within(canon, sys) || within(sys, canon) {
			return "", host{}, fmt.Errorf(w.system, sys)
		}
	}
	h := hostPaths()
	for _, home := range h.homes {
		if within(home, canon) {
			return "", host{}, fmt.Errorf(w.home, home)
		}
	}
	return canon, h, nil
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	if dir == "" || p == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// host are the operator's locations the sandbox hides.
type host struct {
	homes      []string // $HOME and the account's home, canonical, deduplicated
	envHome    string   // $HOME as set (canonical), or ""
	runtimeDir string   // $XDG_RUNTIME_DIR
	state      string   // Guildhall's state: $XDG_STATE_HOME/guildhall
	config     string   // Guildhall's configuration: $XDG_CONFIG_HOME/guildhall
	cache      string   // Guildhall's cache: os.UserCacheDir()/guildhall (caches.go)
}

func (h host) protected() []string {
	var out []string
	for _, home := range h.homes {
		for _, s := range homeSecrets {
			out = append(out, filepath.Join(home, s))
		}
	}
	for _, p := range []string{h.runtimeDir, h.state, h.config, h.cache} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// hostPaths reads the operator's locations from the environment and the
// account database.
func hostPaths() host {
	var h host
	add := func(p string) string {
		if p == "" || !filepath.IsAbs(p) {
			return ""
		}
		c := canonical(p)
		if c == "/" {
			return ""
		}
		for _, seen := range h.homes {
			if seen == c {
				return c
			}
		}
		h.homes = append(h.homes, c)
		return c
	}
	h.envHome = add(os.Getenv("HOME"))
	if u, err := user.Current(); err == nil {
		add(u.HomeDir)
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		h.runtimeDir = canonical(d)
	}
	state, config := os.Getenv("XDG_STATE_HOME"), os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(state) && h.envHome != "" {
		state = filepath.Join(h.envHome, ".local", "state")
	}
	if !filepath.IsAbs(config) && h.envHome != "" {
		config = filepath.Join(h.envHome, ".config")
	}
	if state != "" {
		h.state = filepath.Join(canonical(state), "guildhall")
	}
	if config != "" {
		h.config = filepath.Join(canonical(config), "guildhall")
	}
	if c, err := os.UserCacheDir(); err == nil && filepath.IsAbs(c) {
		h.cache = filepath.Join(canonical(c), "guildhall")
	}
	return h
}

// canonical resolves p's symbolic links when it exists, else cleans it.
func canonical(p string) string {
	if c, err := filepath.EvalSymlinks(p); err == nil {
		return c
	}
	return filepath.Clean(p)
}
