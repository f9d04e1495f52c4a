package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestGoldenFrames(t *testing.T) {
	live := loadEvents(t, "interrupt_live.jsonl")
	done := loadEvents(t, "delegation.jsonl")
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		w, h := size[0], size[1]
		for _, c := range []struct {
			name   string
			events [][]byte
			keys   []string
		}{
			{name: "flow_live"},
			{name: "sequence_live", keys: []string{"tab"}},
			{name: "flow_done", keys: []string{"esc"}},
			{name: "sequence_done", keys: []string{"esc", "tab"}},
		} {
			t.Run(fmt.Sprintf("%s_%dx%d", c.name, w, h), func(t *testing.T) {
				events := live
				if strings.HasSuffix(c.name, "done") {
					events = done
				}
				got := frame(t, events, w, h, c.keys...)
				lines := strings.Split(got, "\n")
				if len(lines) != h {
					t.Errorf("frame has %d lines, want %d", len(lines), h)
				}
				for i, l := range lines {
					if ansi.StringWidth(l) > w {
						t.Errorf("line %d is %d cells wide, want <= %d: %q", i, ansi.StringWidth(l), w, l)
					}
				}
				golden(t, fmt.Sprintf("%s_%dx%d", c.name, w, h), got)
			})
		}
	}
}

func TestFlowShowsLanesAndRoles(t *testing.T) {
	got := frame(t, loadEvents(t, "interrupt_live.jsonl"), 100, 30)
	mustContain(t, got, "Main run", "Interrupt · loop check", "Orchestrator", "Coder")
}

func TestResultCardOnFinishedRun(t *testing.T) {
	got := frame(t, loadEvents(t, "delegation.jsonl"), 100, 40)
	mustContain(t, got, "Result · run-20250314-093000", "Status: ✓ success")
}
