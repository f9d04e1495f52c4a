package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/store"
)

// TestResumeUsesTheGuildTheRunStartedWith starts a run with --guild, kills
// it mid-command, and resumes it without the flag: the run's own guild is
// loaded (not the seed), a console-style reconcile leaves it alone rather
// than marking it interrupted, and a changed guild file is reported.
func TestResumeUsesTheGuildTheRunStartedWith(t *testing.T) {
	bin := hostileBinary(t)
	ws := t.TempDir()
	guild := filepath.Join(t.TempDir(), "my-guild")
	copyGuild(t, absGuild(t), guild)
	script := writeScript(t, map[string][][]map[string]any{
		"orchestrator": {
			{{"name": "agent", "args": map[string]any{"role": "coder", "task": "wait, then write"}}},
			finishTurn("success", "all done"),
		},
		"coder": {
			{{"name": "run_shell", "args": map[string]any{"command": "if [ -e started ]; then exit 0; fi; touch started; sleep 30"}}},
			{{"name": "write_file", "args": map[string]any{"path": "out.txt", "content": "ok"}}},
			finishTurn("success", "wrote it"),
		},
	})
	killOnceStarted(t, ws, bin, "run", "--workspace", ws, "--guild", guild, "--provider", "script", "--script", script, "--no-input", "Do it")
	w, err := recordsOf(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := w.ListRunIDs()
	if len(ids) != 1 {
		t.Fatalf("runs: %v", ids)
	}
	m, err := w.ReadMeta(ids[0])
	if err != nil || m.GuildPath != guild || !strings.HasPrefix(m.GuildHash, "sha256:") || m.Provider != "script" {
		t.Fatalf("meta records guild %q hash %q provider %q (%v)", m.GuildPath, m.GuildHash, m.Provider, err)
	}

	// A plain headless run with the seed guild leaves the other guild's run
	// for `guildhall resume` instead of marking it interrupted.
	res := runCLI(t, "", "run", "--workspace", ws, "--provider", "script", "--no-input", "Something else")
	if !strings.Contains(res.stderr, "started with the guild "+guild) || !strings.Contains(res.stderr, "guildhall resume "+ids[0]) {
		t.Errorf("no note about the other guild's run:\n%s", res.stderr)
	}
	if m, _ := w.ReadMeta(ids[0]); m.Status == store.StatusInterrupted {
		t.Fatalf("the other guild's run was marked interrupted: %+v", m.Error)
	}

	// The guild changed since: resume says so, and still resumes.
	os.WriteFile(filepath.Join(guild, "prompts", "coder.md"), []byte("[role:coder]\nYou write code, carefully."), 0o644)
	res = runCLI(t, "", "resume", "--workspace", ws, "--provider", "script", "--script", script, "--no-input", ids[0])
	if res.code != 0 {
		t.Fatalf("resume without --guild:\n%s\n%s", res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, "the guild "+guild+" changed since run "+ids[0]+" started") {
		t.Errorf("no note about the changed guild:\n%s", res.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "ok" {
		t.Errorf("the resumed run did not finish its work: out.txt = %q", b)
	}

}

// TestResumeNamesTheMissingRole resumes a run with a guild that lacks the
// role its checkpoint is in: the message names the role and the guild the
// run started with, never an index.
func TestResumeNamesTheMissingRole(t *testing.T) {
	bin := hostileBinary(t)
	ws := t.TempDir()
	script := writeScript(t, map[string][][]map[string]any{
		"orchestrator": {{{"name": "agent", "args": map[string]any{"role": "coder", "task": "wait"}}}},
		"coder":        {{{"name": "run_shell", "args": map[string]any{"command": "touch started; sleep 30"}}}},
	})
	killOnceStarted(t, ws, bin, "run", "--workspace", ws, "--guild", absGuild(t), "--provider", "script", "--script", script, "--no-input", "Do it")
	solo := filepath.Join(t.TempDir(), "solo")
	os.MkdirAll(filepath.Join(solo, "prompts"), 0o755)
	os.WriteFile(filepath.Join(solo, "guild.json"), []byte(`{"entryRole": "orchestrator", "roles": {"orchestrator": {"systemPrompt": "prompts/o.md", "tools": ["finish"]}}}`), 0o644)
	os.WriteFile(filepath.Join(solo, "prompts", "o.md"), []byte("o"), 0o644)
	w, _ := recordsOf(ws, nil)
	ids, _ := w.ListRunIDs()
	res := runCLI(t, "", "resume", "--workspace", ws, "--guild", solo, "--provider", "script", "--script", script, "--no-input", ids[0])
	if res.code == 0 || !strings.Contains(res.stderr, `role "coder" (instance coder-1-`) || !strings.Contains(res.stderr, "pass --guild "+absGuild(t)) {
		t.Errorf("resume with a guild lacking the role:\n%s", res.stderr)
	}
}

// killOnceStarted runs bin with args and kills it (SIGKILL) once a
// command of its run has made ws/started, leaving the run to resume; it
// returns when the workspace lock is free.
func killOnceStarted(t *testing.T, ws, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(ws, "started"), 30*time.Second)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	waitUnlocked(t, ws)
}

// waitUnlocked waits for a killed binary's workspace lock to be released:
// a program it was starting when SIGKILL came holds the lock's descriptor
// until its exec closes it.
func waitUnlocked(t *testing.T, ws string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for (store.Workspace{Dir: ws}).Holder() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the killed binary's workspace lock is still held")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
