package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/runner/trust"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
)

// commonFlags are the shared flags (each command registers the ones it
// reads: sharedFlagsOf) and what a command resolved from them.
type commonFlags struct {
	workspace  string
	guild      string
	deployment string
	provider   string
	baseURL    string
	model      string
	effort     string
	continues  string
	web        string
	logLevel   string
	script     string
	// trustWorkspace applies the workspace's own configuration without
	// asking (--trust-workspace), and remembers that.
	trustWorkspace bool
	// keys are the provider keys, read once at start.
	keys keyring
	// recordedGuild, set by resume, is the guild the run was started with
	// (meta.json's guildPath): it replaces the usual choice, but not an
	// explicit --guild.
	recordedGuild string
	// recordedEndpoint, set by resume, is the endpoint the run used
	// (meta.json): it replaces the deployment's, but not a flag or an
	// environment variable.
	recordedEndpoint recordedEndpoint
	sandbox          sandboxFlags
	budget           budgetFlags
	// ownsProcess is true when the command is the whole process (main),
	// not a test calling it in-process.
	ownsProcess bool
	// detectedTheme is what the terminal's background said, once asked
	// (consoleTheme).
	detectedTheme string
}

// registerShared registers the named shared flags on fs. Each command
// registers only the ones it reads (sharedFlagsOf), so that its --help
// lists no flag it would ignore.
func (c *commonFlags) registerShared(fs *pflag.FlagSet, names ...string) {
	for _, name := range names {
		switch name {
		case "workspace":
			fs.StringVar(&c.workspace, "workspace", ".", "workspace directory the run works in")
		case "guild":
			fs.StringVar(&c.guild, "guild", "", "guild folder (default: the workspace's guild/ once trusted, else ~/.config/guildhall/guild/, else the embedded seed guild)")
		case "deployment":
			fs.StringVar(&c.deployment, "deployment", "", "deployment file (default: the workspace's deployment.json once trusted, layered over ~/.config/guildhall/deployment.json and the built-in defaults)")
		case "provider":
			fs.StringVar(&c.provider, "provider", "", "model wire format: openai, openai-responses, anthropic or script")
		case "base-url":
			fs.StringVar(&c.baseURL, "base-url", "", "model endpoint base URL, e.g. http://127.0.0.1:8080/v1 (deployment.json's model.apiBase)")
		case "model":
			fs.StringVar(&c.model, "model", "", "model name (overrides the deployment's model.name)")
		case "effort":
			fs.StringVar(&c.effort, "effort", "", "effort tier: quick, standard or thorough (default: project setting, else standard)")
		case "continue":
			fs.StringVar(&c.continues, "continue", "", "continue from a finished run (RUN_ID)")
		case "web":
			fs.StringVar(&c.web, "web", "", "also serve the browser console on ADDR (e.g. 127.0.0.1:8765)")
		case "log-level":
			fs.StringVar(&c.logLevel, "log-level", "", "log level: full or standard (default: project setting, else full)")
		case "script":
			fs.StringVar(&c.script, "script", "", "with --provider script: the scripted conversation (JSON); default: the demo's")
		case "trust-workspace":
			fs.BoolVar(&c.trustWorkspace, "trust-workspace", false, "apply the workspace's own guild/ and deployment.json, and remember that you trust them")
		case "sandbox":
			c.sandbox.register(fs)
		case "budget":
			c.budget.register(fs)
		default:
			panic("guildhall: no shared flag " + name) // a typo in sharedFlagsOf, caught by its test
		}
	}
}

// The shared flags, by what reads them: loading a session (the workspace,
// its configuration, the endpoint, the sandbox and the budget), and
// starting a task.
var (
	loadFlags = []string{"workspace", "guild", "deployment", "trust-workspace", "provider", "base-url", "model", "script", "sandbox", "budget"}
	taskFlags = []string{"effort", "continue", "log-level", "web"}
)

