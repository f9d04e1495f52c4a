package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/internal/sandboxtest"
)

// TestConsoleFirstRunSaysWhatTheSandboxShowsTheBuild: at a workspace's
// first run the console, like a headless run, says what the sandbox mounts
// for the project's toolchains; the lines printed before the screen opens
// scroll away, so the notes dialog (N) holds them.
func TestConsoleFirstRunSaysWhatTheSandboxShowsTheBuild(t *testing.T) {
	sandboxtest.Need(t)
	h := newHostile(t)
	ws := h.workspace("node-project")
	h.write(filepath.Join(ws, "package.json"), `{"name": "ws", "version": "1.0.0", "private": true}`, 0o644)
	h.write(filepath.Join(ws, "node_modules", "pad-left", "package.json"), `{"name": "pad-left", "version": "1.0.0"}`, 0o644)
	f := fakellm.New()
	defer f.Close()
	for range 4 {
		f.Queue("", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "Looked."}}}})
	}
	c := startConsolePane(t, h, ws, "--base-url", f.BaseURL(), "Look around")
	c.waitFor("Result · run-", "Looked.")
	c.keys("Escape", "N")
	screen := c.waitFor("sandbox: node (package.json)", "node_modules present")
	if strings.ContainsRune(screen, 0x1b) {
		t.Errorf("the notes carry an escape:\n%q", screen)
	}
	stderr, _ := os.ReadFile(filepath.Join(h.root, "stderr"))
	if !strings.Contains(string(stderr), "note: sandbox: node (package.json)") {
		t.Errorf("the first run's stderr lacks the toolchain note:\n%s", stderr)
	}
	c.keys("Escape", "q")
}
