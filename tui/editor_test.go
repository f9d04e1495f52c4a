package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

func typeText(e *editor, s string) {
	for _, r := range s {
		e.HandleKey(keyMsg(string(r)))
	}
}

func TestEditorKeys(t *testing.T) {
	var e editor
	e.SetSize(30, 3)
	typeText(&e, "hello")
	if e.HandleKey(tea.KeyMsg{Type: tea.KeyEnter}) {
		t.Error("plain enter was used by the editor; it belongs to the owner")
	}
	if !e.HandleKey(tea.KeyMsg{Type: tea.KeyEnter, Alt: true}) {
		t.Error("alt+enter was not used")
	}
	typeText(&e, "world")
	e.HandleKey(tea.KeyMsg{Type: tea.KeyBackspace})
	e.HandleKey(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
	if got := e.Value(); got != "hello\nworl " {
		t.Fatalf("value %q", got)
	}
	if e.HandleKey(tea.KeyMsg{Type: tea.KeyDown}) {
		t.Error("down on the last line was used; it belongs to the owner")
	}
	if !e.HandleKey(tea.KeyMsg{Type: tea.KeyUp}) {
		t.Error("up from the second line was not used")
	}
	if e.HandleKey(tea.KeyMsg{Type: tea.KeyUp}) {
		t.Error("up on the first line was used; it belongs to the owner")
	}
	if e.HandleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x"), Alt: true}) {
		t.Error("alt+x was used")
	}
	e.HandleKey(tea.KeyMsg{Type: tea.KeyCtrlE})
	e.HandleKey(tea.KeyMsg{Type: tea.KeyCtrlU})
	if got := e.Value(); got != "\nworl " {
		t.Fatalf("after ctrl+e ctrl+u: %q", got)
	}
	e.Reset()
	if !e.Empty() {
		t.Fatal("reset left text")
	}
}

// Fast typing (or a paste without bracketed paste) arrives as one message
// per word; a word that names a key is text, not that key.
func TestEditorInsertsWordsThatNameKeys(t *testing.T) {
	var e editor
	e.SetSize(60, 3)
	for i, w := range []string{"turn", "right", "left", "up", "down", "home", "end", "delete"} {
		if i > 0 {
			e.HandleKey(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
		}
		e.HandleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(w)})
	}
	if got := e.Value(); got != "turn right left up down home end delete" {
		t.Fatalf("value %q", got)
	}
}

func TestEditorSanitizesInput(t *testing.T) {
	var e editor
	e.SetSize(40, 3)
	e.HandleKey(tea.KeyMsg{Type: tea.KeyRunes, Paste: true, Runes: []rune("a\x1b]52;c;eA==\x07b\x1b[2Jc \u202edone\x9b31m")})
	got := e.Value()
	if strings.ContainsAny(got, "\x1b\x07\u202e\u009b") {
		t.Fatalf("control characters in the buffer: %q", got)
	}
	if !strings.Contains(got, "abc") || !strings.Contains(got, "⟪U+202E⟫") {
		t.Fatalf("value %q", got)
	}
	frame := strings.Join(e.Render(true), "\n")
	assertTerminalSafe(t, frame)

	s := editor{singleLine: true}
	s.SetSize(20, 1)
	s.HandleKey(tea.KeyMsg{Type: tea.KeyRunes, Paste: true, Runes: []rune("one\ntwo")})
	if s.HandleKey(tea.KeyMsg{Type: tea.KeyEnter, Alt: true}) || s.Value() != "one two" {
		t.Fatalf("single line: %q", s.Value())
	}
}

func TestEditorRendersPlaceholderWrapAndScroll(t *testing.T) {
	e := editor{placeholder: "Describe the task…"}
	e.SetSize(20, 3)
	mustContain(t, ansi.Strip(strings.Join(e.Render(true), "\n")), "│ Describe the task…")
	typeText(&e, "a long line that wraps around")
	for i := 0; i < 4; i++ {
		e.HandleKey(tea.KeyMsg{Type: tea.KeyEnter, Alt: true})
		typeText(&e, "line")
	}
	lines := e.Render(true)
	if len(lines) != 3 {
		t.Fatalf("%d rows, want 3: %q", len(lines), lines)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 20 {
			t.Errorf("row %q is %d cells", l, w)
		}
	}
	// The cursor's row (the last line) is in view.
	if !strings.Contains(ansi.Strip(lines[2]), "line") {
		t.Errorf("the cursor row scrolled away: %q", lines)
	}
}
