package runner

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDeploymentSandboxValidation(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	cache := filepath.Join(home, ".cache", "go-build")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []badDeployment{
		{"bad mode", "{\"sandbox\": {\n  \"mode\": \"full\"}}", []string{"d.json:2:11", `sandbox.mode "full" is not one of workspace-write (the default), read-only, none`}},
		{"empty mode", `{"sandbox": {"mode": ""}}`, []string{`sandbox.mode "" is not one of`}},
		{"bad network", `{"sandbox": {"network": "on"}}`, []string{`sandbox.network "on" is not one of off (the default), allowlist`}},
		{"hosts without the allowlist", `{"sandbox": {"allow": ["pypi.org"]}}`, []string{`sandbox.allow lists hosts, but sandbox.network is "off"`}},
		{"bad pattern", "{\"sandbox\": {\"network\": \"allowlist\", \"allow\": [\"pypi.org\",\n    \"*\"]}}", []string{"d.json:2:5", `sandbox.allow[1] "*": allowing every host turns the allowlist off`}},
		{"url pattern", `{"sandbox": {"allow": ["https://proxy.golang.org"]}}`, []string{`sandbox.allow[0] "https://proxy.golang.org"`, "not a URL"}},
		{"relative writable", `{"sandbox": {"writable": ["cache"]}}`, []string{`sandbox.writable[0] "cache": a writable path must be absolute`}},
		{"missing writable", `{"sandbox": {"writable": ["/nonexistent-guildhall"]}}`, []string{"does not exist"}},
		{"home writable", `{"sandbox": {"writable": ["` + home + `"]}}`, []string{"your home folder"}},
		{"relative read-only path", "{\"sandbox\": {\"readOnly\": [\n  \"opt\"]}}", []string{"d.json:2:3", `sandbox.readOnly[0] "opt": a read-only path must be absolute`}},
		{"home shown", `{"sandbox": {"readOnly": ["` + home + `"]}}`, []string{`sandbox.readOnly[0]`, "would show your home folder"}},
		{"unknown key", `{"sandbox": {"writeable": []}}`, []string{`unknown key "writeable"`}},
		{"negative limit", "{\"sandbox\": {\"limits\":\n  {\"processes\": -5}}}", []string{"d.json:2:3", "sandbox.limits.processes -5 must be a positive number (0 or absent for the default, 1024)"}},
		{"unknown limit", `{"sandbox": {"limits": {"memory": 5}}}`, []string{`unknown key "memory"`}},
		{"wrong type", `{"sandbox": {"allow": "pypi.org"}}`, []string{"must be a []string"}},
	}
	checkBadDeployments(t, cases)
	d := parseDeployment(t, `{"sandbox": {"network": "allowlist", "allow": ["proxy.golang.org", "sum.golang.org"], "writable": ["`+cache+`"]}}`)
	if d.Sandbox.Mode != "workspace-write" || d.Sandbox.Network != "allowlist" || !slices.Equal(d.Sandbox.Allow, []string{"proxy.golang.org", "sum.golang.org"}) {
		t.Errorf("sandbox %+v", d.Sandbox)
	}
	if d := DefaultDeployment(); d.Sandbox.Mode != "workspace-write" || d.Sandbox.Network != "off" {
		t.Errorf("default sandbox %+v", d.Sandbox)
	}
}

// With the sandbox off, the allowlist still governs the web tools.
func TestAllowlistWithoutASandboxGovernsTheWebTools(t *testing.T) {
	d := parseDeployment(t, `{"sandbox": {"mode": "none", "network": "allowlist", "allow": ["docs.python.org"]}}`)
	p := d.EgressPolicy()
	if ok, _ := p.Allows("docs.python.org", 443); !ok {
		t.Error("the web tools lost the allowlist with the sandbox off")
	}
	if ok, _ := p.Allows("evil.example", 443); ok {
		t.Error("the web tools reach a host off the list")
	}
}
