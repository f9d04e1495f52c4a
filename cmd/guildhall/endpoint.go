package main

// The model endpoint at start: the URL and the key are checked before
// anything is sent, the provider is built and its model list probed, and
// an endpoint that never answered is a setup error (exit 2) with what was
// tried, not a run suspended against nothing.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/runner/seed"
)

// probeTimeout bounds the start-up model list: a setup error is reported
// within a few seconds, not after a dial timeout.
const probeTimeout = 5 * time.Second

// endpointState is the provider built from a deployment and what its
// start-up probe found.
type endpointState struct {
	provider provider.Provider
	notes    []string
	// probeErr is how GET …/models failed (nil when it answered or the
	// provider has no model list); answered is set when it answered.
	probeErr error
	answered bool
	// keyNote says why no key was sent, when the workspace chose the
	// endpoint.
	keyNote string
	// pending is set while the model list has not been probed yet (the
	// console probes once it is on screen); cfg is what the provider was
	// built from, for the rebuild with the model the probe resolves.
	pending bool
	cfg     provider.Config
}

// checkEndpoint checks the deployment's endpoint before anything is sent:
// a base URL that is not an http(s) URL, or a provider that cannot work
// without a key and has none, is a usage error naming the setting.
func checkEndpoint(d *runner.Deployment, key, keyNote string) error {
	if d.Model.Provider == "script" {
		return nil
	}
	base := d.Model.APIBase
	ownAnthropic := d.Model.Provider == "anthropic" && (isDefaultBase(base) || strings.TrimSpace(base) == "")
	if !ownAnthropic {
		if err := provider.CheckBaseURL(base); err != nil {
			return usageErr(fmt.Errorf("%s %w", settingName(d, "model.apiBase"), err))
		}
	}
	if key != "" {
		return nil
	}
	var needs string
	switch {
	case ownAnthropic || d.Model.Provider == "anthropic" && hostIs(base, "api.anthropic.com"):
		needs = "ANTHROPIC_API_KEY (or GUILDHALL_API_KEY, or /run/secrets/anthropic_api_key)"
	case hostIs(base, "api.openai.com"):
		needs = "OPENAI_API_KEY (or GUILDHALL_API_KEY, or /run/secrets/openai_api_key)"
	default:
		return nil // local servers need no key; the probe tells when one does
	}
	msg := fmt.Sprintf("--provider %s at %s needs an API key and none is set: set %s; nothing was sent", d.Model.Provider, endpointLabel(d), needs)
	if keyNote != "" {
		msg += " (" + keyNote + ")"
	}
	return usageErr(errors.New(msg))
}

// settingName names a setting as the operator gave it: the flag, the
// environment variable, or the setting in its file.
func settingName(d *runner.Deployment, path string) string {
	switch o := d.Origin(path); {
	case strings.HasPrefix(o, "--") || o == strings.ToUpper(o) && o != "":
		return o
	case o != "":
		return path + " in " + o + ":"
	}
	return path + " (the built-in default):"
}

func endpointLabel(d *runner.Deployment) string {
	if d.Model.Provider == "anthropic" && isDefaultBase(d.Model.APIBase) {
		return "https://api.anthropic.com"
	}
	return provider.RedactURL(d.Model.APIBase)
}

func hostIs(raw, host string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	return err == nil && strings.EqualFold(u.Hostname(), host)
}

// openEndpoint builds the deployment's provider and probes it for the
// model and its context window, updating the deployment with what the
// server reports.
func openEndpoint(ctx context.Context, d *runner.Deployment, key, scriptFile string) (*endpointState, error) {
	st, err := buildEndpoint(d, key, scriptFile)
	if err != nil || !st.pending {
		return st, err
	}
	st.probeNow(ctx, d)
	return st, nil
}

// buildEndpoint builds the deployment's provider without probing it: a
// provider with a model list is left pending for probeNow.
func buildEndpoint(d *runner.Deployment, key, scriptFile string) (*endpointState, error) {
	if d.Model.Provider == "script" {
		data := seed.DemoScript()
		if scriptFile != "" {
			var err error
			if data, err = os.ReadFile(scriptFile); err != nil {
				return nil, usageErr(fmt.Errorf("--script: %w", err))
			}
		}
		s, err := provider.ParseScript(data)
		if err != nil {
			return nil, usageErr(fmt.Errorf("--script %s: %w", scriptFile, err))
		}
		return &endpointState{provider: provider.NewScripted(s, 0), answered: true}, nil
	}
	base := d.Model.APIBase
	if d.Model.Provider == "anthropic" && isDefaultBase(base) {
		base = ""
	}
	cfg := provider.Config{BaseURL: base, APIKey: key, Model: d.Model.Name, ReasoningField: d.Model.ReasoningField}
	st := &endpointState{provider: buildProvider(d.Model.Provider, cfg), cfg: cfg}
	_, st.pending = st.provider.(provider.Prober)
	return st, nil
}

