package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
)

// The daily-use screens of issue 17, as golden files at the three sizes
// an operator meets: 80x24 (a default terminal), 120x40 and 60x15 (a split
// pane over SSH).
var dailySizes = [][2]int{{80, 24}, {120, 40}, {60, 15}}

// until returns the events before the first of type typ.
func until(evs []event.Event, typ event.Type) []event.Event {
	for i, e := range evs {
		if e.Type == typ {
			return evs[:i]
		}
	}
	return evs
}

// console builds a console over events with the demo's model info.
func console(t testing.TB, evs []event.Event, w, h int) (*Model, *fakeSession) {
	t.Helper()
	fs := newFakeSession(t, evs)
	fs.info = runner.ModelInfo{Name: "qwen2.5-coder:32b", Provider: "openai", Host: "127.0.0.1:8080", ContextWindow: 32768}
	m := New(fs, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty"})
	m.Update(modelInfoCmd(fs)())
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m, fs
}

// shot is the frame as the operator sees it, styling stripped, checked
// to be exactly the terminal's size and free of terminal control.
func shot(t *testing.T, m *Model) string {
	t.Helper()
	raw := m.View()
	assertTerminalSafe(t, raw)
	got := ansi.Strip(raw)
	lines := strings.Split(got, "\n")
	if len(lines) != m.lay.height {
		t.Errorf("frame has %d lines, want %d", len(lines), m.lay.height)
	}
	for i, l := range lines {
		if ansi.StringWidth(l) != m.lay.width {
			t.Errorf("line %d is %d cells wide, want %d: %q", i, ansi.StringWidth(l), m.lay.width, l)
		}
	}
	return got
}

func keys(ks ...string) []tea.KeyMsg {
	out := make([]tea.KeyMsg, len(ks))
	for i, k := range ks {
		out[i] = keyMsg(k)
	}
	return out
}

// cutFigure finds a figure cut by an ellipsis ("9.…", "12…").
var cutFigure = regexp.MustCompile(`[0-9][.,]?…`)

// noAmbiguity fails when a frame cuts a figure.
func noAmbiguity(t *testing.T, got string) {
	t.Helper()
	if cut := cutFigure.FindString(got); cut != "" {
		t.Errorf("a figure is cut (%q):\n%s", cut, got)
	}
}

func eachSize(t *testing.T, name string, fn func(t *testing.T, w, h int) string) {
	for _, sz := range dailySizes {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			golden(t, fmt.Sprintf("%s_%dx%d", name, w, h), fn(t, w, h))
		})
	}
}

// TestDailyTruncationKeepsMeaning: at every size, sibling nodes stay
// distinct, figures are never cut, the focused item's whole text is in the
// status line, option descriptions wrap and dialogs fit their text.
func TestDailyTruncationKeepsMeaning(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	eachSize(t, "daily_flow", func(t *testing.T, w, h int) string {
		m, _ := console(t, demo, w, h)
		press(m, keys("esc")...)
		got := shot(t, m)
		noAmbiguity(t, got)
		if strings.Count(got, "Acceptance…") > 1 {
			t.Errorf("two nodes read the same:\n%s", got)
		}
		return got
	})
	eachSize(t, "daily_flow_focus", func(t *testing.T, w, h int) string {
		m, _ := console(t, demo, w, h)
		press(m, keys("esc", "down", "down", "down")...)
		got := shot(t, m)
		lines := strings.Split(got, "\n")
		status := lines[len(lines)-2]
		if !strings.HasPrefix(status, "▸ ") {
			t.Errorf("no focused item in the status line %q", status)
		}
		return got
	})
	eachSize(t, "daily_sequence_focus", func(t *testing.T, w, h int) string {
		m, _ := console(t, demo, w, h)
		press(m, keys("esc", "tab", "up", "up", "up")...)
		got := shot(t, m)
		noAmbiguity(t, got)
		lines := strings.Split(got, "\n")
		if status := lines[len(lines)-2]; !strings.Contains(status, "· ") || strings.Contains(status, "…") {
			t.Errorf("the status line does not show the message whole: %q", status)
		}
		return got
	})
	eachSize(t, "daily_question", func(t *testing.T, w, h int) string {
		m, _ := console(t, until(demo, event.HumanAnswer), w, h)
		press(m, keys("3")...)
		got := shot(t, m)
		// The picked option's description shows whole, wrapped.
		flat := strings.Join(strings.Fields(strings.ReplaceAll(got, "│", " ")), " ")
		mustContain(t, flat, "Use your judgement and explain the choice in the summary.")
		return got
	})
	eachSize(t, "daily_quit", func(t *testing.T, w, h int) string {
		m, _ := console(t, until(demo, event.RunStatus), w, h)
		press(m, keys("esc", "q")...)
		got := shot(t, m)
		flat := strings.Join(strings.Fields(strings.ReplaceAll(got, "│", " ")), " ")
		mustContain(t, flat, "It stops at its next safe point and can be resumed later.")
		return got
	})
}

