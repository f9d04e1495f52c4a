package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	base := closedBaseURL(t)
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