// sharedFlagsOf is the shared flags of each command, by its path. A
// command not listed has none.
func sharedFlagsOf(path string) []string {
	switch path {
	case "guildhall", "guildhall run":
		return append(append([]string{}, loadFlags...), taskFlags...)
	case "guildhall resume", "guildhall serve":
		return append(append([]string{}, loadFlags...), "web")
	case "guildhall queue run":
		return loadFlags
	case "guildhall check":
		return []string{"workspace", "guild", "deployment", "trust-workspace", "provider", "base-url", "model", "script", "sandbox"}
	case "guildhall demo":
		return []string{"web", "sandbox", "effort", "log-level"}
	case "guildhall attach":
		return []string{"workspace", "effort"}
	case "guildhall settings":
		return []string{"workspace", "effort", "log-level"}
	case "guildhall queue add":
		return []string{"workspace", "effort", "log-level", "continue"}
	case "guildhall bench":
		// bench has its own repeatable --guild and --model.
		return []string{"deployment", "provider", "base-url", "sandbox", "budget", "effort"}
	case "guildhall runs", "guildhall show", "guildhall revert", "guildhall trust", "guildhall records adopt",
		"guildhall queue", "guildhall queue ls", "guildhall queue mv", "guildhall queue rm",
		"guildhall queue answer", "guildhall queue requeue", "guildhall queue reset",
		"guildhall foundry run", "guildhall foundry promote":
		return []string{"workspace"}
	}
	return nil
}

// registerSharedFlags gives every command of the tree its shared flags.
func (c *commonFlags) registerSharedFlags(cmd *cobra.Command) {
	c.registerShared(cmd.Flags(), sharedFlagsOf(cmd.CommandPath())...)
	for _, sub := range cmd.Commands() {
		c.registerSharedFlags(sub)
	}
}

// setup is everything a run needs, resolved from flags, files and the
// environment.
type setup struct {
	workspace string
	// ephemeral says the workspace is removed when the command ends (the
	// demo's temporary copy): the console promises no resume.
	ephemeral  bool
	guild      *runner.Guild
	deployment *runner.Deployment
	provider   provider.Provider
	notes      []string
	// records seals and checks the workspace's records and redacts the
	// keys from them.
	records store.Workspace
	// trust is what was decided about the workspace's own configuration.
	trust trustState
	// kagiKey is web_search's Kagi key, read at start with the others.
	kagiKey string
	// sandbox is the resolved sandbox policy and its host.
	sandbox sandboxState
	// endpoint is what the start-up probe of the provider found
	// (endpoint.go).
	endpoint *endpointState
	// models are the endpoints of the named models the guild's roles run
	// on, and modelStates what their start-up probes found (models.go).
	models      map[string]runner.ModelEndpoint
	modelStates map[string]*endpointState
	// workspaceOrigins are the workspace's own files that were applied.
	workspaceOrigins map[string]bool
	// autoGuild says the guild was chosen by default (no --guild, no
	// run's record): the model's window may pick the compact seed guild.
	autoGuild bool
}

// webSearch is web_search's configuration: the deployment's section and
// the key held since start (the environment no longer has it). A provider
// or endpoint the workspace's own file chose is reached only as the run's
// egress policy allows.
func (s *setup) webSearch() *tools.WebSearchConfig {
	d := s.deployment
	cfg := tools.WebSearchConfig{Provider: d.WebSearch.Provider, Endpoint: d.WebSearch.Endpoint,
		FromWorkspace: s.workspaceOrigins[d.Origin("webSearch.provider")] || s.workspaceOrigins[d.Origin("webSearch.endpoint")]}
	if cfg.Provider == "kagi" {
		cfg.Key = s.kagiKey
	}
	return &cfg
}

func (c *commonFlags) workspaceDir() (string, error) {
	abs, err := filepath.Abs(c.workspace)
	if err != nil {
		return "", usageErr(fmt.Errorf("--workspace %s: %w", c.workspace, err))
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", usageErr(fmt.Errorf("--workspace %s: %w", c.workspace, err))
	}
	if !fi.IsDir() {
		return "", usageErr(fmt.Errorf("--workspace %s: not a directory", c.workspace))
	}
	return abs, nil
}

