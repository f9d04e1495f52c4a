// Package egress decides which network destinations a run may reach: the
// host allowlist of the sandbox's network policy, applied by the proxy that
// sandboxed commands reach the network through and by the host-side web
// tools (fetch_url, web_search). A decision is made on the host name the
// client asked for, before any name is resolved or any connection made.
package egress

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Policy is a host allowlist. The zero Policy allows nothing.
type Policy struct {
	rules []rule
}

// rule is one parsed pattern: an exact host or a "*." suffix, and a port
// (0 for any).
type rule struct {
	pattern string // as written
	host    string // lower case, no trailing dot; for a wildcard, the suffix without "*."
	wild    bool
	port    int
}

// Presets are the registries a build downloads dependencies from, one
// word for each ecosystem: a pattern that is a preset's name allows its
// hosts on port 443. Each host is one that the ecosystem's standard client
// fetches from by default: the index or proxy, and where its archives are
// stored.
var Presets = map[string][]string{
	"go":     {"proxy.golang.org", "sum.golang.org"},
	"npm":    {"registry.npmjs.org", "registry.yarnpkg.com"},
	"pypi":   {"pypi.org", "files.pythonhosted.org"},
	"crates": {"index.crates.io", "static.crates.io", "crates.io"},
	"maven":  {"repo.maven.apache.org", "repo1.maven.org", "plugins.gradle.org", "services.gradle.org"},
}

// ParsePolicy parses allowlist patterns:
//
//   - a preset's name ("go", "npm", "pypi", "crates", "maven") allows that
//     ecosystem's registry hosts (Presets) on port 443;
//   - "pypi.org" allows that host on any port;
//   - "pypi.org:443" allows it on port 443 only;
//   - "*.npmjs.org" allows every subdomain of npmjs.org (not npmjs.org
//     itself: list both when both are wanted), on any port, and
//     "*.npmjs.org:443" on one port;
//   - an IP address ("127.0.0.1:8080", "[::1]:8080") allows that address.
//
// Host names compare case-insensitively, ignoring a trailing dot. "*" alone,
// a wildcard anywhere but the first label, and empty labels are refused:
// an allowlist that allows everything is not an allowlist.
func ParsePolicy(patterns []string) (Policy, error) {
	var p Policy
	for i, pat := range patterns {
		if hosts, ok := Presets[pat]; ok {
			for _, h := range hosts {
				p.rules = append(p.rules, rule{pattern: pat, host: h, port: 443})
			}
			continue
		}
		r, err := parseRule(pat)
		if err != nil {
			return Policy{}, fmt.Errorf("allow[%d] %q: %w", i, pat, err)
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

func parseRule(pat string) (rule, error) {
	r := rule{pattern: pat}
	host := strings.TrimSpace(pat)
	if host != pat || host == "" {
		return r, fmt.Errorf("a pattern is a host name, optionally with :port, and no spaces")
	}
	if strings.Contains(host, "://") || strings.ContainsAny(host, "/@?#") {
		return r, fmt.Errorf("a pattern is a host name, optionally with :port, not a URL")
	}
	if h, port, err := net.SplitHostPort(host); err == nil {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return r, fmt.Errorf("port %q is not a number from 1 to 65535", port)
		}
		host, r.port = h, n
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	host = normalHost(host)
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.wild, host = true, rest
	}
	switch {
	case host == "*" || host == "":
		return r, fmt.Errorf("allowing every host turns the allowlist off; name the hosts")
	case net.ParseIP(host) != nil:
		if r.wild {
			return r, fmt.Errorf("a wildcard cannot apply to an IP address")
		}
	default:
		for _, label := range strings.Split(host, ".") {
			if !validLabel(label) {
				return r, fmt.Errorf("%q is not a host name label (letters, digits and '-'; '*' only as the whole first label)", label)
			}
		}
	}
	r.host = host
	return r, nil
}

func validLabel(label string) bool {
	if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
		return false
	}
	for i := 0; i < len(label); i++ {
		c := label[i]
		if !(c == '-' || c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// normalHost lower-cases a host name and drops a trailing dot, so that
// "PyPI.org." and "pypi.org" are one host.
func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// Allows reports whether host:port may be reached, and the pattern that
// allowed it.
func (p Policy) Allows(host string, port int) (bool, string) {
	h := normalHost(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if h == "" {
		return false, ""
	}
	for _, r := range p.rules {
		if r.port != 0 && r.port != port {
			continue
		}
		if r.wild {
			if strings.HasSuffix(h, "."+r.host) {
				return true, r.pattern
			}
		} else if h == r.host || sameIP(h, r.host) {
			return true, r.pattern
		}
	}
	return false, ""
}

// sameIP reports whether two strings are the same IP address written
// differently ("::1" and "0:0:0:0:0:0:0:1").
func sameIP(a, b string) bool {
	ia, ib := net.ParseIP(a), net.ParseIP(b)
	return ia != nil && ib != nil && ia.Equal(ib)
}

// Patterns returns the allowlist as written: a preset once, by its name.
func (p Policy) Patterns() []string {
	out := make([]string, 0, len(p.rules))
	for i, r := range p.rules {
		if i > 0 && r.pattern == p.rules[i-1].pattern && Presets[r.pattern] != nil {
			continue
		}
		out = append(out, r.pattern)
	}
	return out
}

// Hosts counts the hosts the policy names, a preset's each.
func (p Policy) Hosts() int { return len(p.rules) }

// Empty reports whether the policy allows nothing.
func (p Policy) Empty() bool { return len(p.rules) == 0 }

// Decision is one egress attempt and what the policy said. Via names the
// client: "proxy" (a sandboxed command), "mcp:NAME" (an MCP server's
// sandbox), "fetch_url" or "web_search".
type Decision struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule,omitempty"`
	Via     string `json:"via"`
	Reason  string `json:"reason,omitempty"`
}

// Decide applies the policy to host:port for via.
func (p Policy) Decide(host string, port int, via string) Decision {
	ok, pat := p.Allows(host, port)
	d := Decision{Host: host, Port: port, Allowed: ok, Rule: pat, Via: via}
	if !ok {
		d.Reason = "not on the sandbox's network allowlist"
	}
	return d
}