// cellsOf splits a plain line into cells: a wide rune takes two, the
// second "".
func cellsOf(line string) []string {
	var out []string
	for _, r := range line {
		switch runeWidth(r) {
		case 0:
			if len(out) > 0 {
				out[len(out)-1] += string(r)
			}
		case 2:
			out = append(out, string(r), "")
		default:
			out = append(out, string(r))
		}
	}
	return out
}

func blankCell(c string) bool { return c == " " || c == "" }

// assertCleanOverlay checks a frame with a modal against the background
// rendered alone: the box is a closed frame; the cell on each side of it
// is blank; the background beside it is either cleared or at least
// minStrip cells wide (never a sliver); and every other non-blank cell is
// exactly the background's.
func assertCleanOverlay(t *testing.T, bg, got string) {
	t.Helper()
	bgl, gl := strings.Split(bg, "\n"), strings.Split(got, "\n")
	if len(bgl) != len(gl) {
		t.Fatalf("%d rows over a %d-row background", len(gl), len(bgl))
	}
	y0, x0, x1 := -1, -1, -1
	for r, l := range gl {
		c := cellsOf(l)
		for x, cell := range c {
			if cell == "╭" {
				y0, x0 = r, x
				for x1 = x; x1 < len(c) && c[x1] != "╮"; x1++ {
				}
				x1++
				break
			}
		}
		if y0 >= 0 {
			break
		}
	}
	if y0 < 0 {
		t.Fatalf("no modal on the screen:\n%s", got)
	}
	y1 := y0
	for ; y1 < len(gl); y1++ {
		if c := cellsOf(gl[y1]); x0 < len(c) && c[x0] == "╰" {
			break
		}
	}
	if y1 == len(gl) {
		t.Fatalf("the modal has no bottom border:\n%s", got)
	}
	width := len(cellsOf(gl[0]))
	for r := range gl {
		g, b := cellsOf(gl[r]), cellsOf(bgl[r])
		if r < y0 || r > y1 {
			if gl[r] != bgl[r] {
				t.Errorf("row %d above or below the modal changed:\n got %q\nwant %q", r, gl[r], bgl[r])
			}
			continue
		}
		if x1-1 >= len(g) || !strings.Contains("│╭╰", g[x0]) || !strings.Contains("│╮╯", g[x1-1]) {
			t.Errorf("row %d: the modal's frame is broken: %q", r, gl[r])
			continue
		}
		if x0 > 0 && !blankCell(g[x0-1]) || x1 < width && !blankCell(g[x1]) {
			t.Errorf("row %d: background touches the modal's frame: %q", r, gl[r])
		}
		for _, side := range [][2]int{{0, max(0, x0-1)}, {min(width, x1+1), width}} {
			strip := side[1] - side[0]
			shows := false
			for x := side[0]; x < side[1]; x++ {
				if !blankCell(g[x]) {
					shows = true
					if x >= len(b) || g[x] != b[x] {
						t.Errorf("row %d col %d: %q is not the background's %q: %q", r, x, g[x], b[min(x, len(b)-1)], gl[r])
					}
				}
			}
			if shows && strip < minStrip {
				t.Errorf("row %d: a %d-cell sliver of background beside the modal: %q", r, strip, gl[r])
			}
		}
	}
}

// TestModalsLeaveNoDebris captures the screen around each modal and
// compares it with the background rendered alone, at every size.
func TestModalsLeaveNoDebris(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	cases := []struct {
		name string
		evs  []event.Event
		keys []string
	}{
		{"question", until(demo, event.HumanAnswer), nil},
		{"result", demo, nil},
		{"transcript", demo, []string{"esc", "down", "down", "t"}},
		{"help", demo, []string{"esc", "?"}},
		{"quit", until(demo, event.RunStatus), []string{"esc", "q"}},
		{"terminate", until(demo, event.RunStatus), []string{"esc", "X"}},
		{"inspector", demo, []string{"esc", "down", "enter"}},
		{"plan", demo, []string{"esc", "p"}},
	}
	for _, sz := range append(dailySizes, [2]int{100, 30}, [2]int{61, 17}) {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s_%dx%d", c.name, sz[0], sz[1]), func(t *testing.T) {
				m, _ := console(t, c.evs, sz[0], sz[1])
				press(m, keys(c.keys...)...)
				got := shot(t, m)
				bg := ansi.Strip(m.frame(false))
				assertCleanOverlay(t, bg, got)
			})
		}
	}
}