// records returns the workspace's records, sealed with the operator's key
// and redacting the held keys.
func (c *commonFlags) records() (store.Workspace, error) {
	dir, err := c.workspaceDir()
	if err != nil {
		return store.Workspace{}, err
	}
	return recordsOf(dir, c.keys)
}

func recordsOf(dir string, keys keyring) (store.Workspace, error) {
	op, err := trust.Operator()
	if err != nil {
		return store.Workspace{}, &exitCodeError{code: exitError, err: err}
	}
	sealer, err := op.Sealer(dir)
	if err != nil {
		return store.Workspace{}, &exitCodeError{code: exitError, err: err}
	}
	return store.Workspace{Dir: dir, Seal: sealer, Redact: keys.redactor()}, nil
}

// maxOperatorFile caps each configuration file read from the operator's
// folders or a --guild folder.
const maxOperatorFile = 1 << 20

// guildFromDir loads a guild folder of the operator's, reading it through
// an os.Root on the folder so that no link in it leads out.
func guildFromDir(dir string) (*runner.Guild, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, usageErr(fmt.Errorf("guild %s: %w", dir, err))
	}
	defer root.Close()
	g, err := runner.LoadGuild(cappedFS{root.FS(), maxOperatorFile}, dir)
	if err != nil {
		return nil, usageErr(err)
	}
	if g.Path, err = filepath.Abs(dir); err != nil {
		return nil, usageErr(err)
	}
	return g, nil
}

// seedGuild loads the embedded seed guild.
func seedGuild() (*runner.Guild, error) {
	g, err := runner.LoadGuild(seed.Guild(), "seed guild")
	if err != nil {
		return nil, &exitCodeError{code: exitError, err: err}
	}
	g.Path = "seed"
	g.ConventionalDocs = true
	return g, nil
}

// cappedFS refuses files larger than max.
type cappedFS struct {
	fs.FS
	max int64
}

func (c cappedFS) ReadFile(name string) ([]byte, error) {
	if fi, err := fs.Stat(c.FS, name); err == nil && fi.Size() > c.max {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("the file is %d bytes, more than %d", fi.Size(), c.max)}
	}
	return fs.ReadFile(c.FS, name)
}

// operatorDeployment layers the operator's deployment file, when there is
// one, over the built-in defaults.
func operatorDeployment(op trust.Dirs) (*runner.Deployment, error) {
	file := filepath.Join(op.Config, "deployment.json")
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return runner.DefaultDeployment(), nil
	}
	if err != nil {
		return nil, usageErr(fmt.Errorf("read %s: %w", file, err))
	}
	d, err := runner.ParseDeploymentOnto(nil, file, data)
	if err != nil {
		return nil, usageErr(err)
	}
	return d, nil
}

// operatorGuild is the operator's own guild folder, when there is one.
func operatorGuild(op trust.Dirs) (string, bool) {
	dir := filepath.Join(op.Config, "guild")
	fi, err := os.Stat(filepath.Join(dir, "guild.json"))
	return dir, err == nil && fi.Mode().IsRegular()
}

// config is the guild and deployment resolved from every layer, before
// the provider is built.
type config struct {
	workspace  string
	guild      *runner.Guild
	deployment *runner.Deployment
	trust      trustState
	notes      []string
	// operatorBase is the endpoint the operator configured (a flag, the
	// environment, the operator's deployment file, or the built-in
	// default): the only endpoint a key is sent to without question.
	operatorBase string
	// operatorBases are every endpoint the operator's own deployment
	// names, its named models' too (models.go).
	operatorBases map[string]bool
	// workspaceOrigins are the workspace's files that were applied.
	workspaceOrigins map[string]bool
}

