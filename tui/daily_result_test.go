package tui

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

// loadCard runs what opening the result card asks for (Init's other
// commands wait on the subscription and the clock).
func loadCard(m *Model) {
	if c := m.changes; c != nil && !c.loaded {
		run(m, changesCmd(m.ctx, m.sess, c.runID))
	}
}

// demoChanges is a change set like the demo's run makes, plus a long
// file and a hostile name.
func demoChanges() runner.Changes {
	var long strings.Builder
	long.WriteString("--- a/docs/long.md\n+++ b/docs/long.md\n@@ -1,40 +1,40 @@\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&long, "-old line %d\n+new line %d\n", i, i)
	}
	return runner.Changes{Source: runner.ChangesFromLog, Files: []runner.FileChange{
		{Path: "lib/slugify.sh", Status: "modified", Added: 1, Removed: 0,
			Patch: "--- a/lib/slugify.sh\n+++ b/lib/slugify.sh\n@@ -3,3 +3,4 @@\n   sed -e 's/^-//' \\\n+      -e 's/-$//' \\\n   | tr -s '-'\n"},
		{Path: "docs/long.md", Status: "modified", Added: 40, Removed: 40, Patch: long.String()},
		{Path: "evil\x1b[2J\x1b]52;c;cGF5bG9hZA==\x07.txt", Status: "written", Added: 1, Note: "written whole; its earlier content is not in the log",
			Patch: "--- /dev/null\n+++ b/evil.txt\n@@ -0,0 +1 @@\n+\x1b]0;owned\x07 payload\n"},
	}}
}

// TestDailyResultTellsTheTruth: a terminated run's card says so once, and
// offers only the keys that act.
func TestDailyResultTellsTheTruth(t *testing.T) {
	term := loadEvents(t, "terminated.jsonl")
	eachSize(t, "daily_result_terminated", func(t *testing.T, w, h int) string {
		m, _ := console(t, term, w, h)
		loadCard(m)
		got := shot(t, m)
		flat := strings.Join(strings.Fields(got), " ")
		if n := strings.Count(flat, "The operator terminated the run."); n != 1 {
			t.Errorf("the card says the run was terminated %d times:\n%s", n, got)
		}
		if strings.Contains(got, "reported an error") || strings.Contains(got, "d details") || strings.Contains(got, "w what changed") {
			t.Errorf("the card claims or offers what is not there:\n%s", got)
		}
		mustContain(t, got, "The run stopped before it finished.")
		return got
	})
	// d with no details says so inside the card, not behind it.
	m, _ := console(t, term, 80, 24)
	loadCard(m)
	press(m, keys("d")...)
	mustContain(t, shot(t, m), "This run has no technical details.")
}

// TestDailyWhatChanged: the card lists the files changed since the run
// started; w opens a diff that scrolls, pages and moves between files;
// workspace text in names and diffs is sanitized.
func TestDailyWhatChanged(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	open := func(t *testing.T, w, h int) *Model {
		m, fs := console(t, demo, w, h)
		fs.changes = demoChanges()
		loadCard(m)
		return m
	}
	eachSize(t, "daily_result_changes", func(t *testing.T, w, h int) string {
		m := open(t, w, h)
		press(m, keys("G")...) // the end of the card
		got := shot(t, m)
		mustContain(t, got, "What changed", "3 files, +42 −40", "lib/slugify.sh", "w what changed", "y copy summary")
		return got
	})
	eachSize(t, "daily_diff", func(t *testing.T, w, h int) string {
		m := open(t, w, h)
		press(m, keys("w")...)
		got := shot(t, m)
		mustContain(t, got, "What changed · file 1 of 3", "lib/slugify.sh · modified · +1 −0", "+      -e 's/-$//'")
		return got
	})
	eachSize(t, "daily_diff_paged", func(t *testing.T, w, h int) string {
		m := open(t, w, h)
		press(m, keys("w", "right")...)
		press(m, tea.KeyMsg{Type: tea.KeyPgDown})
		got := shot(t, m)
		mustContain(t, got, "file 2 of 3", "new line")
		if strings.Contains(got, "docs/long.md · modified") {
			t.Errorf("pgdn did not page the diff:\n%s", got)
		}
		return got
	})
	// The hostile file: its name and content reach the screen inert.
	m := open(t, 100, 30)
	press(m, keys("G")...)
	assertTerminalSafe(t, m.View())
	press(m, keys("w", "right", "right")...)
	raw := m.View()
	assertTerminalSafe(t, raw)
	mustContain(t, ansi.Strip(raw), "file 3 of 3", "payload", "earlier content is not in the log")
	// ← goes back, esc closes the diff and leaves the card.
	press(m, keys("left")...)
	mustContain(t, ansi.Strip(m.View()), "file 2 of 3")
	press(m, keys("esc")...)
	mustContain(t, ansi.Strip(m.View()), "Result · run-")
}

// osc52Text decodes the clipboard text of the OSC 52 sequences written.
func osc52Text(t *testing.T, out string) []string {
	t.Helper()
	var texts []string
	for _, m := range regexp.MustCompile("\x1b\\]52;c;([A-Za-z0-9+/=]*)\x07").FindAllStringSubmatch(out, -1) {
		b, err := base64.StdEncoding.DecodeString(m[1])
		if err != nil {
			t.Fatalf("bad base64 in OSC 52: %v", err)
		}
		texts = append(texts, string(b))
	}
	return texts
}

