package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/store"
)

// TestClosedPortFailsFastWithNoRecord runs the real binary against a port
// nothing listens on, the way a new user's first wrong --base-url goes: it
// must exit 2 within seconds (15 s here is only a bound a hang would pass;
// the time taken is logged), name the URL and what was tried, and leave
// nothing that a later start offers to resume.
func TestClosedPortFailsFastWithNoRecord(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("closed-port")
	base := fakellm.RefusedURL(t)
	for _, args := range [][]string{
		{"run", "--base-url", base, "--no-input", "Say hello"},
		{"queue", "run", "--base-url", base},
	} {
		start := time.Now()
		res := h.runEnv(ws, 15*time.Second, []string{"OPENAI_API_KEY=", "ANTHROPIC_API_KEY="}, args...)
		took := time.Since(start)
		t.Logf("%v: exit %d after %s", args[:1], res.code, took.Round(time.Millisecond))
		if res.code != exitUsage {
			t.Fatalf("exit %d, want 2\n%s", res.code, res)
		}
		for _, want := range []string{base, "GET " + base + "/models", "connection refused", "--jinja", "11434", "/v1"} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("stderr lacks %q\n%s", want, res)
			}
		}
		if strings.Contains(res.stdout+res.stderr, "suspended") || strings.Contains(res.stdout+res.stderr, "retrying") {
			t.Errorf("a setup error is not an outage:\n%s", res)
		}
	}
	ids, _ := (store.Workspace{Dir: ws}).ListRunIDs()
	if len(ids) != 0 {
		t.Errorf("runs recorded: %v", ids)
	}
	if _, err := os.Stat(filepath.Join(ws, ".orchestration", "runs")); err == nil {
		entries, _ := os.ReadDir(filepath.Join(ws, ".orchestration", "runs"))
		if len(entries) != 0 {
			t.Errorf("the runs folder holds %d entries", len(entries))
		}
	}
	// The next start has nothing to resume or nag about.
	res := h.runEnv(ws, 15*time.Second, []string{"OPENAI_API_KEY="}, "runs")
	if strings.Contains(res.stdout+res.stderr, "interrupted") || strings.Contains(res.stdout+res.stderr, "stopped before finishing") {
		t.Errorf("guildhall runs nags about a run that never started:\n%s", res)
	}
}

// TestConsoleShowsTheEndpointDialogAndRecovers opens the real console
// (under tmux) on a closed port with a task: the setup message is a dialog
// inside the console, not a line hidden behind it; the edit-settings form
// points the session at a working server; the task that waited then runs;
// and the start-up notes are shown in the console too.
func TestConsoleShowsTheEndpointDialogAndRecovers(t *testing.T) {
	needTmux(t)
	h := newHostile(t)
	ws := h.workspace("console-endpoint")
	f := fakellm.New()
	defer f.Close()
	// The console's summaries ask the same role-less fake: enough replies
	// for them and the orchestrator.
	for range 4 {
		f.Queue("", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "Said hello."}}}})
	}
	var env []string
	for _, kv := range h.env("OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "TERM=xterm-256color") {
		env = append(env, singleQuote(kv))
	}
	c := &tmuxConsole{t: t, name: fmt.Sprintf("guildhall-endpoint-%d", os.Getpid())}
	script := fmt.Sprintf("cd %s && env -i %s %s --base-url %s 'Say hello' 2>%s; sleep 60",
		singleQuote(ws), strings.Join(env, " "), h.bin, fakellm.RefusedURL(t), filepath.Join(h.root, "stderr"))
	c.tmux("new-session", "-d", "-s", c.name, "-x", "100", "-y", "34", script)
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", c.name).Run() })

	c.waitFor("The model endpoint did not answer", "connection refused", "Your task waits", "r retry", "e edit settings")
	c.keys("e")
	c.waitFor("Model endpoint settings", "Base URL")
	c.keys("Tab", "C-u")
	c.tmux("send-keys", "-t", c.name, "-l", f.BaseURL())
	c.keys("Enter")
	c.waitFor("Result · run-", "Said hello.") // the result card of the task that waited
	c.keys("Escape")
	time.Sleep(300 * time.Millisecond) // so that N is not read as alt+N
	c.keys("N")
	c.waitFor("Notes from start-up (2)", "could not list models", "the queue waits for the model endpoint")
	c.keys("Escape", "q")
	ids, _ := (store.Workspace{Dir: ws}).ListRunIDs()
	if len(ids) != 1 {
		t.Errorf("runs %v, want the one that ran once the endpoint answered", ids)
	}
}

func singleQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
