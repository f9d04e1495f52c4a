package runner

import (
	"net/url"
	"strings"
)

// ModelInfo is what a console shows about the model the session's runs
// use: its name, the endpoint's host (never the URL's path, query or user
// information, which may carry a credential, and never the key), the
// context window the deployment gives (probed from the server at start
// when the deployment left it unset) and the prices, when the deployment
// names them.
type ModelInfo struct {
	Name          string
	Provider      string
	Host          string
	ContextWindow int
	Price         *ModelPrice
	// Prices are the deployment's named models' prices, by name (a model
	// per role); a named model without one is absent.
	Prices map[string]*ModelPrice
}

// ModelInfo describes the session's model for a console.
func (s *Session) ModelInfo() ModelInfo {
	// Reconfigure (the console's endpoint settings) replaces it.
	s.mu.Lock()
	d := s.cfg.Deployment
	s.mu.Unlock()
	if d == nil {
		return ModelInfo{}
	}
	mi := ModelInfo{Name: d.Model.Name, Provider: d.Model.Provider, ContextWindow: d.Model.ContextWindow}
	if p := d.Model.Price; p != nil {
		v := *p
		mi.Price = &v
	}
	mi.Host = endpointHost(d.Model.Provider, d.Model.APIBase)
	for name, m := range d.Models {
		if m.Price != nil {
			if mi.Prices == nil {
				mi.Prices = map[string]*ModelPrice{}
			}
			v := *m.Price
			mi.Prices[name] = &v
		}
	}
	return mi
}

// endpointHost is the host (and port) of an API base, with the provider's
// default when the base is empty; "" for the offline script provider or a
// base that is not a URL.
func endpointHost(provider, base string) string {
	base = strings.TrimSpace(base)
	switch {
	case provider == "script":
		return ""
	case base == "" && provider == "anthropic":
		return "api.anthropic.com"
	case base == "":
		return "api.openai.com"
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Host
}