// resolve finds the guild and deployment. Precedence, highest first:
//
//   - --guild DIR / --deployment FILE (the operator's explicit choice);
//   - the workspace's guild/ and deployment file, once trusted;
//   - the operator's $XDG_CONFIG_HOME/guildhall/guild/ and deployment.json;
//   - the embedded seed guild and the built-in defaults;
//
// and the environment and flags (--provider, --base-url, --model) over
// every deployment. ask, when set, puts an undecided workspace to the
// operator (the console's dialog).
func (c *commonFlags) resolve(ctx context.Context, ask askTrust) (*config, error) {
	ws, err := c.workspaceDir()
	if err != nil {
		return nil, err
	}
	op, err := trust.Operator()
	if err != nil {
		return nil, &exitCodeError{code: exitError, err: err}
	}
	opDep, err := operatorDeployment(op)
	if err != nil {
		return nil, err
	}
	cfg := &config{workspace: ws, operatorBase: opDep.Model.APIBase, workspaceOrigins: map[string]bool{}}
	cfg.noteOperatorBases(opDep)
	opGuildDir, hasOpGuild := operatorGuild(op)
	baseGuild := "the seed guild"
	if hasOpGuild {
		baseGuild = "your guild " + opGuildDir
	}

	wst, err := tools.OpenWorkspace(ws)
	if err != nil {
		return nil, usageErr(err)
	}
	found := trust.Discover(wst, opDep)
	wst.Close()
	cfg.trust, err = c.decideTrust(ctx, op, ws, found, opDep, baseGuild, ask)
	if err != nil {
		return nil, err
	}
	cfg.notes = append(cfg.notes, cfg.trust.notes...)
	applied := cfg.trust.state == trust.Trusted

	if found.Guild != nil {
		found.Guild.Path = filepath.Join(ws, "guild")
	}
	switch {
	case c.guild != "":
		cfg.guild, err = guildFromDir(c.guild)
	case c.recordedGuild != "":
		cfg.guild, err = c.guildOfRecord(ws, found, applied)
	case applied && found.Guild != nil:
		cfg.guild = found.Guild
	case hasOpGuild:
		cfg.guild, err = guildFromDir(opGuildDir)
	default:
		cfg.guild, err = seedGuild()
	}
	if err != nil {
		return nil, err
	}

	d := opDep
	// The original system's ORCHESTRATOR_DEPLOYMENT_FILE names the
	// operator's file as --deployment does (the flag wins).
	explicit := cmp.Or(c.deployment, os.Getenv("ORCHESTRATOR_DEPLOYMENT_FILE"))
	switch {
	case explicit != "":
		file, _ := filepath.Abs(explicit)
		data, rerr := os.ReadFile(file)
		if rerr != nil {
			return nil, usageErr(&runner.ConfigError{File: explicit, Msg: "cannot read deployment file: " + rerr.Error()})
		}
		if d, err = runner.ParseDeploymentOnto(nil, file, data); err != nil {
			return nil, usageErr(err)
		}
		cfg.operatorBase = d.Model.APIBase
		cfg.noteOperatorBases(d)
	case applied && found.Deployment != nil:
		d = found.Deployment
		cfg.workspaceOrigins[found.DeploymentFile] = true
	}
	if err := c.override(d); err != nil {
		return nil, err
	}
	// Handler roles the built-in defaults name are dropped when the guild
	// lacks them; one a file or the environment named is an error.
	d.FitToGuild(cfg.guild)
	if err := d.CheckAgainstGuild(cfg.guild); err != nil {
		return nil, usageErr(err)
	}
	if o := d.Origin("model.apiBase"); o == "--base-url" || o == "GUILDHALL_BASE_URL" || o == "ORCHESTRATOR_API_BASE" {
		cfg.operatorBase = d.Model.APIBase
	}
	cfg.deployment = d
	return cfg, nil
}

