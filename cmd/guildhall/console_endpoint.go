package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/tui"
)

// consoleEndpoint is the console's handle on the session's model endpoint
// (tui.Endpoint): it retries the probe and applies settings typed into the
// console's form, for this session only. Settings typed by the operator
// are the operator's own, so the operator's key may go with them.
type consoleEndpoint struct {
	keys keyring
	sess *runner.Session

	mu sync.Mutex
	d  *runner.Deployment
	ep *endpointState
	// onAnswered runs when a check or new settings found the endpoint
	// answering (the console starts or wakes its queue).
	onAnswered func()
}

func (c *consoleEndpoint) answered() {
	c.sess.MarkAnswered()
	if c.onAnswered != nil {
		c.onAnswered()
	}
}

var _ tui.Endpoint = (*consoleEndpoint)(nil)

func newConsoleEndpoint(keys keyring, sess *runner.Session, s *setup) *consoleEndpoint {
	ep := s.endpoint
	if ep == nil {
		// A prepared setup (the demo's scripted model) was never probed.
		ep = &endpointState{provider: s.provider, answered: true}
	}
	return &consoleEndpoint{keys: keys, sess: sess, d: s.deployment, ep: ep}
}

// adopt takes the deployment and endpoint the start-up probe resolved.
func (c *consoleEndpoint) adopt(d *runner.Deployment, ep *endpointState) {
	c.mu.Lock()
	c.d, c.ep = d, ep
	c.mu.Unlock()
}

// provider is the provider the session uses now (for the summarizer).
func (c *consoleEndpoint) provider() (provider.Provider, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ep.provider, c.d.Model.Name
}

func (c *consoleEndpoint) Settings() tui.EndpointSettings {
	c.mu.Lock()
	defer c.mu.Unlock()
	base := c.d.Model.APIBase
	if c.d.Model.Provider == "anthropic" && isDefaultBase(base) {
		base = "https://api.anthropic.com"
	}
	return tui.EndpointSettings{Provider: c.d.Model.Provider, BaseURL: provider.RedactURL(base), Model: c.d.Model.Name}
}

// Check probes the endpoint again. Only a model list that answers counts:
// the dialog is open because nothing did.
func (c *consoleEndpoint) Check(ctx context.Context) string {
	c.mu.Lock()
	ep := c.ep
	c.mu.Unlock()
	pr, ok := ep.provider.(provider.Prober)
	if !ok {
		return ""
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if _, err := pr.Probe(pctx); err != nil {
		c.mu.Lock()
		c.ep.probeErr = err
		c.mu.Unlock()
		return capitalize(ep.explain(nil).Explain())
	}
	c.mu.Lock()
	c.ep.answered, c.ep.probeErr = true, nil
	c.mu.Unlock()
	c.answered()
	return ""
}

// Apply builds a deployment with s over the current one, checks it as the
// start does, probes it and hands it to the session.
func (c *consoleEndpoint) Apply(ctx context.Context, s tui.EndpointSettings) (string, error) {
	c.mu.Lock()
	d := *c.d
	c.mu.Unlock()
	d.SetBy = maps.Clone(d.SetBy)
	const origin = "the console's settings"
	kind := strings.TrimSpace(s.Provider)
	switch kind {
	case "":
		kind = "openai"
	case "openai", "openai-responses", "anthropic":
	default:
		return "", fmt.Errorf("provider %q is not one of openai, openai-responses, anthropic", kind)
	}
	if kind != d.Model.Provider || s.BaseURL != d.Model.APIBase {
		// Another server: its window is its own to report.
		d.Model.ContextWindow = 0
		delete(d.SetBy, "model.contextWindow")
	}
	d.Model.Provider, d.Model.APIBase, d.Model.Name = kind, strings.TrimSpace(s.BaseURL), strings.TrimSpace(s.Model)
	for _, p := range []string{"model.provider", "model.apiBase", "model.name"} {
		d.SetOrigin(p, origin)
	}
	if kind == "anthropic" && d.Model.APIBase == "" {
		d.Model.APIBase = "https://api.anthropic.com"
	}
	key := c.keys.forProvider(kind)
	if err := checkEndpoint(&d, key, ""); err != nil {
		return "", withoutExit(err)
	}
	ep, err := openEndpoint(ctx, &d, key, "")
	if err != nil {
		return "", withoutExit(err)
	}
	if err := c.sess.Reconfigure(runner.Endpoint{Deployment: &d, Provider: ep.provider, Answered: ep.answered, Probe: ep.probeErr}); err != nil {
		if errors.Is(err, runner.ErrRunInProgress) {
			return "", errors.New("a run is live: its endpoint cannot change until it ends")
		}
		return "", err
	}
	c.mu.Lock()
	c.d, c.ep = &d, ep
	c.mu.Unlock()
	if ep.probeErr != nil {
		return capitalize(ep.explain(nil).Explain()), nil
	}
	c.answered()
	return "", nil
}

// capitalize starts a message with a capital letter, for a dialog.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// withoutExit is err without the exit status it carries for the CLI.
func withoutExit(err error) error {
	var ce *exitCodeError
	if errors.As(err, &ce) && ce.err != nil {
		return ce.err
	}
	return err
}

// noteCollector passes the start-up's note lines to w and keeps them, so
// the console can show them once it covers the terminal.
type noteCollector struct {
	w     io.Writer
	mu    sync.Mutex
	lines []string
	part  string
}

func (n *noteCollector) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	text := n.part + string(p)
	lines := strings.Split(text, "\n")
	n.part = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		if l = strings.TrimSpace(strings.TrimPrefix(l, "note:")); l != "" {
			n.lines = append(n.lines, l)
		}
	}
	return n.w.Write(p)
}

// note records one note and prints it as "note: …".
func (n *noteCollector) note(text string) {
	fmt.Fprintln(n, "note:", render.SanitizeLine(text))
}

// notes are the lines so far.
func (n *noteCollector) notes() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.lines...)
}
