package tui

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
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
			tm := teatest.NewTestModel(t, newTrustModel(hostilePrompt(), newTheme(false, termenv.Ascii)), teatest.WithInitialTermSize(80, 24))
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
		m := newTrustModel(hostilePrompt(), newTheme(false, termenv.Ascii))
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

// bigGuildPrompt is what a 120-role guild's prompt holds: a line per role
// that warns of nothing, then the warnings the Changes list puts last
// (warn of them all: each role granted MCP tools).
func bigGuildPrompt(warnEach bool) TrustPrompt {
	p := TrustPrompt{Workspace: "/src/big", Files: []string{"deployment.json", "guild/guild.json"}}
	for i := 0; i < 120; i++ {
		p.Changes = append(p.Changes, TrustChange{Text: fmt.Sprintf("guild/ gives role%03d the workspace files README.md as project documentation", i)})
	}
	if warnEach {
		for i := 0; i < 120; i++ {
			p.Changes = append(p.Changes, TrustChange{Text: fmt.Sprintf("guild/ grants the MCP tools t.* to role%03d", i), Warn: true})
		}
		return p
	}
	p.Changes = append(p.Changes,
		TrustChange{Text: `deployment.json sets sandbox.allow to ["collect.example"] (now unset)`, Warn: true},
		TrustChange{Text: "deployment.json declares MCP server t: stdio python3 mcp/srv.py (sandbox workspace-write, network off)", Warn: true},
		TrustChange{Text: "guild/ grants run_shell to " + strings.Repeat("role, ", 40) + "last", Warn: true})
	return p
}

// screenOf runs the prompt at 80x24 through keys and returns the last
// frame as plain text.
func trustScreen(t *testing.T, m trustModel, keys ...tea.Msg) (trustModel, string) {
	t.Helper()
	next, _ := m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m = next.(trustModel)
	for _, k := range keys {
		next, _ = m.Update(k)
		m = next.(trustModel)
	}
	return m, ansi.Strip(m.View())
}

// TestTrustPromptPutsWarningsFirst: however long the guild, the count
// and every "!" line are on the first screen, and t is accepted there.
func TestTrustPromptPutsWarningsFirst(t *testing.T) {
	m, screen := trustScreen(t, newTrustModel(bigGuildPrompt(false), newTheme(false, termenv.Ascii)))
	golden(t, "trust_warnings_first_80x24", screen)
	mustContain(t, screen, "3 warnings:", "! deployment.json sets sandbox.allow", "! deployment.json declares MCP server t", "! guild/ grants run_shell to role", "t trust and apply")
	if strings.Index(screen, "3 warnings:") > strings.Index(screen, "Files:") && strings.Contains(screen, "Files:") {
		t.Error("the files come before the warnings")
	}
	if m.unseen() != 0 {
		t.Fatalf("%d warnings unseen on the first screen", m.unseen())
	}
	tm := teatest.NewTestModel(t, newTrustModel(bigGuildPrompt(false), newTheme(false, termenv.Ascii)), teatest.WithInitialTermSize(80, 24))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(ansi.Strip(string(b)), "t trust") }, teatest.WithDuration(10*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("t")})
	if final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(trustModel); final.answer != answerTrust {
		t.Fatalf("answer %v", final.answer)
	}
}

// TestTrustPromptRefusesTrustUntilEveryWarningWasShown drives the real
// program: with 120 warnings, t does nothing until each has been on
// screen, the footer says how many are left, and after scrolling through
// them t trusts.
func TestTrustPromptRefusesTrustUntilEveryWarningWasShown(t *testing.T) {
	_, first := trustScreen(t, newTrustModel(bigGuildPrompt(true), newTheme(false, termenv.Ascii)), tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("t")})
	golden(t, "trust_scroll_to_trust_80x24", first)
	mustContain(t, first, "120 warnings:", "scroll to see 101 more warnings before trusting")
	if strings.Contains(first, "t trust") {
		t.Error("the footer offers t before the warnings were shown")
	}

	tm := teatest.NewTestModel(t, newTrustModel(bigGuildPrompt(true), newTheme(false, termenv.Ascii)), teatest.WithInitialTermSize(80, 24))
	var out []byte
	waitScreen := func(want string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			out = append(out, b...)
			return strings.Contains(ansi.Strip(string(out)), want)
		}, teatest.WithDuration(10*time.Second))
		out = nil
	}
	waitScreen("more warnings before trusting")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("t")})
	// One page down shows 23 more rows: still short of the last warning.
	tm.Send(tea.KeyMsg{Type: tea.KeyPgDown})
	waitScreen("scroll to see 78 more warnings")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("t")})
	for i := 0; i < 4; i++ {
		tm.Send(tea.KeyMsg{Type: tea.KeyPgDown})
	}
	waitScreen("t trust and apply")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("t")})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(trustModel)
	if final.answer != answerTrust || final.unseen() != 0 {
		t.Fatalf("answer %v with %d unseen", final.answer, final.unseen())
	}
}

// Jumping to the end skips the warnings in between: they still count as
// unseen, and ignoring or quitting is never held back.
func TestTrustPromptCountsSkippedWarnings(t *testing.T) {
	m, screen := trustScreen(t, newTrustModel(bigGuildPrompt(true), newTheme(false, termenv.Ascii)), tea.KeyMsg{Type: tea.KeyEnd})
	if m.unseen() == 0 || !strings.Contains(screen, "more warnings before trusting") {
		t.Fatalf("after end, %d unseen:\n%s", m.unseen(), screen)
	}
	for _, k := range []string{"i", "q"} {
		next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
		if cmd == nil || next.(trustModel).answer == answerNone {
			t.Errorf("%s was held back", k)
		}
	}
}
