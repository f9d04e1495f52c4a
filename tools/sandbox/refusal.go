package sandbox

// The one line a failed command's result gets when it failed on a refused
// connection: what was refused and how the operator allows it. Without it
// a build that needs a download fails with a resolver error that says
// nothing of the sandbox, and the model retries it or gives up. With the
// network off there is no proxy to ask, so the hosts are read from the
// command's own output, as the common clients word a failed lookup; with
// the allowlist on they are the proxy's refusals during the call. A host
// is named only when it is a valid host name: the output is the
// workspace's, and the line must not carry what it wrote.

import (
	"fmt"
	"net"
	"regexp"
	"sort"
	"strings"

	"github.com/guildhall/guildhall/tools/egress"
)

// maxRefusedHosts bounds the hosts one note names.
const maxRefusedHosts = 3

// lookupFailures match a failed connection in a client's words; the
// first group, when there is one, is the host.
var lookupFailures = []*regexp.Regexp{
	regexp.MustCompile(`\blookup ([A-Za-z0-9.-]+)(?: on \S+)?: `),                                  // Go
	regexp.MustCompile(`Could not resolve host:? ([A-Za-z0-9.-]+)`),                                // curl, git, cargo
	regexp.MustCompile(`getaddrinfo (?:EAI_AGAIN|ENOTFOUND) ([A-Za-z0-9.-]+)`),                     // npm, node
	regexp.MustCompile(`HTTPSConnectionPool\(host='([A-Za-z0-9.-]+)'`),                             // pip, requests
	regexp.MustCompile(`Failed to resolve '([A-Za-z0-9.-]+)'`),                                     // urllib3 2
	regexp.MustCompile(`Unknown ?host:? ([A-Za-z0-9.-]+)`),                                         // Java, Maven
	regexp.MustCompile(`(?i)failed to (?:fetch|download|connect to) .*?https?://([A-Za-z0-9.-]+)`), // uv, cargo
	regexp.MustCompile(`(?i)(?:network is unreachable|temporary failure in name resolution|name or service not known|no address associated with hostname)`),
}

// refusalNote is the note for a command that exited with code after
// printing output, under policy p, with the proxy's refused hosts of the
// call; "" when the failure was not a refused connection.
func refusalNote(p Policy, code int, output string, proxyRefused []string) string {
	if code == 0 {
		return ""
	}
	var hosts []string
	for _, h := range proxyRefused {
		if validHost(h) || net.ParseIP(strings.Trim(h, "[]")) != nil {
			hosts = append(hosts, strings.ToLower(h))
		}
	}
	seen := false
	if p.Network() == NetworkOff {
		hosts = nil
		for _, re := range lookupFailures {
			for _, m := range re.FindAllStringSubmatch(output, 8) {
				switch {
				case re.NumSubexp() == 0:
					seen = true
				case validHost(m[1]) && !strings.EqualFold(m[1], "localhost"):
					hosts = append(hosts, strings.ToLower(strings.TrimSuffix(m[1], ".")))
				}
			}
		}
	}
	hosts = dedupe(hosts)
	if len(hosts) == 0 && !seen {
		return ""
	}
	allow := allowWords(hosts)
	if p.Network() == NetworkOff {
		if len(hosts) == 0 {
			return `guildhall: network off: the command's connection was refused (the sandbox has no network); the operator allows hosts with "network": "allowlist" and sandbox.allow [...] in their deployment.json`
		}
		return "guildhall: network off: " + refusedWords(hosts) + `; allow with "network": "allowlist" and sandbox.allow ` + allow + " in the operator's deployment.json"
	}
	return "guildhall: network allowlist: " + refusedWords(hosts) + " (not on sandbox.allow); allow with sandbox.allow " + allow + " in the operator's deployment.json"
}

// refusedWords names the hosts: "a was refused", "a and b were refused",
// "a, b, c and 2 more were refused".
func refusedWords(hosts []string) string {
	shown := hosts
	more := 0
	if len(shown) > maxRefusedHosts {
		shown, more = hosts[:maxRefusedHosts], len(hosts)-maxRefusedHosts
	}
	s := strings.Join(shown, ", ")
	switch {
	case more > 0:
		s += fmt.Sprintf(" and %d more", more)
	case len(shown) > 1:
		s = strings.Join(shown[:len(shown)-1], ", ") + " and " + shown[len(shown)-1]
	}
	if len(hosts) == 1 {
		return s + " was refused"
	}
	return s + " were refused"
}

// allowWords is the sandbox.allow value that allows hosts: a registry's
// preset name for its hosts, the host itself otherwise, as JSON.
func allowWords(hosts []string) string {
	var words []string
	for i, h := range hosts {
		if i == maxRefusedHosts {
			break
		}
		words = append(words, presetOf(h))
	}
	words = dedupe(words)
	if len(words) == 0 {
		words = []string{"HOST"}
	}
	return `["` + strings.Join(words, `", "`) + `"]`
}

// presetOf is the name of the preset that holds host, or host.
func presetOf(host string) string {
	names := make([]string, 0, len(egress.Presets))
	for n := range egress.Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, h := range egress.Presets[n] {
			if h == host {
				return n
			}
		}
	}
	return host
}

// validHost reports whether h is a host name an allowlist could name (not
// an address: an address in a failure is as often a local server's).
func validHost(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if len(h) == 0 || len(h) > 253 || !strings.Contains(h, ".") || net.ParseIP(h) != nil {
		return false
	}
	_, err := egress.ParsePolicy([]string{h})
	return err == nil
}

// appendLine adds line to text as a line of its own.
func appendLine(text, line string) string {
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + line + "\n"
}
