package main

// Golden tests of the CLI's messages for the mistakes a person makes first:
// a missing argument, an unquoted task, a mistyped command or flag, a run
// id that is not there, a bad value, no terminal. Each message must say
// what is wrong and what to type instead. Run with -update to rewrite
// testdata/cli/ after checking the change.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/guildhall/guildhall/internal/golden"
	"github.com/guildhall/guildhall/store"
)

// transcript is how a golden file records one command.
func transcript(args []string, res cliResult) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return fmt.Sprintf("$ guildhall %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(quoted, " "), res.code, res.stdout, res.stderr)
}

var (
	runIDRE   = regexp.MustCompile(`run-\d{8}-\d{6}`)
	queueIDRE = regexp.MustCompile(`q-\d{13}-\d+`)
	timeRE    = regexp.MustCompile(`[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [A-Z0-9+-]+|\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?`)
	durRE     = regexp.MustCompile(`\(\d+s\)`)
)

// normalize replaces what changes between runs of the test: folders, run
// and queue ids (numbered in order of appearance, so the same id reads
// the same), times and durations.
func normalize(s string, dirs map[string]string) string {
	for dir, name := range dirs {
		s = strings.ReplaceAll(s, dir, name)
	}
	ids := map[string]string{}
	s = runIDRE.ReplaceAllStringFunc(s, func(id string) string {
		if id == "run-20260101-120000" || id == "run-20200101-000000" {
			return id // the examples in messages, and the missing run the tests ask for
		}
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("RUN_%d", len(ids)+1)
		}
		return ids[id]
	})
	s = queueIDRE.ReplaceAllStringFunc(s, func(id string) string {
		if id == "q-1767225600000-1" {
			return id
		}
		return "QUEUE_ID"
	})
	s = timeRE.ReplaceAllString(s, "TIME")
	return durRE.ReplaceAllString(s, "(DURATION)")
}

// demoWorkspace runs the scripted demo headless into a folder and returns
// it with its one run.
func demoWorkspace(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	if res := runCLI(t, "1\n", "demo", "--headless", "--speed", "0", "--into", dir); res.code != 0 {
		t.Fatalf("demo exit %d\n%s", res.code, res.stderr)
	}
	ids, err := store.Workspace{Dir: dir}.ListRunIDs()
	if err != nil || len(ids) != 1 {
		t.Fatalf("runs: %v %v", ids, err)
	}
	return dir, ids[0]
}

