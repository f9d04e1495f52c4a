package main

// The theme on the real binary: deployment.json's theme decides the
// colours the console draws in a real terminal (tmux), and a bad value is
// refused with the value and the allowed ones.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The tones' 256-palette colours (tui/theme.go): the light theme's and
// the dark theme's.
var (
	lightToneColours = []int{94, 22, 124}
	darkToneColours  = []int{220, 83, 210}
)

// paneColours are the 256-palette foregrounds of a pane, as tmux keeps
// them (capture-pane -e).
func (a *attachTmux) paneColours(name string) map[int]bool {
	a.t.Helper()
	out, err := exec.Command("tmux", "-L", a.socket, "capture-pane", "-e", "-p", "-t", name).CombinedOutput()
	if err != nil {
		a.t.Fatalf("capture-pane: %v\n%s", err, out)
	}
	got := map[int]bool{}
	for _, m := range regexp.MustCompile(`\x1b\[[0-9;]*?38;5;([0-9]+)[0-9;]*m`).FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[1])
		got[n] = true
	}
	return got
}

func writeOperatorDeployment(t *testing.T, h *hostile, body string) {
	t.Helper()
	cfg := filepath.Join(h.home, ".config", "guildhall")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "deployment.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestThemeUnderTmux(t *testing.T) {
	for _, c := range []struct {
		name, deployment string
		want, not        []int
	}{
		{"light", `{"theme": "light"}`, lightToneColours, darkToneColours},
		{"dark", `{"theme": "dark"}`, darkToneColours, lightToneColours},
		// Inside tmux termenv does not ask the terminal, and without
		// COLORFGBG auto is dark.
		{"auto", `{}`, darkToneColours, lightToneColours},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHostile(t)
			tm := newAttachTmux(t, h)
			writeOperatorDeployment(t, h, c.deployment)
			ws := h.workspace("theme")
			tm.start("console", filepath.Join(h.root, "console.stderr"), "--workspace", ws, "--provider", "script", "--script", askScript(t, 0), "Decide whether to ship")
			tm.waitFor("console", "Ship it as it is?")
			tm.tmux("send-keys", "-t", "console", "Escape")
			tm.waitFor("console", "A question is waiting for you")
			got := tm.paneColours("console")
			drew := false
			for _, n := range c.want {
				drew = drew || got[n]
			}
			if !drew {
				t.Errorf("the %s theme drew none of its colours %v (the pane has %v):\n%s", c.name, c.want, got, tm.capture("console"))
			}
			for _, n := range c.not {
				if got[n] {
					t.Errorf("the %s theme drew colour %d, the other theme's", c.name, n)
				}
			}
			tm.tmux("send-keys", "-t", "console", "q")
		})
	}
}

func TestThemeSettingIsChecked(t *testing.T) {
	h := newHostile(t)
	writeOperatorDeployment(t, h, "{\n  \"theme\": \"solarized\"\n}\n")
	ws := h.workspace("badtheme")
	r := h.run(ws, 0, "run", "--provider", "script", "--script", askScript(t, 0), "Decide whether to ship")
	file := filepath.Join(h.home, ".config", "guildhall", "deployment.json")
	if r.code == 0 || !strings.Contains(r.stderr, file+":2:12: theme \"solarized\" is not one of auto (the default), dark, light") {
		t.Errorf("a bad theme is not refused with its position, value and the allowed ones:\n%s", r)
	}
}
