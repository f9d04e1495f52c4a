package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/tools/sandbox"
)

// writeAll writes files (name → content) under dir, making folders.
func writeAll(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		writeTestFile(t, filepath.Join(dir, name), content)
	}
}

// writeTestFile writes content to p, making its folders.
func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newWS creates a workspace directory with the given files and opens it.
func newWS(t *testing.T, files map[string]string) (*Workspace, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeAll(t, dir, files)
	ws, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, ws.canon
}

// testEnv is a tool environment with the sandbox off (mode none): the
// tools' own behaviour, unconfined. sandbox_test.go runs the same tools
// confined.
func testEnv(ws *Workspace) *Env {
	return &Env{
		Workspace:      ws,
		RunID:          "run-20250101-120000",
		RunsDir:        filepath.Join(ws.Dir(), ".orchestration", "runs"),
		TimeoutCeiling: 20 * time.Second,
		Sandbox:        unconfined(),
	}
}

// unconfined is a mode-none sandbox.
func unconfined() *sandbox.Sandbox {
	p, err := sandbox.NewPolicy(sandbox.Config{Mode: "none"})
	if err != nil {
		panic(err)
	}
	sb, err := sandbox.NewHost().Open(sandbox.Options{Policy: p})
	if err != nil {
		panic(err)
	}
	return sb
}

// call runs a built-in tool with args given as a Go value.
func call(t *testing.T, env *Env, name string, args any) Result {
	t.Helper()
	tool, ok := Builtins()[name]
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Call(context.Background(), env, b)
}

func resultJSON(t *testing.T, r Result) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// data decodes a successful result's data into a map.
func data(t *testing.T, r Result) map[string]any {
	t.Helper()
	if r.Failed() {
		t.Fatalf("unexpected failure: %s: %s", r.Kind, r.Message)
	}
	return asJSON(t, r.Data)
}

// asJSON is v as a reader of its JSON sees it: the object it encodes to.
func asJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func contains(s string, subs ...string) string {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return sub
		}
	}
	return ""
}
