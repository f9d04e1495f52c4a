package mcp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/tools/sandbox"
)

func TestCheck(t *testing.T) {
	builtins := map[string]bool{"read_file": true}
	cases := []struct {
		name string
		cfg  Config
		want string // "" for valid; else a fragment of the only problem
		path string
	}{
		{"fs", Config{Command: "mcp-server-filesystem", Args: []string{"/w"}}, "", ""},
		{"gh", Config{URL: "https://api.example/mcp", Headers: map[string]string{"Authorization": "Bearer x"}}, "", ""},
		{"typed", Config{Type: "stdio", Command: "x"}, "", ""},
		{"1fs", Config{Command: "x"}, "start with a letter", ""},
		{"f.s", Config{Command: "x"}, "start with a letter", ""},
		{"my__srv", Config{Command: "x"}, `holds "__"`, ""},
		{strings.Repeat("a", 33), Config{Command: "x"}, "longer than 32", ""},
		{"read_file", Config{Command: "x"}, "name of a built-in tool", ""},
		{"sse", Config{Type: "sse", URL: "https://x/sse"}, "deprecated HTTP+SSE", "[type]"},
		{"what", Config{Type: "websocket", Command: "x"}, `"websocket" is not one of stdio, http`, "[type]"},
		{"both", Config{Command: "x", URL: "https://x"}, "has both command and url", ""},
		{"none", Config{}, "has no command", ""},
		{"nourl", Config{Type: "http"}, "but no url", ""},
		{"ftp", Config{URL: "ftp://x/"}, "must be an http:// or https:// URL", "[url]"},
		{"creds", Config{URL: "https://u:p@x/"}, "carries a user name or password", "[url]"},
		{"frag", Config{URL: "https://x/#f"}, "fragment", "[url]"},
		{"hdrs", Config{Command: "x", Headers: map[string]string{"A": "b"}}, "headers are for HTTP servers", "[headers]"},
		{"env", Config{URL: "https://x/", Env: map[string]string{"A": "b"}}, "args and env are for stdio servers", "[args]"},
		{"sbx", Config{URL: "https://x/", Sandbox: sandbox.Config{Network: "allowlist"}}, "sandbox applies to stdio servers", "[sandbox]"},
		{"badenv", Config{Command: "x", Env: map[string]string{"A-B": "1"}}, `env key "A-B"`, "[env A-B]"},
		{"badhdr", Config{URL: "https://x/", Headers: map[string]string{"A B": "1"}}, `headers key "A B"`, "[headers A B]"},
		{"crlf", Config{URL: "https://x/", Headers: map[string]string{"X-A": "1\r\nEvil: 2"}}, "line break", "[headers X-A]"},
		{"sess", Config{URL: "https://x/", Headers: map[string]string{"mcp-session-id": "1"}}, "set by the client itself", "[headers mcp-session-id]"},
		{"mode", Config{Command: "x", Sandbox: sandbox.Config{Mode: "open"}}, `sandbox.mode "open"`, "[sandbox mode]"},
		{"net", Config{Command: "x", Sandbox: sandbox.Config{Network: "on"}}, `sandbox.network "on"`, "[sandbox network]"},
		{"allow", Config{Command: "x", Sandbox: sandbox.Config{Allow: []string{"pypi.org"}}}, "the server's network is off", "[sandbox allow]"},
		{"pat", Config{Command: "x", Sandbox: sandbox.Config{Network: "allowlist", Allow: []string{"ok.example", "*"}}}, `sandbox.allow[1] "*"`, "[sandbox allow 1]"},
		{"wr", Config{Command: "x", Sandbox: sandbox.Config{Writable: []string{"relative"}}}, "must be absolute", "[sandbox writable 0]"},
		{"slow", Config{Command: "x", StartTimeoutSeconds: 601}, "from 1 to 600", "[startTimeoutSeconds]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := Check(tc.name, tc.cfg, builtins)
			if tc.want == "" {
				if len(ps) != 0 {
					t.Fatalf("problems %+v", ps)
				}
				return
			}
			if len(ps) != 1 || !strings.Contains(ps[0].Msg, tc.want) {
				t.Fatalf("problems %+v, want one with %q", ps, tc.want)
			}
			if tc.path != "" && fmt.Sprint(ps[0].Path) != tc.path {
				t.Errorf("path %v, want %s", ps[0].Path, tc.path)
			}
		})
	}
}

// Summaries name env and header variables but never show their values,
// nor a URL's credentials or query.
func TestSummaryHidesSecrets(t *testing.T) {
	stdio := Config{Command: "gh-server", Args: []string{"stdio"}, Env: map[string]string{"GITHUB_TOKEN": "ghp_secretvalue123", "B": "other-secret-value"},
		Sandbox: sandbox.Config{Network: "allowlist", Allow: []string{"api.github.com"}}}
	got := stdio.Summary(sandbox.WorkspaceWrite)
	if got != "stdio gh-server stdio (sandbox workspace-write, network allowlist api.github.com), env B, GITHUB_TOKEN (values hidden)" {
		t.Errorf("stdio summary %q", got)
	}
	if got := stdio.Summary(sandbox.None); !strings.Contains(got, "unconfined: no sandbox") {
		t.Errorf("--sandbox none summary %q", got)
	}
	web := Config{URL: "https://user:pw@api.example/mcp?token=query-secret-42#x", Headers: map[string]string{"Authorization": "Bearer tok-secret-987"}}
	got = web.Summary(sandbox.WorkspaceWrite)
	if got != "streamable HTTP https://api.example/mcp, headers Authorization (values hidden)" {
		t.Errorf("http summary %q", got)
	}
	secrets := strings.Join(append(stdio.Secrets(), web.Secrets()...), " ")
	for _, want := range []string{"ghp_secretvalue123", "other-secret-value", "Bearer tok-secret-987", "tok-secret-987", "query-secret-42"} {
		if !strings.Contains(secrets, want) {
			t.Errorf("secrets lack %q", want)
		}
	}
}

func TestModeFollowsTheRun(t *testing.T) {
	c := Config{Command: "x"}
	if c.Mode(sandbox.ReadOnly) != sandbox.ReadOnly || c.Mode("") != sandbox.WorkspaceWrite {
		t.Error("an unset mode must follow the run's")
	}
	c.Sandbox.Mode = "read-only"
	if c.Mode(sandbox.WorkspaceWrite) != sandbox.ReadOnly {
		t.Error("the server's own mode must win")
	}
	if c.Mode(sandbox.None) != sandbox.None {
		t.Error("--sandbox none must leave every server unconfined")
	}
}
