package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/guildhall/guildhall/tools/sandbox"
)

// Baselines lists the single-agent programs the harness can drive.
var Baselines = []string{"crush", "codex"}

// Baseline is a single-agent program run on the same tasks and model:
// crush through `crush run`, codex through `codex exec`, each in the same
// throwaway workspace and sandbox as a guild, and validated the same way.
type Baseline struct {
	// Program is "crush" or "codex".
	Program string
	// Exe is the program's executable on this machine.
	Exe string
	// Endpoint is the OpenAI-compatible base URL the guild uses; Model the
	// model name; Key the API key (given to the relay only).
	Endpoint, Model, Key string
	// Responses selects the Responses API for codex (else Chat
	// Completions).
	Responses bool
	// ContextWindow and MaxTokens describe the model to crush.
	ContextWindow, MaxTokens int
	// Sandbox is the variant's sandbox configuration (mode, writable).
	Sandbox sandbox.Config
}

// FindBaseline resolves a baseline program on path, with a clear error
// when it is unknown or not installed.
func FindBaseline(program, path string) (string, error) {
	known := false
	for _, p := range Baselines {
		known = known || p == program
	}
	if !known {
		return "", fmt.Errorf("--baseline %q is not one of %s", program, strings.Join(Baselines, ", "))
	}
	for _, dir := range filepath.SplitList(path) {
		exe := filepath.Join(dir, program)
		if fi, err := os.Stat(exe); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return exe, nil
		}
	}
	return "", fmt.Errorf("--baseline %s: %s is not installed (not found on PATH); install it or leave the baseline out", program, program)
}

// modelHost is the name the baseline reaches the relay by. A loopback
// address would bypass the sandbox's proxy (HTTP clients skip proxies for
// loopback) and find nothing in the sandbox's own network; a name goes
// through the proxy, which maps it to the relay and allows nothing else.
const modelHost = "guildhall-model.internal"

// relayPort is the port of modelHost in a confined baseline's URL. It is
// nominal: the proxy hands the connection to the relay's socket.
const relayPort = "80"

// relayTokenEnv names the variable that holds codex's API key (its
// provider's env_key): the relay's token, never the operator's key.
const relayTokenEnv = "GUILDHALL_RELAY_TOKEN"

// baselineTimeout bounds a baseline run when the harness sets no timeout.
const baselineTimeout = 30 * time.Minute

func (h *Harness) runBaseline(ctx context.Context, j job, d runDirs, res *Result) error {
	b := j.v.Baseline
	res.Guild, res.Model = b.Program, b.Model
	confined := b.Sandbox.Mode != string(sandbox.None)
	rl, err := startRelay(b.Endpoint, b.Key, confined)
	if err != nil {
		return err
	}
	defer rl.close()
	cfg := filepath.Join(d.root, "baseline")
	bin := filepath.Join(cfg, "bin")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		return err
	}
	exe, err := visibleExe(b.Exe, bin, b.Program)
	if err != nil {
		return err
	}
	// Confined, the baseline reaches modelHost through its sandbox's proxy,
	// which dials the relay's socket for the one address modelHost maps to
	// (the port is nominal: nothing listens on it). Unconfined, there is no
	// proxy and no name to map: it dials the relay's loopback port.
	base, reach := "http://"+modelHost+":"+relayPort+"/v1", "127.0.0.1:"+relayPort
	if !confined {
		base = "http://" + rl.addr + "/v1"
	}
	env, err := b.configure(cfg, base, rl.token)
	if err != nil {
		return err
	}
	env = append(env, h.env(d)...)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + bin + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	cfgCanon, err := filepath.EvalSymlinks(cfg)
	if err != nil {
		return err
	}
	pc := b.Sandbox
	pc.Writable = append(append([]string(nil), pc.Writable...), cfgCanon, d.cache)
	opts := sandbox.Options{Workspace: d.ws}
	if confined {
		pc.Network = string(sandbox.NetworkAllowlist)
		pc.Allow = []string{modelHost + ":" + relayPort, reach}
		opts.Resolver, opts.Dial = relayResolver{}, rl.dial(reach)
	} else {
		pc.Writable = nil
	}
	if opts.Policy, err = sandbox.NewPolicy(pc); err != nil {
		return fmt.Errorf("baseline sandbox: %w", err)
	}
	sb, err := h.Host.Open(opts)
	if err != nil {
		return err
	}
	defer sb.Close()
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = baselineTimeout
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
			cancel()
		case <-runCtx.Done():
		}
	}()
	out, err := sb.Run(runCtx, sandbox.Script{Dir: d.ws, Command: shellJoin(b.argv(exe, j.b.Eval.TaskText())), Env: env, Timeout: timeout, MaxChars: maxValidationOutput})
	st := rl.stats()
	res.ModelCalls, res.Tokens, res.ToolCalls = st.calls, st.tokens, st.toolCalls
	switch {
	case ctx.Err() != nil:
		res.Status = "interrupted"
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", b.Program, err)
	case out.TimedOut:
		res.Status = "timeout"
	case out.ExitCode == 0:
		res.Status = "success"
	default:
		res.Status = "error"
	}
	res.Summary = clip(strings.TrimSpace(out.Stdout+"\n"+lastLines(out.Stderr, 5)), 2000)
	return nil
}

