package foundry

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGateMCPWeakenings: MCP tools and servers are weakenings like any
// other write or command tool and any looser sandbox. A read-only role
// granted a server's tools can now do whatever the server does; a server
// that runs unconfined, writes more or reaches further than before
// loosens isolation. Each is reported with a stable id; a server as
// confined as the run's commands, or one that was removed, is not.
func TestGateMCPWeakenings(t *testing.T) {
	const oldDep = `{"sandbox": {"mode": "workspace-write", "network": "allowlist", "allow": ["proxy.golang.org"]},
	  "mcpServers": {"docs": {"command": "/usr/bin/docs-mcp", "args": ["--stdio"], "sandbox": {"mode": "read-only"}},
	                 "legacy": {"command": "/usr/bin/legacy-mcp", "sandbox": {"mode": "none"}}}}`
	withServers := func(servers string) string {
		return `{"sandbox": {"mode": "workspace-write", "network": "allowlist", "allow": ["proxy.golang.org"]}, "mcpServers": {` + servers + `}}`
	}
	const docs = `"docs": {"command": "/usr/bin/docs-mcp", "args": ["--stdio"], "sandbox": {"mode": "read-only"}}`
	const legacy = `"legacy": {"command": "/usr/bin/legacy-mcp", "sandbox": {"mode": "none"}}`
	cases := []gateCase{
		{"a read-only role gains a server's tools", func(f map[string]string) string {
			setTools(f, "reviewer", "read_file", "docs.*", "finish")
			return oldDep
		}, []string{"read-only-gains-writes:reviewer:docs.*"}},
		{"a writing role gains one MCP tool", func(f map[string]string) string {
			setTools(f, "coder", "read_file", "write_file", "run_shell", "docs.search", "finish")
			return oldDep
		}, []string{"mcp-tool:coder:docs.search"}},
		{"a server is added unconfined", func(map[string]string) string {
			return withServers(docs + "," + legacy + `, "shell": {"command": "/usr/bin/shell-mcp", "sandbox": {"mode": "none"}}`)
		}, []string{"sandbox-loosened:mcp.shell:mode"}},
		{"a server loses its sandbox", func(map[string]string) string {
			return withServers(`"docs": {"command": "/usr/bin/docs-mcp", "args": ["--stdio"], "sandbox": {"mode": "none"}},` + legacy)
		}, []string{"sandbox-loosened:mcp.docs:mode"}},
		{"a server may write and reach more", func(map[string]string) string {
			return withServers(`"docs": {"command": "/usr/bin/docs-mcp", "args": ["--stdio"], "sandbox": {"mode": "read-only", "writable": ["/var/tmp"], "network": "allowlist", "allow": ["docs.example.com"]}},` + legacy)
		}, []string{"egress-widened:mcp.docs:allow=docs.example.com", "egress-widened:mcp.docs:network", "sandbox-loosened:mcp.docs:writable=/var/tmp"}},
		{"an unconfined server runs another program", func(map[string]string) string {
			return withServers(docs + `, "legacy": {"command": "/tmp/other", "sandbox": {"mode": "none"}}`)
		}, []string{"sandbox-loosened:mcp.legacy:command"}},
		{"a streamable HTTP server is added", func(map[string]string) string {
			return withServers(docs + "," + legacy + `, "web": {"url": "https://mcp.example.com/mcp?token=secret-in-url"}`)
		}, []string{"egress-widened:mcp.web:url"}},
		{"a confined server is added and one removed", func(map[string]string) string {
			return withServers(docs + `, "lint": {"command": "/usr/bin/lint-mcp"}`)
		}, nil},
	}
	checkGate(t, config(t, baseFiles(), oldDep), cases, "secret-in-url")
}

// TestDiffShowsMCPChanges: foundry diff names the MCP tools a role gains
// and each server added, removed or changed, with its sandbox, and never
// a secret of its configuration.
func TestDiffShowsMCPChanges(t *testing.T) {
	files := baseFiles()
	setTools(files, "reviewer", "read_file", "docs.*", "finish")
	old := config(t, baseFiles(), `{"mcpServers": {"docs": {"command": "/usr/bin/docs-mcp", "sandbox": {"mode": "read-only"}}, "gone": {"command": "/usr/bin/gone"}}}`)
	nw := config(t, files, `{"mcpServers": {"docs": {"command": "/usr/bin/docs-mcp", "sandbox": {"mode": "none"}},
	  "shell": {"command": "/usr/bin/shell-mcp", "env": {"TOKEN": "tok-SECRET-value"}, "sandbox": {"mode": "none"}}}}`)
	var out bytes.Buffer
	Compare(old, nw).WriteText(&out)
	text := out.String()
	for _, want := range []string{
		"role reviewer:", "tools added: docs.*", "! MCP tools granted: docs.*",
		"deployment mcpServers.docs: stdio /usr/bin/docs-mcp (sandbox read-only, network off) → stdio /usr/bin/docs-mcp (unconfined: no sandbox)",
		"deployment mcpServers.gone: removed",
		"deployment mcpServers.shell: added: stdio /usr/bin/shell-mcp (unconfined: no sandbox), env TOKEN (values hidden)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("diff lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "tok-SECRET-value") {
		t.Errorf("the diff shows a server's secret:\n%s", text)
	}
}

// TestAckFileIsNeverInsideTheGuild plays an operator standing in the
// candidate's folder (guildhall foundry gate seed .), and a workspace
// whose guild folder is a link to the workspace itself: the
// acknowledgement file must lie outside the folder the gate reads, so
// nothing the candidate holds can acknowledge it.
func TestAckFileIsNeverInsideTheGuild(t *testing.T) {
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	guild := filepath.Join(top, "candidate")
	if err := WriteFiles(guild, baseFiles()); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(guild, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(top, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(ws, "guild")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(guild)
	want := filepath.Join(top, "candidate.gate-ack.json")
	for _, arg := range []string{".", "./", "sub/..", guild, guild + "/"} {
		if got := ackFile(t, arg); got != want {
			t.Errorf("AckFile(%q) = %s, want %s", arg, got, want)
		}
	}
	if got := ackFile(t, filepath.Join(ws, "guild")); got != filepath.Join(top, "ws.gate-ack.json") {
		t.Errorf("AckFile of a guild linked to its workspace = %s, want it beside the workspace", got)
	}
	// A promotion's target that does not exist yet sits beside where it
	// will be made.
	if got := ackFile(t, filepath.Join(top, "new-guild")); got != filepath.Join(top, "new-guild.gate-ack.json") {
		t.Errorf("AckFile of a new folder = %s", got)
	}
	if _, err := AckFile("/"); err == nil {
		t.Error("the root folder was given an acknowledgement file")
	}
}
