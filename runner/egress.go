package runner

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/mcp"
	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/tools/egress"
)

// secretsDir is where Docker mounts secrets.
const secretsDir = "/run/secrets"

// EgressPolicy is the hosts the run may reach: sandbox.allow when
// sandbox.network is "allowlist", otherwise nothing. A policy that does not
// parse (a Deployment built in code, not loaded) allows nothing either.
func (d *Deployment) EgressPolicy() egress.Policy {
	if d.Sandbox.Network != "allowlist" {
		return egress.Policy{}
	}
	p, err := egress.ParsePolicy(d.Sandbox.Allow)
	if err != nil {
		return egress.Policy{}
	}
	return p
}

// offsetOf is n's offset, or the file's start when the node is missing.
func offsetOf(n *jnode) int64 {
	if n == nil {
		return 0
	}
	return n.offset
}

// checkWebSearch validates the webSearch section.
func checkWebSearch(c *checker, root *jnode, d *Deployment) {
	ws := root.field("webSearch")
	w := d.WebSearch
	switch w.Provider {
	case "":
		if w.Endpoint != "" {
			c.errorf(offsetOf(ws.field("endpoint")), "webSearch.endpoint is set without webSearch.provider; set \"provider\": \"searxng\"")
		}
	case "searxng":
		if w.Endpoint == "" {
			c.errorf(offsetOf(ws), "webSearch.provider \"searxng\" needs webSearch.endpoint, the instance's base URL, e.g. \"http://127.0.0.1:8888\"")
		} else if msg := endpointProblem(w.Endpoint); msg != "" {
			c.errorf(offsetOf(ws.field("endpoint")), "webSearch.endpoint %q %s", w.Endpoint, msg)
		}
	case "kagi":
		if w.Endpoint != "" {
			c.errorf(offsetOf(ws.field("endpoint")), "webSearch.endpoint cannot be set for Kagi: the Kagi key is sent to %s only, whatever a file says; remove the endpoint", tools.KagiSearchURL)
		}
	default:
		c.errorf(offsetOf(ws.field("provider")), "webSearch.provider %q is not one of searxng, kagi", w.Provider)
	}
}

// endpointProblem says what is wrong with a search endpoint URL, or "".
func endpointProblem(raw string) string {
	u, msg := mcp.ParseHTTPURL(raw)
	switch {
	case msg != "":
		return msg
	case u.User != nil:
		// Not mcp's wording: a search endpoint has no headers to hold them.
		return "carries a user name or password; credentials never go in a file"
	case u.RawQuery != "" || u.Fragment != "":
		return "must be the instance's base URL, without a query or fragment (web_search adds /search?q=…&format=json)"
	}
	return ""
}

// webSearchConfig is web_search's configuration for a run: the deployment's
// webSearch section and, for Kagi, the key from the environment (the
// original's ORCHESTRATOR_KAGI_API_KEY, then KAGI_API_KEY) or the Docker
// secrets (kagi_api_key, orchestrator_kagi_api_key). It is read once, when
// the run starts.
func webSearchConfig(d *Deployment, getenv func(string) string, secrets string) tools.WebSearchConfig {
	cfg := tools.WebSearchConfig{Provider: d.WebSearch.Provider, Endpoint: d.WebSearch.Endpoint}
	if cfg.Provider != "kagi" {
		return cfg
	}
	names := tools.KagiKeyEnv()
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			cfg.Key = v
			return cfg
		}
	}
	for _, n := range []string{"kagi_api_key", strings.ToLower(names[0])} {
		if b, err := os.ReadFile(filepath.Join(secrets, n)); err == nil && strings.TrimSpace(string(b)) != "" {
			cfg.Key = strings.TrimSpace(string(b))
			return cfg
		}
	}
	return cfg
}

// egressReporter turns a web tool's egress decisions into egress events
// attributed to the calling role.
func (r *Run) egressReporter(f *Frame) func(egress.Decision) {
	return func(d egress.Decision) { r.emitEgress(d, f.Role, f.RoleID) }
}

// emitEgress logs one egress decision (of the sandbox's proxy, an MCP
// server's sandbox or a web tool), attributed to the role whose call made
// it.
func (r *Run) emitEgress(d egress.Decision, role, roleID string) {
	r.emit(event.Egress, event.EgressPayload{
		Host: d.Host, Port: d.Port, Allowed: d.Allowed, Rule: d.Rule, Via: d.Via, Reason: d.Reason, Role: role, RoleID: roleID,
	})
}
