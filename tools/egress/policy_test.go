package egress

import (
	"strings"
	"testing"
)

func TestParsePolicyRefusesWhatIsNotAnAllowlist(t *testing.T) {
	cases := map[string]string{
		"*":               "turns the allowlist off",
		"*:443":           "turns the allowlist off",
		"":                "no spaces",
		" pypi.org":       "no spaces",
		"pypi.org:0":      "port",
		"pypi.org:99999":  "port",
		"pypi.org:https":  "port",
		"a.*.org":         "label",
		"*.*.org":         "label",
		"evil..org":       "label",
		"-evil.org":       "label",
		"ev il.org":       "label",
		"*.127.0.0.1":     "wildcard",
		"http://pypi.org": "not a URL",
		"pypi.org/simple": "not a URL",
		"user@pypi.org":   "not a URL",
	}
	for pat, want := range cases {
		_, err := ParsePolicy([]string{"ok.example", pat})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "allow[1]") {
			t.Errorf("%q: err %v, want one naming allow[1] and %q", pat, err, want)
		}
	}
}

func TestPolicyAllows(t *testing.T) {
	p, err := ParsePolicy([]string{"proxy.golang.org", "*.npmjs.org", "pypi.org:443", "127.0.0.1:8080", "[::1]:9000", "Files.PythonHosted.org."})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		host string
		port int
		want bool
	}{
		{"proxy.golang.org", 443, true},
		{"proxy.golang.org", 80, true},
		{"PROXY.golang.org.", 443, true},
		{"evil-proxy.golang.org", 443, false},
		{"proxy.golang.org.evil.example", 443, false},
		{"registry.npmjs.org", 443, true},
		{"a.b.npmjs.org", 443, true},
		{"npmjs.org", 443, false},
		{"evilnpmjs.org", 443, false},
		{"pypi.org", 443, true},
		{"pypi.org", 80, false},
		{"127.0.0.1", 8080, true},
		{"127.0.0.1", 8081, false},
		{"127.0.0.2", 8080, false},
		{"::1", 9000, true},
		{"[0:0:0:0:0:0:0:1]", 9000, true},
		{"files.pythonhosted.org", 443, true},
		{"", 443, false},
		{"localhost", 8080, false},
	}
	for _, c := range cases {
		if got, _ := p.Allows(c.host, c.port); got != c.want {
			t.Errorf("Allows(%q, %d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
	if d := p.Decide("evil.example", 443, "proxy"); d.Allowed || d.Reason == "" || d.Via != "proxy" {
		t.Errorf("denied decision %+v", d)
	}
	if d := p.Decide("pypi.org", 443, "fetch_url"); !d.Allowed || d.Rule != "pypi.org:443" {
		t.Errorf("allowed decision %+v", d)
	}
	var zero Policy
	if ok, _ := zero.Allows("pypi.org", 443); ok || !zero.Empty() {
		t.Error("the zero policy allowed a host")
	}
}

// A preset's name allows exactly its ecosystem's registry hosts on 443,
// is listed once by its name, and counts each host.
func TestPresetsExpandToTheirRegistries(t *testing.T) {
	p, err := ParsePolicy([]string{"go", "pypi", "example.org"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		port int
		want bool
		rule string
	}{
		{"proxy.golang.org", 443, true, "go"},
		{"sum.golang.org", 443, true, "go"},
		{"proxy.golang.org", 80, false, ""},
		{"evil.proxy.golang.org", 443, false, ""},
		{"golang.org", 443, false, ""},
		{"go", 443, false, ""},
		{"files.pythonhosted.org", 443, true, "pypi"},
		{"registry.npmjs.org", 443, false, ""},
		{"example.org", 8443, true, "example.org"},
	} {
		ok, rule := p.Allows(c.host, c.port)
		if ok != c.want || rule != c.rule {
			t.Errorf("Allows(%q, %d) = %v, %q; want %v, %q", c.host, c.port, ok, rule, c.want, c.rule)
		}
	}
	if got := strings.Join(p.Patterns(), ","); got != "go,pypi,example.org" {
		t.Errorf("Patterns() = %s, want go,pypi,example.org", got)
	}
	if p.Hosts() != 5 {
		t.Errorf("Hosts() = %d, want 5", p.Hosts())
	}
	for name, hosts := range Presets {
		q, err := ParsePolicy([]string{name})
		if err != nil || q.Hosts() != len(hosts) {
			t.Errorf("preset %s: %v, %d hosts", name, err, q.Hosts())
		}
		for _, h := range hosts {
			if _, err := parseRule(h); err != nil {
				t.Errorf("preset %s host %q is not a valid host: %v", name, h, err)
			}
		}
	}
}
