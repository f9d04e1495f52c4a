package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/runner/seed"
)

// commonFlags are the flags every command shares.
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
	sandbox    sandboxFlags
}

func (c *commonFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.workspace, "workspace", ".", "workspace directory the run works in")
	fs.StringVar(&c.guild, "guild", "", "guild folder (default <workspace>/guild/ when it exists, else the embedded seed guild)")
	fs.StringVar(&c.deployment, "deployment", "", "deployment file (default <workspace>/deployment.json when it exists, else built-in defaults)")
	fs.StringVar(&c.provider, "provider", "", "model wire format: openai, openai-responses, anthropic or script")
	fs.StringVar(&c.baseURL, "base-url", "", "model endpoint base URL, e.g. http://127.0.0.1:8080/v1")
	fs.StringVar(&c.model, "model", "", "model name (overrides the deployment's model.name)")
	fs.StringVar(&c.effort, "effort", "", "effort tier: quick, standard or thorough (default: project setting, else standard)")
	fs.StringVar(&c.continues, "continue", "", "continue from a finished run (RUN_ID)")
	fs.StringVar(&c.web, "web", "", "also serve the browser console on ADDR (e.g. 127.0.0.1:8765)")
	fs.StringVar(&c.logLevel, "log-level", "", "log level: full or standard (default: project setting, else full)")
	fs.StringVar(&c.script, "script", "", "with --provider script: the scripted conversation (JSON); default: the demo's")
	c.sandbox.register(fs)
}

