package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/runner/event"
)

// fakeEditor writes a $EDITOR script that records the file it was given
// (its path, its mode and its text) under logDir, exits 3 when the text
// holds "fail-me", and otherwise rewrites the file as "Edited N: TEXT".
func fakeEditor(t *testing.T, logDir string) string {
	t.Helper()
	script := filepath.Join(logDir, "fake-editor")
	body := fmt.Sprintf(`#!/bin/sh
log=%s
printf '%%s\n' "$1" >> "$log/paths"
stat -c %%a "$1" >> "$log/modes"
text=$(cat "$1")
case "$text" in
*fail-me*) exit 3 ;;
esac
n=$(wc -l < "$log/paths")
printf 'Edited %%s: %%s\n' "$n" "$text" > "$1"
`, logDir)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// TestConsoleEditorUnderTmux: ctrl+g in the interrupt box, the answer box
// and Compose opens $EDITOR on the box's text and takes the rewritten text
// back; an editor that fails leaves the text as it was, with a notice; the
// answer the editor wrote is the one the run got. Each temporary file was
// the operator's only and is gone afterwards.
func TestConsoleEditorUnderTmux(t *testing.T) {
	logDir := t.TempDir()
	editor := fakeEditor(t, logDir)
	ws := filepath.Join(t.TempDir(), "ws")
	p := startDemoPaneEnv(t, []string{"EDITOR=" + editor, "VISUAL="}, "--speed", "0", "--into", ws)
	p.waitFor("Question", "1. Only fix the failing tests", "ctrl+g editor")

	// The interrupt box, while the run waits for the answer.
	p.keys("Escape", "i")
	p.waitFor("Ask the run a question")
	p.typeText("why")
	p.keys("C-g")
	p.waitFor("Edited 1: why")
	p.typeText(" fail-me")
	p.keys("C-g")
	p.waitFor("exited with status 3", "The text is unchanged")
	if s := p.screen(); !strings.Contains(s, "Edited 1: why fail-me") {
		t.Fatalf("a failed editor changed the text:\n%s", s)
	}
	p.keys("Escape")

	// The answer box: the edited text is the answer the run gets.
	p.keys("a")
	p.waitFor("Question", "1. Only fix the failing tests")
	p.typeText("scope")
	p.keys("C-g")
	p.waitFor("Edited 3: scope")
	p.keys("Enter")
	p.waitFor("Result · run-", "Status: ✓ success")

	// Compose.
	p.keys("Escape", "n")
	p.waitFor("New task")
	p.typeText("follow up")
	p.keys("C-g")
	p.waitFor("Edited 4: follow up")
	p.keys("Escape")
	p.quit()

	paths := readLines(t, filepath.Join(logDir, "paths"))
	modes := readLines(t, filepath.Join(logDir, "modes"))
	if len(paths) != 4 || len(modes) != 4 {
		t.Fatalf("the editor ran %d times (%d modes), want 4: %q", len(paths), len(modes), paths)
	}
	for i, path := range paths {
		if modes[i] != "600" {
			t.Errorf("%s had mode %s, want 600", path, modes[i])
		}
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the editor: %v", path, err)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(ws, ".orchestration", "runs", "*", "log.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("run logs: %v", logs)
	}
	if counts, answer := logCounts(t, logs[0]); counts[event.HumanAnswer] != 1 || answer.Answer != "Edited 3: scope" {
		t.Errorf("the run got %d answers, the last %q; want the edited text", counts[event.HumanAnswer], answer.Answer)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}
