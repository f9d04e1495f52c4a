package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestRefusalNote(t *testing.T) {
	off, _ := NewPolicy(Config{})
	list, _ := NewPolicy(Config{Network: "allowlist", Allow: []string{"pypi"}})
	cases := []struct {
		name    string
		p       Policy
		code    int
		output  string
		refused []string
		want    string // "" for no note
	}{
		{"go, network off", off, 1, `example.com/m@v1.0.0: Get "https://proxy.golang.org/example.com/m/@v/v1.0.0.mod": dial tcp: lookup proxy.golang.org on [::1]:53: dial udp [::1]:53: connect: network is unreachable`, nil,
			`guildhall: network off: proxy.golang.org was refused; allow with "network": "allowlist" and sandbox.allow ["go"] in the operator's deployment.json`},
		{"npm and pip", off, 1, "npm ERR! request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org\n" +
			"HTTPSConnectionPool(host='pypi.org', port=443)", nil,
			`guildhall: network off: registry.npmjs.org and pypi.org were refused; allow with "network": "allowlist" and sandbox.allow ["npm", "pypi"]`},
		{"curl, a host of no preset", off, 6, "curl: (6) Could not resolve host: example.com", nil,
			`example.com was refused; allow with "network": "allowlist" and sandbox.allow ["example.com"]`},
		{"no host named", off, 1, "socket.gaierror: [Errno -3] Temporary failure in name resolution", nil,
			`guildhall: network off: the command's connection was refused (the sandbox has no network)`},
		{"success says nothing", off, 0, "lookup proxy.golang.org on [::1]:53: no such host", nil, ""},
		{"an unrelated failure says nothing", off, 1, "--- FAIL: TestX\nexpected 2, got 3", nil, ""},
		{"a local address is not a registry", off, 1, "failed to connect to http://127.0.0.1:8080/x", nil, ""},
		{"a planted host cannot carry escapes", off, 1, "Could not resolve host: evil\x1b]0;pwn\x07.com", nil, ""},
		{"the allowlist's proxy refused", list, 56, "curl: (56) CONNECT tunnel failed, response 403", []string{"proxy.golang.org", "sum.golang.org"},
			`guildhall: network allowlist: proxy.golang.org and sum.golang.org were refused (not on sandbox.allow); allow with sandbox.allow ["go"] in the operator's deployment.json`},
		{"many hosts", list, 1, "", []string{"a.example", "b.example", "c.example", "d.example", "e.example"},
			`a.example, b.example, c.example and 2 more were refused`},
		{"a refused name that is no host", list, 1, "", []string{"bad\x1b[31m"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := refusalNote(c.p, c.code, c.output, c.refused)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("note %q, want one containing %q", got, c.want)
			}
			if strings.ContainsAny(got, "\x1b\x07\n") {
				t.Errorf("the note carries control characters: %q", got)
			}
		})
	}
}

// A sandboxed download with the network off fails, and its result says
// which registry was refused and how to allow it.
func TestRefusedDownloadSaysHowToAllowIt(t *testing.T) {
	needBwrap(t)
	sb, ws := openSandbox(t, Config{})
	res, err := sb.Run(context.Background(), Script{Dir: ws, Command: "curl -sS -m 5 https://registry.npmjs.org/left-pad",
		Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second, MaxChars: 8192})
	if err != nil {
		t.Fatal(err)
	}
	want := `guildhall: network off: registry.npmjs.org was refused; allow with "network": "allowlist" and sandbox.allow ["npm"] in the operator's deployment.json`
	if res.ExitCode == 0 || !strings.HasSuffix(res.Stderr, want+"\n") {
		t.Errorf("exit %d, stderr:\n%s", res.ExitCode, res.Stderr)
	}
}

// With the allowlist on, the proxy's refusals during the call are what
// the note names.
func TestProxyRefusalSaysHowToAllowIt(t *testing.T) {
	needBwrap(t)
	sb, ws := openSandbox(t, Config{Network: "allowlist", Allow: []string{"pypi"}})
	res, err := sb.Run(context.Background(), Script{Dir: ws, Command: "curl -sS -m 5 https://proxy.golang.org/example.com/@v/list",
		Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second, MaxChars: 8192})
	if err != nil {
		t.Fatal(err)
	}
	want := `guildhall: network allowlist: proxy.golang.org was refused (not on sandbox.allow); allow with sandbox.allow ["go"] in the operator's deployment.json`
	if res.ExitCode == 0 || !strings.HasSuffix(res.Stderr, want+"\n") {
		t.Errorf("exit %d, stderr:\n%s", res.ExitCode, res.Stderr)
	}
	// The next call starts with no refusals of its own.
	res, _ = sb.Run(context.Background(), Script{Dir: ws, Command: "exit 3", Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second, MaxChars: 8192})
	if strings.Contains(res.Stderr, "refused") {
		t.Errorf("a refusal of the previous call was reported again: %s", res.Stderr)
	}
}
