package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/internal/fakellm"
)

// TestTaskLineUnderTmux: at 80 and 120 columns, the real console's task
// line ends with "…" where the task is cut, never mid-word without a mark,
// and h shows the task whole.
func TestTaskLineUnderTmux(t *testing.T) {
	h := newHostile(t)
	task := "Fix the failing slugify test in lib/slugify.sh so that accented letters are folded to ASCII, then run the whole suite and report which tests changed, ending with WHOLETASKEND"
	for _, cols := range []int{80, 120} {
		width := strconv.Itoa(cols)
		t.Run(width, func(t *testing.T) {
			ws := h.workspace("taskline-" + width)
			f := fakellm.New()
			defer f.Close()
			for range 4 {
				f.Queue("", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "Done."}}}})
			}
			c := startConsolePane(t, h, ws, "--base-url", f.BaseURL(), task)
			c.tmux("resize-window", "-t", c.name, "-x", width, "-y", "24")
			if got := strings.TrimSpace(c.tmux("display-message", "-p", "-t", c.name, "#{pane_width}")); got != width {
				t.Fatalf("the pane is %s columns, want %s", got, width)
			}
			c.waitFor("Result · run-")
			c.keys("Escape")
			screen := c.waitFor("◆ Fix the")
			var line string
			for _, l := range strings.Split(screen, "\n") {
				if strings.HasPrefix(l, "◆ Fix the") {
					line = strings.TrimRight(l, " ")
				}
				if n := len([]rune(strings.TrimRight(l, " "))); n > cols {
					t.Errorf("a line is %d columns wide at %s: %q", n, width, l)
				}
			}
			if !strings.HasSuffix(line, "…") || strings.Contains(line, "WHOLETASKEND") {
				t.Errorf("at %s columns the task line is %q, want it cut with …", width, line)
			}
			c.keys("h")
			c.waitFor("WHOLETASKEND")
			c.keys("Escape", "q")
		})
	}
}
