package tools

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"time"

	"github.com/guildhall/guildhall/tools/sandbox"
	"github.com/guildhall/guildhall/tools/shell"
)

// Subprocess limits.
const (
	// streamMaxChars caps each of stdout and stderr in a tool result.
	streamMaxChars = 8192
	// defaultTimeoutCeiling applies when the deployment sets none.
	defaultTimeoutCeiling = 30 * time.Second
)

// procSpec is one subprocess to run.
type procSpec struct {
	Dir      string
	Argv     []string
	Env      []string
	Timeout  time.Duration
	MaxChars int // per stream
	// Sandbox runs the program in a sandbox of its own (nil refuses to run
	// it); WritableGit lets it write the workspace's .git.
	Sandbox     *sandbox.Sandbox
	WritableGit bool
}

// procResult is what a subprocess did. ExitCode is -1 when it was killed.
type procResult struct {
	ExitCode int    `json:"exitCode"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	TimedOut bool   `json:"timedOut"`

	stdoutCut bool // stdout exceeded the cap
}

// errCancelled reports a subprocess stopped because the call was cancelled.
var errCancelled = shell.ErrCancelled

// runProcess runs argv in the run's sandbox with shell.Exec: in its own
// session with stdin on /dev/null. The git tools use it with a fixed argv;
// shell commands go through shellCall instead.
// On timeout or cancellation the whole group is killed; after the leader
// exits the group is killed as well, and the sandbox's process registry
// sweeps up anything that escaped, so no background child outlives the
// call. A start failure is returned as an error; everything after start is
// in the result.
func runProcess(ctx context.Context, spec procSpec) (procResult, error) {
	if spec.Sandbox == nil {
		return procResult{}, errNoSandbox
	}
	argv, environ, err := spec.Sandbox.Command(spec.Argv, spec.Env, spec.WritableGit)
	if err != nil {
		return procResult{}, err
	}
	reaper := spec.Sandbox.Reaper()
	defer reaper.Sweep()
	res, err := shell.Exec(ctx, shell.Program{
		Dir: spec.Dir, Argv: argv, Env: environ, Timeout: spec.Timeout, MaxChars: spec.MaxChars,
		Reaper: reaper,
	})
	if err != nil && !errors.Is(err, shell.ErrCancelled) {
		return procResult{}, err
	}
	return fromShell(res), err
}

// callTimeout is a call's timeout: the requested seconds when below the
// deployment's ceiling, else the ceiling. A call can lower it, never raise it.
func callTimeout(env *Env, requested *float64) (time.Duration, *Result) {
	ceiling := env.TimeoutCeiling
	if ceiling <= 0 {
		ceiling = defaultTimeoutCeiling
	}
	if requested == nil {
		return ceiling, nil
	}
	s := *requested
	if math.IsNaN(s) || s <= 0 {
		r := Fail(KindInvalidArguments, "timeoutSeconds must be greater than zero")
		return 0, &r
	}
	if s >= ceiling.Seconds() {
		return ceiling, nil
	}
	return time.Duration(s * float64(time.Second)), nil
}

// SubprocessEnv is the environment every subprocess a tool starts gets:
// the variables of this process's environment that the allowlist names
// (see PassesEnv), plus those the operator passes by name. Anything else,
// whatever it is called (GITHUB_PAT, DATABASE_URL, NPM_CONFIG__AUTH), stays
// out: a denylist of secret-looking names always misses one.
func SubprocessEnv(pass []string) []string { return FilterEnv(os.Environ(), pass) }

// subprocessEnv is SubprocessEnv over the call's base environment
// (Env.Environ, else this process's).
func (e *Env) subprocessEnv() []string {
	if e.Environ != nil {
		return FilterEnv(e.Environ, e.PassEnv)
	}
	return SubprocessEnv(e.PassEnv)
}

// FilterEnv keeps the entries of environ that PassesEnv accepts.
// Malformed entries (no '=', or an empty name) are dropped.
func FilterEnv(environ, pass []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !PassesEnv(name, pass) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// EnvAllowlist names the variables tool subprocesses get from the
// operator's environment: where things are (PATH, HOME, the temporary
// folder), the locale and terminal type, and the locations and settings of
// common toolchains, so that builds and tests find their caches. An entry
// ending in '*' is a prefix. docs/security.md lists the same names.
func EnvAllowlist() []string { return append([]string(nil), envAllowlist[:]...) }

var envAllowlist = [...]string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "TMPDIR",
	"LANG", "LANGUAGE", "LC_*",
	// Go
	"GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOSUMDB",
	"GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOTOOLCHAIN", "GOTMPDIR", "CGO_ENABLED",
	"CC", "CXX",
	// Rust, Java, Node, Python, Ruby, .NET
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "JAVA_HOME", "GRADLE_USER_HOME",
	"NODE_PATH", "NVM_DIR", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYENV_ROOT",
	"CONDA_PREFIX", "GEM_HOME", "GEM_PATH", "RBENV_ROOT", "DOTNET_ROOT",
	// Certificates
	"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
}

// PassesEnv reports whether a variable may reach a tool subprocess: it is
// on EnvAllowlist or in pass (the operator's executor.passEnv, exact names
// or prefixes ending in '*'). Guildhall's own variables and the provider
// keys never pass, even when named.
func PassesEnv(name string, pass []string) bool {
	if NeverPassEnv(name) {
		return false
	}
	return envListed(name, envAllowlist[:]) || envListed(name, pass)
}

// NeverPassEnv reports the variables no configuration may pass to a tool:
// GUILDHALL_*, the provider keys and the web search key.
func NeverPassEnv(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasPrefix(n, "GUILDHALL_") || n == "OPENAI_API_KEY" || n == "ANTHROPIC_API_KEY" ||
		n == "KAGI_API_KEY" || n == "ORCHESTRATOR_KAGI_API_KEY" || n == "ORCHESTRATOR_API_KEY"
}

func envListed(name string, list []string) bool {
	for _, p := range list {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if name == p {
			return true
		}
	}
	return false
}