// argv is the program's headless command line.
func (b *Baseline) argv(exe, task string) []string {
	if b.Program == "codex" {
		return []string{exe, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--color", "never", task}
	}
	return []string{exe, "run", "--quiet", task}
}

// configure writes the program's configuration under cfg, pointing it at
// base (the relay) with the relay's token as its API key, and returns the
// environment that makes it read that configuration. The operator's key
// is written nowhere: the relay adds it.
func (b *Baseline) configure(cfg, base, token string) ([]string, error) {
	dirs := map[string]string{"XDG_CONFIG_HOME": "config", "XDG_DATA_HOME": "data", "XDG_STATE_HOME": "state", "XDG_CACHE_HOME": "cache", "CODEX_HOME": "codex"}
	var env []string
	for name, sub := range dirs {
		p := filepath.Join(cfg, sub)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, err
		}
		env = append(env, name+"="+p)
	}
	if b.Program == "codex" {
		wire := "chat"
		if b.Responses {
			wire = "responses"
		}
		toml := fmt.Sprintf("model = %s\nmodel_provider = \"guildhall\"\n\n[model_providers.guildhall]\nname = \"Guildhall relay\"\nbase_url = %s\nenv_key = %q\nwire_api = %q\n",
			tomlString(b.Model), tomlString(base), relayTokenEnv, wire)
		env = append(env, relayTokenEnv+"="+token)
		return env, os.WriteFile(filepath.Join(cfg, "codex", "config.toml"), []byte(toml), 0o600)
	}
	model := map[string]any{"id": b.Model, "name": b.Model}
	if b.ContextWindow > 0 {
		model["context_window"] = b.ContextWindow
	}
	if b.MaxTokens > 0 {
		model["default_max_tokens"] = b.MaxTokens
	}
	conf := map[string]any{
		"providers": map[string]any{"guildhall": map[string]any{
			"name": "Guildhall relay", "type": "openai-compat", "base_url": base, "api_key": token,
			"models": []any{model},
		}},
		"models": map[string]any{
			"large": map[string]any{"model": b.Model, "provider": "guildhall"},
			"small": map[string]any{"model": b.Model, "provider": "guildhall"},
		},
		"options": map[string]any{"disable_provider_auto_update": true},
	}
	data, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(cfg, "config", "crush"), 0o700); err != nil {
		return nil, err
	}
	return env, os.WriteFile(filepath.Join(cfg, "config", "crush", "crush.json"), data, 0o600)
}

func tomlString(s string) string {
	b, _ := json.Marshal(s) // a JSON string is a valid TOML basic string
	return string(b)
}

// visibleExe returns a path to the program that the sandbox can see: the
// program itself, unless it lives where the sandbox hides things (a home
// folder, /tmp), in which case a single-file executable is copied into
// bin. A script there (an npm launcher) cannot be copied on its own.
func visibleExe(exe, bin, name string) (string, error) {
	canon, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", err
	}
	if ScopedPath(filepath.Dir(canon)) != "" {
		return canon, nil
	}
	in, err := os.Open(canon)
	if err != nil {
		return "", err
	}
	defer in.Close()
	if !isELF(in) {
		return "", fmt.Errorf("%s (%s) is hidden in the sandbox (it lives under a home or temporary folder) and is not a single executable that could be copied in; install it system-wide (such as /usr/local/bin)", name, canon)
	}
	dst := filepath.Join(bin, name)
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}

// isELF reports whether f begins with the ELF magic, and rewinds it: a
// compiled program, not a script with a #! line. (Only the magic: debug/elf
// would parse the whole file, and its DWARF and zstd dependencies would be
// initialised at every start of the one binary.)
func isELF(f *os.File) bool {
	var magic [4]byte
	_, err := io.ReadFull(f, magic[:])
	_, serr := f.Seek(0, io.SeekStart)
	return err == nil && serr == nil && string(magic[:]) == "\x7fELF"
}

// relayResolver maps modelHost to loopback, where the relay listens; the
// proxy resolves every other name as usual.
type relayResolver struct{}

func (relayResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if strings.EqualFold(strings.TrimSuffix(host, "."), modelHost) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, errors.New("only the model endpoint is reachable from a baseline run")
}

// shellJoin quotes argv for the sandbox's shell.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
