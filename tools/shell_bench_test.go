package tools

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkShellEcho is one run_shell "echo turn" call through the tool's
// Call path: the per-call cost a role pays for a trivial command.
func BenchmarkShellEcho(b *testing.B) {
	dir := b.TempDir()
	ws, err := OpenWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	env := testEnv(ws)
	args := json.RawMessage(`{"command":"echo turn"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r := runShell{}.Call(ctx, env, args)
		if r.Failed() {
			b.Fatalf("%s: %s", r.Kind, r.Message)
		}
	}
}