// guildOfRecord loads the guild a run recorded: the seed, the workspace's
// own (only while trusted), or a folder of the operator's.
func (c *commonFlags) guildOfRecord(ws string, found *trust.Found, applied bool) (*runner.Guild, error) {
	p := c.recordedGuild
	switch {
	case p == "seed":
		return seedGuild()
	case p == compactSeedPath:
		return compactSeedGuild()
	case p == filepath.Join(ws, "guild"):
		if !applied || found.Guild == nil {
			return nil, usageErr(fmt.Errorf("the run was started with the workspace's own guild/, which is not trusted now: trust it (guildhall trust) or pass --guild"))
		}
		return found.Guild, nil
	}
	return guildFromDir(p)
}

// override applies the environment and the flags over a deployment: the
// original system's ORCHESTRATOR_* variables, then Guildhall's own, then
// the flags.
func (c *commonFlags) override(d *runner.Deployment) error {
	if err := d.ApplyOriginalEnv(os.Getenv); err != nil {
		return usageErr(err)
	}
	rec := c.recordedEndpoint
	set := func(dst *string, path, flagName, flag, env, recorded string) {
		if flag != "" {
			*dst = flag
			d.SetOrigin(path, "--"+flagName)
		} else if v := os.Getenv(env); v != "" {
			*dst = v
			d.SetOrigin(path, env)
		} else if recorded != "" && !strings.HasPrefix(d.Origin(path), "ORCHESTRATOR_") {
			// The original system's variables (ApplyOriginalEnv, above)
			// are the environment too: they beat the record.
			*dst = recorded
			d.SetOrigin(path, "run "+rec.runID)
		}
	}
	set(&d.Model.Provider, "model.provider", "provider", c.provider, "GUILDHALL_PROVIDER", rec.provider)
	set(&d.Model.APIBase, "model.apiBase", "base-url", c.baseURL, "GUILDHALL_BASE_URL", rec.apiBase)
	set(&d.Model.Name, "model.name", "model", c.model, "GUILDHALL_MODEL", rec.model)
	if err := c.budget.apply(d); err != nil {
		return err
	}
	// ${VAR} in the operator's MCP servers, from the operator's
	// environment; a workspace's servers stay as written.
	if err := d.ExpandMCPEnv(os.LookupEnv); err != nil {
		return usageErr(err)
	}
	switch d.Model.Provider {
	case "", "openai":
		d.Model.Provider = "openai"
	case "openai-responses", "anthropic", "script":
	default:
		return usageErr(fmt.Errorf("--provider %q is not one of openai, openai-responses, anthropic, script", d.Model.Provider))
	}
	return nil
}

// keyFor is the key the provider may be sent. A key goes only to an
// endpoint the operator chose: when the workspace's own deployment file
// picked the endpoint, and the operator did not configure that same one,
// no key is sent and a note says how to send it.
//
// An endpoint taken from a run's record on resume (origin "run ID") counts
// as chosen by the workspace: the record sits in the workspace, and the
// endpoint may have come from its deployment file in the first place.
func (cfg *config) keyFor(keys keyring) (string, string) {
	d := cfg.deployment
	key := keys.forProvider(d.Model.Provider)
	origin := d.Origin("model.apiBase")
	fromRecord := strings.HasPrefix(origin, "run ")
	if key == "" || !(cfg.workspaceOrigins[origin] || fromRecord) || d.Model.APIBase == cfg.operatorBase {
		return key, ""
	}
	if fromRecord {
		return "", fmt.Sprintf("the API key is not sent to %s, which %s used: keys go only to endpoints you configured; to send it, pass --base-url %s or set model.apiBase in your own deployment.json",
			d.Model.APIBase, strings.TrimPrefix(origin, "run "), d.Model.APIBase)
	}
	return "", fmt.Sprintf("the API key is not sent to %s: the workspace's %s chose that endpoint, and keys go only to endpoints you configured; to send it, pass --base-url %s or set model.apiBase in your own deployment.json",
		d.Model.APIBase, d.Origin("model.apiBase"), d.Model.APIBase)
}

func isDefaultBase(base string) bool {
	return base == runner.DefaultDeployment().Model.APIBase
}

// load resolves the whole setup for a network provider, headless: an
// undecided workspace's configuration is not applied.
func (c *commonFlags) load(ctx context.Context) (*setup, error) { return c.loadWith(ctx, nil) }