// setup is everything a run needs, resolved from flags, files and the
// environment.
type setup struct {
	workspace  string
	guild      *runner.Guild
	deployment *runner.Deployment
	provider   provider.Provider
	notes      []string
	sandbox    sandboxState
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

// loadGuild resolves --guild: the flag, <workspace>/guild/, or the seed.
func (c *commonFlags) loadGuild(ws string) (*runner.Guild, error) {
	dir := c.guild
	if dir == "" {
		if fi, err := os.Stat(filepath.Join(ws, "guild", "guild.json")); err == nil && fi.Mode().IsRegular() {
			dir = filepath.Join(ws, "guild")
		}
	}
	var fsys fs.FS
	source := "seed guild"
	if dir == "" {
		fsys = seed.Guild()
	} else {
		fsys, source = os.DirFS(dir), dir
	}
	g, err := runner.LoadGuild(fsys, source)
	if err != nil {
		return nil, usageErr(err)
	}
	return g, nil
}

// loadDeployment resolves --deployment and applies flag and environment
// overrides.
func (c *commonFlags) loadDeployment(ws string, g *runner.Guild) (*runner.Deployment, error) {
	file := c.deployment
	if file == "" {
		if _, err := os.Stat(filepath.Join(ws, "deployment.json")); err == nil {
			file = filepath.Join(ws, "deployment.json")
		}
	}
	var d *runner.Deployment
	if file == "" {
		d = runner.DefaultDeployment()
		d.FitToGuild(g)
	} else {
		var err error
		if d, err = runner.LoadDeployment(file); err != nil {
			return nil, usageErr(err)
		}
		if err := d.CheckAgainstGuild(g); err != nil {
			return nil, usageErr(err)
		}
	}
	override := func(dst *string, flag, env string) {
		if flag != "" {
			*dst = flag
		} else if v := os.Getenv(env); v != "" {
			*dst = v
		}
	}
	override(&d.Model.Provider, c.provider, "GUILDHALL_PROVIDER")
	override(&d.Model.APIBase, c.baseURL, "GUILDHALL_BASE_URL")
	override(&d.Model.Name, c.model, "GUILDHALL_MODEL")
	switch d.Model.Provider {
	case "", "openai":
		d.Model.Provider = "openai"
	case "openai-responses", "anthropic", "script":
	default:
		return nil, usageErr(fmt.Errorf("--provider %q is not one of openai, openai-responses, anthropic, script", d.Model.Provider))
	}
	return d, nil
}

// apiKey finds the provider key in the environment or Docker secrets. It
// is handed to the provider and nowhere else.
func apiKey(providerName string) string {
	var names []string
	switch providerName {
	case "anthropic":
		names = []string{"ANTHROPIC_API_KEY", "GUILDHALL_API_KEY"}
	default:
		names = []string{"OPENAI_API_KEY", "GUILDHALL_API_KEY"}
	}
	for _, n := range names {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return v
		}
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("/run/secrets", strings.ToLower(n)))
		if err == nil && strings.TrimSpace(string(b)) != "" {
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}

// newProvider builds the deployment's provider and probes it for the model
// and its context window.
func newProvider(ctx context.Context, d *runner.Deployment, scriptFile string) (provider.Provider, []string, error) {
	if d.Model.Provider == "script" {
		data := seed.DemoScript()
		if scriptFile != "" {
			var err error
			if data, err = os.ReadFile(scriptFile); err != nil {
				return nil, nil, usageErr(fmt.Errorf("--script: %w", err))
			}
		}
		s, err := provider.ParseScript(data)
		if err != nil {
			return nil, nil, usageErr(fmt.Errorf("--script %s: %w", scriptFile, err))
		}
		return provider.NewScripted(s, 0), nil, nil
	}
	base := d.Model.APIBase
	if d.Model.Provider == "anthropic" && isDefaultBase(base) {
		base = ""
	}
	cfg := provider.Config{BaseURL: base, APIKey: apiKey(d.Model.Provider), Model: d.Model.Name, ReasoningField: d.Model.ReasoningField}
	var p provider.Provider
	switch d.Model.Provider {
	case "openai-responses":
		p = provider.NewOpenAIResponses(cfg)
	case "anthropic":
		p = provider.NewAnthropic(cfg)
	default:
		p = provider.NewOpenAIChat(cfg)
	}
	var notes []string
	if pr, ok := p.(provider.Prober); ok {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		models, err := pr.Probe(pctx)
		cancel()
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("could not list models at %s (%v); continuing with the configured model", base, err))
		case len(models) > 0:
			chosen := models[0]
			found := d.Model.Name == ""
			for _, m := range models {
				if m.ID == d.Model.Name {
					chosen, found = m, true
				}
			}
			if d.Model.Name == "" {
				d.Model.Name = chosen.ID
				notes = append(notes, "using model "+chosen.ID+" reported by the server")
			} else if !found {
				notes = append(notes, fmt.Sprintf("the server does not list model %q; trying it anyway", d.Model.Name))
			}
			if found && chosen.ContextWindow > 0 && (d.Source == "built-in defaults" || d.Model.ContextWindow == 0) {
				d.Model.ContextWindow = chosen.ContextWindow
				notes = append(notes, fmt.Sprintf("context window %d tokens (reported by the server)", chosen.ContextWindow))
				if d.Model.Generation.MaxTokens >= d.Model.ContextWindow {
					d.Model.Generation.MaxTokens = d.Model.ContextWindow / 4
				}
			}
		}
		// Rebuild with the resolved model name.
		cfg.Model = d.Model.Name
		switch d.Model.Provider {
		case "openai-responses":
			p = provider.NewOpenAIResponses(cfg)
		case "anthropic":
			p = provider.NewAnthropic(cfg)
		default:
			p = provider.NewOpenAIChat(cfg)
		}
	}
	return p, notes, nil
}

func isDefaultBase(base string) bool {
	return base == runner.DefaultDeployment().Model.APIBase
}

// load resolves the whole setup for a network provider.
func (c *commonFlags) load(ctx context.Context) (*setup, error) {
	ws, err := c.workspaceDir()
	if err != nil {
		return nil, err
	}
	g, err := c.loadGuild(ws)
	if err != nil {
		return nil, err
	}
	d, err := c.loadDeployment(ws, g)
	if err != nil {
		return nil, err
	}
	sb, err := c.resolveSandbox(ws, d) // before any model call
	if err != nil {
		return nil, err
	}
	p, notes, err := newProvider(ctx, d, c.script)
	if err != nil {
		return nil, err
	}
	return &setup{workspace: ws, guild: g, deployment: d, provider: p, notes: notes, sandbox: sb}, nil
}
