package tui

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
)

func hostilePrompt() TrustPrompt {
	return TrustPrompt{
		Workspace: "/src/cloned" + hostile,
		Files:     []string{"deployment.json", "guild/guild.json", "guild/prompts/" + hostile + ".md"},
		Changes: []TrustChange{
			{Text: `deployment.json sets model.apiBase to "http://evil.example/v1" (now "http://127.0.0.1:8080/v1")`, Warn: true},
			{Text: "guild/ grants run_shell to coder " + hostile, Warn: true},
			{Text: "deployment.json sets executor.maxAgentDepth to 3 (now 8)"},
		},
		Changed: "These files changed since you trusted them on 2026-11-30.",
	}
}

// TestTrustPromptShowsWhatChangesAndIsSafe drives the real prompt: every
// file and change is on screen, hostile names stay inert text, and each
// key gives its answer.
func TestTrustPromptShowsWhatChangesAndIsSafe(t *testing.T) {
	for key, want := range map[string]trustAnswer{"t": answerTrust, "i": answerIgnore, "q": answerQuit, "esc": answerQuit} {
		t.Run(key, func(t *testing.T) {
			tm := teatest.NewTestModel(t, newTrustModel(hostilePrompt()), teatest.WithInitialTermSize(80, 24))
			var screen []byte
			teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
				screen = append(screen, b...)
				s := ansi.Strip(string(screen))
				return strings.Contains(s, "model.apiBase") && strings.Contains(s, "t trust")
			}, teatest.WithDuration(10*time.Second))
			if key == "esc" {
				tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
			} else {
				tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(key)})
			}
			final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(trustModel)
			if final.answer != want {
				t.Errorf("key %s: answer %v, want %v", key, final.answer, want)
			}
			rest, _ := io.ReadAll(tm.FinalOutput(t))
			out := append(screen, rest...)
			for _, bad := range []string{"\x1b]52", "\x1b]0;", "\x1b]8;", "\x1b[2J", "\u009b"} {
				if bytes.Contains(out, []byte(bad)) {
					t.Errorf("the prompt passed %q to the terminal", bad)
				}
			}
		})
	}
}

func TestTrustPromptFitsAndScrollsAtSmallSizes(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {60, 15}, {40, 10}} {
		m := newTrustModel(hostilePrompt())
		next, _ := m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		m = next.(trustModel)
		frame := m.View()
		lines := strings.Split(frame, "\n")
		if len(lines) != size[1] {
			t.Errorf("%v: %d lines", size, len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > size[0] {
				t.Errorf("%v: line %d cells wide: %q", size, w, ansi.Strip(l))
			}
		}
		assertTerminalSafe(t, frame)
		if !strings.Contains(ansi.Strip(lines[len(lines)-1]), "t trust") {
			t.Errorf("%v: the keys are not on the last line: %q", size, ansi.Strip(lines[len(lines)-1]))
		}
		// Scrolling to the end shows the last line of the prompt.
		for i := 0; i < 50; i++ {
			next, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown})
			m = next.(trustModel)
		}
		if !strings.Contains(ansi.Strip(m.View()), "guildhall trust") {
			t.Errorf("%v: scrolled to the end, the closing line is not shown:\n%s", size, ansi.Strip(m.View()))
		}
	}
}