// probeNow lists the pending endpoint's models, adopting the model name
// and window the server reports into d, and rebuilds the provider with
// the resolved name.
func (st *endpointState) probeNow(ctx context.Context, d *runner.Deployment) {
	pr, ok := st.provider.(provider.Prober)
	st.pending = false
	if !ok {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	models, err := pr.Probe(pctx)
	cancel()
	if err != nil {
		st.probeErr = err
		st.notes = append(st.notes, fmt.Sprintf("could not list models at %s (%v); continuing with the configured model", provider.RedactURL(st.cfg.BaseURL), err))
		return
	}
	st.answered = true
	st.notes = append(st.notes, adoptModel(d, models)...)
	cfg := st.cfg
	cfg.Model = d.Model.Name
	st.provider = buildProvider(d.Model.Provider, cfg)
}

func buildProvider(kind string, cfg provider.Config) provider.Provider {
	switch kind {
	case "openai-responses":
		return provider.NewOpenAIResponses(cfg)
	case "anthropic":
		return provider.NewAnthropic(cfg)
	}
	return provider.NewOpenAIChat(cfg)
}

// adoptModel takes the model name and window the server reports, where
// the deployment leaves them open.
func adoptModel(d *runner.Deployment, models []provider.ModelInfo) []string {
	if len(models) == 0 {
		return nil
	}
	var notes []string
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
	if found && chosen.ContextWindow > 0 && (d.Origin("model.contextWindow") == "" || d.Model.ContextWindow == 0) {
		d.Model.ContextWindow = chosen.ContextWindow
		d.SetOrigin("model.contextWindow", "the server's model list")
		notes = append(notes, fmt.Sprintf("context window %d tokens (reported by the server); %d kept for each reply", chosen.ContextWindow, d.OutputReserve()))
	}
	return notes
}

// unanswered is the start-up problem of an endpoint whose model list did
// not answer in a way that says a server is there: nothing listening, no
// answer in time, or a refused key. Such an endpoint fails at start (the
// first model call would fail the same way); one whose list answered with
// another HTTP error (a 404 from a server without /models) gets its first
// call, which decides. nil when there is no such problem.
func (st *endpointState) unanswered() *provider.Unanswered {
	if st == nil {
		return nil // a prepared setup (the demo's scripted model)
	}
	pe := provider.AsError(st.probeErr)
	if st.answered || pe == nil {
		return nil
	}
	switch pe.Category {
	case provider.CategoryNetwork, provider.CategoryTimeout, provider.CategoryAuth:
		return st.explain(nil)
	}
	return nil
}

// explain is the setup message of this endpoint with the first call's
// failure, when there is one.
func (st *endpointState) explain(call error) *provider.Unanswered {
	u := &provider.Unanswered{Probe: st.probeErr, Call: call, KeyNote: st.keyNote}
	if d, ok := st.provider.(provider.Described); ok {
		u.Endpoint = d.Endpoint()
	}
	return u
}

// hasAnswered reports whether the endpoint answered at start; a prepared
// setup's scripted model always does.
func (st *endpointState) hasAnswered() bool { return st == nil || st.answered }

func (st *endpointState) keyNoteOrEmpty() string {
	if st == nil {
		return ""
	}
	return st.keyNote
}

// probe is how the start-up model list failed, if it did.
func (st *endpointState) probe() error {
	if st == nil {
		return nil
	}
	return st.probeErr
}

// endpointError is the exit-2 error of an endpoint that never answered.
func endpointError(u *provider.Unanswered, runID string) error {
	msg := u.Explain()
	if runID != "" {
		msg += "\nThe run " + runID + " is recorded as failed (" + runner.EndpointErrorKind + "); there is nothing to resume."
	}
	return usageErr(errors.New(msg))
}

// requireEndpoint fails a headless command at start when its endpoint did
// not answer (see unanswered).
func (s *setup) requireEndpoint() error {
	if u := s.endpoint.unanswered(); u != nil {
		return endpointError(u, "")
	}
	return s.requireModels()
}

// seedForWindow picks the compact seed guild when the seed guild was
// chosen by default (not named by --guild or a run's record) and its
// opening prompts do not fit the window the server reported. Where even
// the compact guild does not fit, it is still the better choice, and the
// run's first line says the window is too small.
func seedForWindow(g *runner.Guild, d *runner.Deployment) (*runner.Guild, string, error) {
	if g.Path != "seed" || runner.WindowWarning(g, d) == "" {
		return g, "", nil
	}
	c, err := compactSeedGuild()
	if err != nil {
		return nil, "", err
	}
	return c, fmt.Sprintf("using the compact seed guild (fewer tools, shorter prompts): the %d-token window is too small for the seed guild's opening prompts; a window of %d or more runs the full one",
		d.Model.ContextWindow, runner.FittingWindow(g, d)), nil
}

// compactSeedGuild loads the embedded compact seed guild.
func compactSeedGuild() (*runner.Guild, error) {
	fsys, err := seed.CompactGuild()
	if err != nil {
		return nil, &exitCodeError{code: exitError, err: err}
	}
	g, err := runner.LoadGuild(fsys, "compact seed guild")
	if err != nil {
		return nil, &exitCodeError{code: exitError, err: err}
	}
	g.Path = compactSeedPath
	g.ConventionalDocs = true
	return g, nil
}

// compactSeedPath is the compact seed guild's name in run records.
const compactSeedPath = "seed-compact"

// newProvider opens an endpoint for a client that is not a run of this
// workspace (a benchmark, the Foundry's optimiser): the provider, the
// probe's notes, and a setup error when the endpoint did not answer.
func newProvider(ctx context.Context, d *runner.Deployment, key, scriptFile string) (provider.Provider, []string, error) {
	if err := checkEndpoint(d, key, ""); err != nil {
		return nil, nil, err
	}
	st, err := openEndpoint(ctx, d, key, scriptFile)
	if err != nil {
		return nil, nil, err
	}
	if u := st.unanswered(); u != nil {
		return nil, nil, endpointError(u, "")
	}
	return st.provider, st.notes, nil
}
