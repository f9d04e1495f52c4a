package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// originalRecords is the workspace whose records the original system wrote.
const originalRecords = "../../store/testdata/original-records"

// originalWorkspace copies that workspace, so nothing a test does can
// change the fixture.
func originalWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	if err := os.CopyFS(ws, os.DirFS(originalRecords)); err != nil {
		t.Fatal(err)
	}
	return ws
}

func localTime(s, layout string) string {
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return tm.Local().Format(layout)
}

// TestOriginalRecordsThroughRunsAndShow: the original's runs are listed
// with their real start times (not year 1), marked foreign, and shown with
// their result, error details and thread.
func TestOriginalRecordsThroughRunsAndShow(t *testing.T) {
	ws := originalWorkspace(t)
	res := runCLI(t, "", "runs", "--workspace", ws)
	if res.code != 0 {
		t.Fatalf("runs: exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{
		"run-20250601-101500  foreign (success)",
		localTime("2025-06-01T10:15:00.123Z", "2006-01-02 15:04") + "  Added a --version flag to the CLI",
		"foreign (error)", "foreign (running)", "foreign (interrupted)",
		localTime("2025-06-01T13:00:00Z", "2006-01-02 15:04") + "  Tidy the README",
		"4 foreign run(s)",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("runs lacks %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "0001-01-01") || strings.Contains(res.stdout, "unknown") || strings.Contains(res.stdout, "\x1b") {
		t.Errorf("runs shows a zero time, an unreadable run or terminal control:\n%q", res.stdout)
	}

	res = runCLI(t, "", "show", "--workspace", ws, "run-20250601-101500")
	if res.code != 0 {
		t.Fatalf("show: exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{
		"Foreign  written by the original system (orchestration-builder)",
		"Status   success",
		"Started  " + localTime("2025-06-01T10:15:00.123Z", time.RFC1123),
		"Ended    " + localTime("2025-06-01T10:21:42.456Z", time.RFC1123) + " (6m42s)",
		"Added --version; the tests pass.", "src/cli.ts",
		"Which version string should it print?", "The one in package.json",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, res.stdout)
		}
	}

	res = runCLI(t, "", "show", "--workspace", ws, "run-20250601-113000")
	if res.code != 0 || !strings.Contains(res.stdout, "Error (llm_unavailable)") || !strings.Contains(res.stdout, "Technical details") || !strings.Contains(res.stdout, "upstream connect error") {
		t.Fatalf("show of the errored run lacks its error and details (exit %d):\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestOriginalCheckpointIsRefusedClearly: an original run that stopped
// while running is never resumed, nor continued, and the refusal says why.
func TestOriginalCheckpointIsRefusedClearly(t *testing.T) {
	ws := originalWorkspace(t)
	state := filepath.Join(ws, ".orchestration", "runs", "run-20250601-120000", "state.json")
	before, _ := os.ReadFile(state)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"resume", "--workspace", ws, "--provider", "script", "run-20250601-120000"}, exitError},
		{[]string{"run", "--workspace", ws, "--provider", "script", "--no-input", "--continue", "run-20250601-101500", "carry on"}, exitUsage},
	} {
		args := c.args
		res := runCLI(t, "", args...)
		if res.code != c.code {
			t.Fatalf("%s: exit %d, want %d\n%s%s", args[0], res.code, c.code, res.stdout, res.stderr)
		}
		for _, want := range []string{"written by the original system (orchestration-builder)", "never resumed", "guildhall show"} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("%s: the refusal lacks %q:\n%s", args[0], want, res.stderr)
			}
		}
		if strings.Contains(res.stderr, "holds no roles") {
			t.Errorf("%s: the refusal reads the checkpoint as Guildhall's:\n%s", args[0], res.stderr)
		}
	}
	after, _ := os.ReadFile(state)
	if string(before) != string(after) {
		t.Fatal("the original's checkpoint was changed")
	}
	m, err := os.ReadFile(filepath.Join(ws, ".orchestration", "runs", "run-20250601-120000", "meta.json"))
	if err != nil || strings.Contains(string(m), "guildhallMac") {
		t.Fatalf("the original's meta was rewritten or sealed: %s %v", m, err)
	}
}
