package mcp

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/mcptest"
	"github.com/guildhall/guildhall/internal/sandboxtest"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// benchFixture is newFixture for a benchmark.
func benchFixture(b *testing.B, mode sandbox.Mode) *fixture {
	b.Helper()
	if mode != sandbox.None {
		sandboxtest.Need(b)
	}
	ws := b.TempDir()
	p, _ := sandbox.NewPolicy(sandbox.Config{Mode: string(mode)})
	sb, err := sandbox.NewHost().Open(sandbox.Options{Policy: p, Workspace: ws})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sb.Close() })
	return &fixture{ws: ws, bin: mcptest.Binary(b, ws), sb: sb}
}

// BenchmarkStart is a stdio server's start as a run's first use of it
// costs: the sandbox, the process, the handshake and the tool list (300
// tools listed, 200 kept, as a large server such as GitHub's offers).
func BenchmarkStart(b *testing.B) {
	for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.None} {
		b.Run(string(mode), func(b *testing.B) {
			f := benchFixture(b, mode)
			cfg := map[string]Config{"t": {Command: f.bin, Args: []string{"-mode", mcptest.ModeMany}}}
			for b.Loop() {
				m := New(Options{Servers: cfg, Sandbox: f.sb, Env: []string{"PATH=/usr/bin:/bin"}})
				if _, err := m.Tools(context.Background(), "t"); err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
		})
	}
}

// BenchmarkCall is one tools/call round trip with its framing, on a
// running server: stdio in the sandbox, and streamable HTTP on loopback.
func BenchmarkCall(b *testing.B) {
	f := benchFixture(b, sandbox.WorkspaceWrite)
	srv := httptest.NewServer(mcptest.Handler(mcptest.ModeTools))
	defer srv.Close()
	m := New(Options{Servers: map[string]Config{"stdio": {Command: f.bin}, "http": {URL: srv.URL}}, Sandbox: f.sb, Env: []string{"PATH=/usr/bin:/bin"}})
	defer m.Close()
	for _, name := range []string{"stdio", "http"} {
		b.Run(name, func(b *testing.B) {
			a := args(map[string]string{"text": "hello"})
			if r := m.Call(context.Background(), name, "echo", a, 10*time.Second); r.Failed() {
				b.Fatal(r.Message)
			}
			for b.Loop() {
				if r := m.Call(context.Background(), name, "echo", a, 10*time.Second); r.Failed() {
					b.Fatal(r.Message)
				}
			}
		})
	}
}
