package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/runner/event"
)

func TestEditorCommand(t *testing.T) {
	for _, tc := range []struct {
		visual, editor, want string
	}{
		{"", "", ""},
		{"", "vi", "vi"},
		{"code --wait", "vi", "code --wait"},
		{"  ", "nano", "nano"},
	} {
		env := map[string]string{"VISUAL": tc.visual, "EDITOR": tc.editor}
		if got := editorCommand(func(k string) string { return env[k] }); got != tc.want {
			t.Errorf("VISUAL=%q EDITOR=%q: %q, want %q", tc.visual, tc.editor, got, tc.want)
		}
	}
}

// script writes a shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ed")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExtEditorRun(t *testing.T) {
	seen := filepath.Join(t.TempDir(), "seen")
	for _, tc := range []struct {
		name, body, text, want, err string
	}{
		{"rewrites", `printf 'new text\n' > "$1"`, "old", "new text", ""},
		{"keeps inner newlines, drops the editor's last", `printf 'a\r\nb\n\n' > "$1"`, "", "a\nb\n", ""},
		{"untouched", `:`, "as typed", "as typed", ""},
		{"fails", `exit 4`, "x", "", "exited with status 4"},
		{"removes the file", `rm "$1"`, "x", "", "the edited file is gone"},
		{"swaps in a link", `rm "$1"; ln -s /etc/passwd "$1"`, "x", "", "not a regular file"},
		{"too large", `head -c 2000000 /dev/zero > "$1"`, "x", "", "more than"},
		{"not found", ``, "x", "", "no-such-editor was not found"},
		{"records the mode and path", `stat -c '%a %n' "$1" > ` + seen, "x", "x", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := script(t, tc.body)
			if tc.name == "not found" {
				cmd = filepath.Join(t.TempDir(), "no-such-editor")
			}
			e := &extEditor{command: cmd, text: tc.text}
			err := e.Run()
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Run: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("Run: %v, want an error with %q", err, tc.err)
			case tc.err == "" && e.result != tc.want:
				t.Fatalf("result %q, want %q", e.result, tc.want)
			}
		})
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	mode, path, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	if mode != "600" {
		t.Errorf("the temporary file had mode %s, want 600", mode)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("%s outlived the editor: %v", path, err)
	}
}

// TestEditedTextGoesBackToItsBox: the text returns to the box that was
// edited, sanitized, and to no other box when that one closed meanwhile.
func TestEditedTextGoesBackToItsBox(t *testing.T) {
	q := event.AskHumanPayload{ID: "q-1", Question: "Which?", Options: []event.Option{{Label: "A"}}}
	m := New(newFakeSession(t, nil), Options{})
	m.addQuestion("run-20260101-000000", q)
	m.q.opt = 0
	target := editTarget{box: "answer", id: "q-1"}

	m.applyEdited(editedMsg{target: target, text: "edited \x1b]52;c;aGk=\x07answer"})
	if got := m.q.editor.Value(); got != "edited answer" {
		t.Errorf("the answer box holds %q", got)
	}
	if m.q.opt != -1 {
		t.Errorf("a typed answer keeps option %d picked", m.q.opt)
	}

	m.applyEdited(editedMsg{target: target, err: os.ErrNotExist})
	if got := m.q.editor.Value(); got != "edited answer" || !strings.Contains(m.notice, "The text is unchanged") {
		t.Errorf("a failed editor: box %q, notice %q", got, m.notice)
	}

	// Answered from the browser while the editor ran.
	m.closeQuestion("q-1")
	m.addQuestion("run-20260101-000000", event.AskHumanPayload{ID: "q-2", Question: "Next?"})
	m.applyEdited(editedMsg{target: target, text: "late"})
	if got := m.q.editor.Value(); got != "" || !strings.Contains(m.notice, "closed while the editor ran") {
		t.Errorf("the text of a closed question went to the next one: box %q, notice %q", got, m.notice)
	}

	m.applyEdited(editedMsg{target: editTarget{box: "compose"}, text: "a task\nover lines"})
	if got := m.compose.editor.Value(); got != "a task\nover lines" {
		t.Errorf("compose holds %q", got)
	}
}

func TestCtrlGWithoutAnEditorSaysHow(t *testing.T) {
	m := New(newFakeSession(t, nil), Options{})
	m.screen = screenCompose
	if cmd := m.editExternally(editTarget{box: "compose"}); cmd != nil {
		t.Fatal("ctrl+g without $EDITOR started something")
	}
	if !strings.Contains(m.notice, "set $VISUAL or $EDITOR") {
		t.Errorf("notice %q", m.notice)
	}
}