func TestCLIMessages(t *testing.T) {
	demo, _ := demoWorkspace(t)
	empty := t.TempDir()
	dirs := map[string]string{demo: "$DEMO", empty: "$EMPTY"}
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"run-no-task", []string{"run"}, exitUsage},
		{"run-unquoted-task", []string{"run", "fix", "the", "bug"}, exitUsage},
		{"show-no-id", []string{"show"}, exitUsage},
		{"show-two-ids", []string{"show", "run-20260101-120000", "run-20200101-000000"}, exitUsage},
		{"resume-no-id", []string{"resume"}, exitUsage},
		{"queue-add-no-task", []string{"queue", "add"}, exitUsage},
		{"queue-add-unquoted-task", []string{"queue", "add", "write", "a", "changelog"}, exitUsage},
		{"queue-mv-no-place", []string{"queue", "mv", "q-1767225600000-1"}, exitUsage},
		{"queue-rm-no-id", []string{"queue", "rm"}, exitUsage},
		{"queue-requeue-no-id", []string{"queue", "requeue"}, exitUsage},
		{"queue-answer-no-answer", []string{"queue", "answer", "q-1767225600000-1"}, exitUsage},
		{"check-two-folders", []string{"check", "a", "b"}, exitUsage},
		{"runs-extra-argument", []string{"runs", "--workspace", empty, "all"}, exitUsage},
		{"unknown-command", []string{"shwo", "run-20260101-120000"}, exitUsage},
		{"unknown-one-word-command", []string{"qeueu"}, exitUsage},
		{"unknown-subcommand", []string{"queue", "lss"}, exitUsage},
		{"unknown-flag-typo", []string{"run", "--efort", "quick", "x"}, exitUsage},
		{"unknown-flag-of-another-command", []string{"run", "--headless", "x"}, exitUsage},
		{"unknown-flag-typo-of-another-command", []string{"--jsno"}, exitUsage},
		{"unknown-flag-nothing-near", []string{"show", "--frobnicate", "x"}, exitUsage},
		{"unknown-shorthand", []string{"demo", "-z"}, exitUsage},
		{"show-missing-run", []string{"show", "--workspace", demo, "run-20200101-000000"}, exitError},
		{"show-missing-run-no-runs", []string{"show", "--workspace", empty, "run-20200101-000000"}, exitError},
		{"resume-missing-run", []string{"resume", "--workspace", demo, "run-20200101-000000"}, exitError},
		{"run-continue-missing-run", []string{"run", "--workspace", demo, "--continue", "run-20200101-000000", "x"}, exitUsage},
		{"queue-add-continue-missing-run", []string{"queue", "add", "--workspace", empty, "--continue", "run-20200101-000000", "x"}, exitUsage},
		{"settings-bad-effort", []string{"settings", "--workspace", empty, "--effort", "turbo"}, exitUsage},
		{"settings-bad-log-level", []string{"settings", "--workspace", empty, "--log-level", "loud"}, exitUsage},
		{"queue-add-bad-effort", []string{"queue", "add", "--workspace", empty, "--effort", "turbo", "x"}, exitUsage},
		{"queue-rm-unknown-item", []string{"queue", "rm", "--workspace", empty, "q-1767225600000-1"}, exitError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, "", tc.args...)
			if res.code != tc.code {
				t.Errorf("exit %d, want %d\n%s", res.code, tc.code, res.stderr)
			}
			for _, leak := range []string{"invalid_body", "status_forbidden", "not_found", "arg(s)", "no such file or directory"} {
				if strings.Contains(res.stderr, leak) {
					t.Errorf("the message leaks %q: %s", leak, res.stderr)
				}
			}
			golden.Check(t, filepath.Join("testdata", "cli", tc.name+".golden"), []byte(normalize(transcript(tc.args, res), dirs)))
		})
	}
}

// TestShowGolden pins `guildhall show` as a file or pipe receives it: no
// trailing spaces, no escapes, and the run's task and result once.
func TestShowGolden(t *testing.T) {
	demo, id := demoWorkspace(t)
	args := []string{"show", "--workspace", demo, id}
	res := runCLI(t, "", args...)
	if res.code != 0 {
		t.Fatalf("show exit %d: %s", res.code, res.stderr)
	}
	for i, line := range strings.Split(res.stdout, "\n") {
		if strings.TrimRight(line, " \t") != line {
			t.Errorf("line %d has trailing spaces: %q", i+1, line)
		}
	}
	if strings.Contains(res.stdout, "\x1b") {
		t.Error("show printed an escape sequence to a pipe")
	}
	golden.Check(t, filepath.Join("testdata", "cli", "show.golden"), []byte(normalize(transcript([]string{"show", id}, res), map[string]string{demo: "$DEMO"})))
}

// TestConsoleWithoutATerminal runs the real binary in a new session, with
// no controlling terminal and standard input from /dev/null, as under
// cron, CI or `ssh host guildhall`.
func TestConsoleWithoutATerminal(t *testing.T) {
	bin := hostileBinary(t)
	ws := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"console-no-terminal", []string{"--workspace", ws}},
		{"console-task-no-terminal", []string{"--workspace", ws, "Add a --verbose flag"}},
		{"demo-no-terminal", []string{"demo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			cmd.Stdin = nil // /dev/null
			res := runCmd(t, cmd)
			if res.code != exitUsage {
				t.Errorf("exit %d, want %d\n%s", res.code, exitUsage, res.stderr)
			}
			if strings.Contains(res.stderr, "could not open a new TTY") {
				t.Errorf("Bubble Tea's own error reached the operator: %s", res.stderr)
			}
			shown := append([]string{}, tc.args...)
			golden.Check(t, filepath.Join("testdata", "cli", tc.name+".golden"),
				[]byte(normalize(transcript(shown, cliResult(res)), map[string]string{ws: "$WORKSPACE"})))
		})
	}
	if _, err := os.Stat(filepath.Join(ws, ".orchestration")); err == nil {
		t.Error("the console set up records before finding it had no terminal")
	}
}