// TestDailyCopy: y copies exactly the focused text with OSC 52, or to the
// clipboard file when OSC 52 cannot carry it.
func TestDailyCopy(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	newConsole := func(t *testing.T, opts Options) (*Model, *bytes.Buffer) {
		var out bytes.Buffer
		fs := newFakeSession(t, demo)
		fs.changes = demoChanges()
		writeRun(t, fs.ws, &store.Meta{RunID: "run-20261201-104723", Task: "T", Status: "success", StartedAt: demo[0].Timestamp}, demo)
		opts.Labels, opts.NoAnimation, opts.MarkdownStyle, opts.Output = seedLabels(t), true, "notty", &out
		m := New(fs, opts)
		m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		loadCard(m)
		return m, &out
	}
	m, out := newConsole(t, Options{})
	want := resultSummary(m.view)
	if !strings.HasPrefix(want, "## Slug tests fixed") {
		t.Fatalf("summary %q", want)
	}
	press(m, keys("y")...)
	if got := osc52Text(t, out.String()); len(got) != 1 || got[0] != want {
		t.Fatalf("OSC 52 carried %q, want the summary %q", got, want)
	}
	mustContain(t, ansi.Strip(m.View()), "Copied the result summary")

	// The diff of the file on screen.
	out.Reset()
	press(m, keys("w", "y")...)
	if got := osc52Text(t, out.String()); len(got) != 1 || got[0] != demoChanges().Files[0].Patch {
		t.Fatalf("the diff copy carried %q", got)
	}

	// A whole transcript, and one message.
	m, out = newConsole(t, Options{})
	press(m, keys("esc", "down", "down", "t")...)
	tr := m.transcript
	if tr == nil || !tr.loaded {
		t.Fatal("no transcript")
	}
	press(m, keys("Y")...)
	all := osc52Text(t, out.String())
	if len(all) != 1 || !strings.Contains(all[0], "## System prompt") || !strings.Contains(all[0], "## Reply") {
		t.Fatalf("Y copied %q", all)
	}

	// No OSC 52: the text goes to the clipboard file, readable by the
	// operator only.
	file := filepath.Join(t.TempDir(), "state", "guildhall", "clipboard.txt")
	m, out = newConsole(t, Options{NoOSC52: true, ClipboardFile: file})
	press(m, keys("y")...)
	if out.Len() != 0 {
		t.Fatalf("wrote to a terminal that does not take OSC 52: %q", out.String())
	}
	b, err := os.ReadFile(file)
	if err != nil || string(b) != want {
		t.Fatalf("clipboard file %q, %v; want the summary", b, err)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("clipboard file mode %v, want 0600", fi.Mode().Perm())
	}
	mustContain(t, strings.Join(strings.Fields(ansi.Strip(m.View())), " "), "Saved the result summary", "clipboard.txt")

	// Too large for OSC 52: the file, and the terminal gets nothing.
	if got := deliverCopy(context.Background(), copyTarget{out: out, mode: ClipboardOSC52, file: file, osc: true}, "a big text", strings.Repeat("x", osc52Max+1)); !strings.Contains(got, "too large for OSC 52") {
		t.Errorf("big copy: %q", got)
	}
	if out.Len() != 0 {
		t.Error("a text over the OSC 52 limit was written to the terminal")
	}
	// No file and no OSC 52: say so, do not pretend.
	if got := deliverCopy(context.Background(), copyTarget{out: out, mode: ClipboardOSC52}, "x", "y"); !strings.HasPrefix(got, "Could not copy") {
		t.Errorf("copy with nowhere to go: %q", got)
	}
}

// TestDailyMouseIsTheTerminals: the console starts without mouse capture,
// M toggles it, and ? says so.
func TestDailyMouseIsTheTerminals(t *testing.T) {
	m, _ := console(t, loadEvents(t, "demo.jsonl"), 80, 24)
	if m.mouse {
		t.Fatal("mouse capture is on by default")
	}
	_, cmd := m.Update(keyMsg("M"))
	if cmd == nil || fmt.Sprintf("%T", cmd()) != fmt.Sprintf("%T", tea.EnableMouseCellMotion()) {
		t.Fatalf("M did not turn mouse capture on: %T", cmd)
	}
	_, cmd = m.Update(keyMsg("M"))
	if cmd == nil || fmt.Sprintf("%T", cmd()) != fmt.Sprintf("%T", tea.DisableMouse()) {
		t.Fatal("M did not turn mouse capture off")
	}
	seen := ""
	press(m, keys("esc", "?")...)
	for i := 0; i < 10; i++ {
		seen += ansi.Strip(m.View())
		press(m, tea.KeyMsg{Type: tea.KeyPgDown})
	}
	mustContain(t, strings.Join(strings.Fields(seen), " "), "mouse capture on / off", "y copy what has the focus", "set-clipboard on", "last reply how long the latest model reply took")
}

func TestDailyHelp(t *testing.T) {
	eachSize(t, "daily_help", func(t *testing.T, w, h int) string {
		m, _ := console(t, loadEvents(t, "demo.jsonl"), w, h)
		press(m, keys("esc", "?")...)
		return shot(t, m)
	})
}