// loadWith is load with ask putting an undecided workspace to the operator.
func (c *commonFlags) loadWith(ctx context.Context, ask askTrust) (*setup, error) {
	return c.loadSetup(ctx, ask, false)
}

// loadConsole is loadWith for the console, which opens before the
// endpoint's model list is probed: the setup's endpoint is left pending,
// and setup.probe completes it once the console is on screen.
func (c *commonFlags) loadConsole(ctx context.Context, ask askTrust) (*setup, error) {
	return c.loadSetup(ctx, ask, true)
}

func (c *commonFlags) loadSetup(ctx context.Context, ask askTrust, deferProbe bool) (*setup, error) {
	cfg, err := c.resolve(ctx, ask)
	if err != nil {
		return nil, err
	}
	records, err := recordsOf(cfg.workspace, c.keys)
	if err != nil {
		return nil, err
	}
	sb, err := c.resolveSandbox(cfg.workspace, cfg.deployment) // before any model call
	if err != nil {
		return nil, err
	}
	key, keyNote := cfg.keyFor(c.keys)
	notes := cfg.notes
	if keyNote != "" {
		notes = append(notes, keyNote)
	}
	if err := checkEndpoint(cfg.deployment, key, keyNote); err != nil {
		return nil, err
	}
	ep, err := buildEndpoint(cfg.deployment, key, c.script)
	if err != nil {
		return nil, err
	}
	if ep.pending && !deferProbe {
		ep.probeNow(ctx, cfg.deployment)
	}
	ep.keyNote = keyNote
	notes = append(notes, ep.notes...)
	// The window is known now (configured, probed or the default).
	if err := cfg.deployment.CheckGenerationFits(); err != nil {
		return nil, usageErr(err)
	}
	g := cfg.guild
	autoGuild := c.guild == "" && c.recordedGuild == ""
	if autoGuild && !ep.pending {
		var note string
		if g, note, err = seedForWindow(g, cfg.deployment); err != nil {
			return nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	models, modelStates, modelNotes, err := c.openModels(ctx, cfg, g, ep)
	if err != nil {
		return nil, usageErr(err)
	}
	notes = append(notes, modelNotes...)
	for _, w := range g.Warnings {
		notes = append(notes, "guild warning: "+w.Error())
	}
	if _, err := records.LoadSettings(); err != nil {
		notes = append(notes, "project settings ignored: "+err.Error())
	}
	return &setup{workspace: cfg.workspace, guild: g, deployment: cfg.deployment, provider: ep.provider, endpoint: ep,
		models: models, modelStates: modelStates,
		notes: notes, records: records, trust: cfg.trust, kagiKey: c.keys.kagi(), sandbox: sb, workspaceOrigins: cfg.workspaceOrigins,
		autoGuild: autoGuild}, nil
}

// probed is what the console's background probe found: the deployment
// with the model and window the server reported, the endpoint, the guild
// for that window, and the notes of all three.
type probed struct {
	deployment *runner.Deployment
	endpoint   *endpointState
	guild      *runner.Guild
	notes      []string
	// problem is a setting the reported window refutes (maxTokens).
	problem error
}

// probe completes a pending endpoint (loadConsole) as loadWith would
// have, on a copy of the deployment: the session and the console go on
// reading the original until the result is handed to them.
func (s *setup) probe(ctx context.Context) probed {
	d := *s.deployment
	d.SetBy = maps.Clone(d.SetBy)
	st := *s.endpoint
	st.notes = nil
	st.probeNow(ctx, &d)
	out := probed{deployment: &d, endpoint: &st, guild: s.guild, notes: st.notes}
	if err := d.CheckGenerationFits(); err != nil {
		out.problem = err
		return out
	}
	if s.autoGuild {
		g, note, err := seedForWindow(s.guild, &d)
		if err != nil {
			out.problem = err
			return out
		}
		out.guild = g
		if note != "" {
			out.notes = append(out.notes, note)
		}
	}
	return out
}
