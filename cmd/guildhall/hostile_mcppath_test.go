package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/mcptest"
)

// The operator's PATH starts with ./node_modules/.bin, and the operator
// runs an MCP server unconfined (mode none) by name. A sandboxed command
// planted a program of that name in the workspace's node_modules/.bin. On
// the real binary the operator's own program starts, never the planted
// one; and a server whose command names a workspace program is refused.
func TestHostileUnconfinedServerSkipsRelativePath(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("mcppath")
	bin := filepath.Join(h.root, "bin")
	mkdirs(t, bin)
	if err := os.Rename(mcptest.Binary(t, bin), filepath.Join(bin, "mcpsrv")); err != nil {
		t.Fatal(err)
	}
	h.write(filepath.Join(ws, "node_modules", ".bin", "mcpsrv"), "#!/bin/sh\ntouch "+h.marker+"\n", 0o755)
	h.write(filepath.Join(h.home, ".config", "guildhall", "deployment.json"), `{"mcpServers": {
		"t": {"command": "mcpsrv", "sandbox": {"mode": "none"}},
		"u": {"command": "node_modules/.bin/mcpsrv", "sandbox": {"mode": "none"}}}}`, 0o600)
	guild := h.roleGuild(filepath.Join(h.root, "guild"), "solo", "[role:solo] Use the tools.", "t.probe", "u.*", "finish")
	h.snapshot()
	res := h.runEnv(ws, 90*time.Second, []string{"PATH=./node_modules/.bin::" + bin + ":" + os.Getenv("PATH")},
		"check", "--probe", "--workspace", ws, "--guild", guild)
	out := res.stdout + res.stderr
	if !strings.Contains(out, "mcp server t: ok") {
		t.Errorf("the operator's server did not start:\n%s", res)
	}
	if !strings.Contains(out, "mcp server u: ") || !strings.Contains(out, "inside the workspace") {
		t.Errorf("a server running a workspace program unconfined was not refused:\n%s", res)
	}
	h.assertSafe()
}
