package tui

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// The backgrounds each theme must be readable on: the pure one and a
// common softer one (light greys such as #f0f0f0 and Solarized's #fdf6e3
// are darker than white; dark greys such as #262626 lighter than black).
var themeBackgrounds = map[bool][]string{
	false: {"#000000", "#262626"},
	true:  {"#ffffff", "#f0f0f0"},
}

// wcagMinimum is WCAG 2's minimum contrast for normal text (AA).
const wcagMinimum = 4.5

// TestThemeContrast: every tone of each theme, as the theme draws it, is
// a colour of fixed RGB with a contrast of at least 4.5:1 against that
// theme's backgrounds. The colour is read back from the escape sequence
// the console writes, so the test checks what reaches the terminal.
func TestThemeContrast(t *testing.T) {
	for _, light := range []bool{false, true} {
		th := newTheme(light, termenv.ANSI256)
		for tn := range numTones {
			out := th.Render(tn, "x")
			idx, ok := foreground256(out)
			if !ok {
				t.Errorf("light=%v tone %d: no 256-colour foreground in %q", light, tn, out)
				continue
			}
			rgb, ok := xtermRGB(idx)
			if !ok {
				t.Errorf("light=%v tone %d: colour %d is one of the terminal's own 16, whose RGB is unknown", light, tn, idx)
				continue
			}
			for _, bg := range themeBackgrounds[light] {
				if r := contrast(rgb, bg); r < wcagMinimum {
					t.Errorf("light=%v tone %d: colour %d (%s) on %s has contrast %.2f, want at least %.1f", light, tn, idx, rgb, bg, r, wcagMinimum)
				}
			}
		}
	}
}

// TestContrastRatio checks the formula against WCAG's own examples, and
// that the old colours fail it: the contrast test can fail.
func TestContrastRatio(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want float64
	}{
		{"#000000", "#ffffff", 21},
		{"#ffffff", "#ffffff", 1},
		{"#767676", "#ffffff", 4.54}, // the darkest grey that passes on white
		{"#ffff00", "#ffffff", 1.07}, // the old active colour (ANSI 11) on white
		{"#00ff00", "#ffffff", 1.37}, // the old success colour (ANSI 10)
	} {
		if got := contrast(c.a, c.b); math.Abs(got-c.want) > 0.01 {
			t.Errorf("contrast(%s, %s) = %.3f, want %.2f", c.a, c.b, got, c.want)
		}
	}
}

// TestThemeVariantsDiffer: the light theme does not draw any tone in a
// dark variant's colour, nor the dark one in a light variant's.
func TestThemeVariantsDiffer(t *testing.T) {
	dark, light := newTheme(false, termenv.ANSI256), newTheme(true, termenv.ANSI256)
	for tn := range numTones {
		d, _ := foreground256(dark.Render(tn, "x"))
		l, _ := foreground256(light.Render(tn, "x"))
		if d == l {
			t.Errorf("tone %d is colour %d in both themes", tn, d)
		}
	}
	if dark.markdownStyle() != "dark" || light.markdownStyle() != "light" {
		t.Errorf("Markdown styles %q and %q, want dark and light", dark.markdownStyle(), light.markdownStyle())
	}
}

// TestThemeAsciiDrawsNoColour: without colour (not a terminal, NO_COLOR)
// the tones draw the text alone.
func TestThemeAsciiDrawsNoColour(t *testing.T) {
	th := newTheme(true, termenv.Ascii)
	for tn := range numTones {
		if got := th.Render(tn, "text"); got != "text" {
			t.Errorf("tone %d at no colour draws %q", tn, got)
		}
	}
}

// TestDetectThemeExplicit: dark and light are taken as they are, without
// asking the terminal; auto without a terminal is dark.
func TestDetectThemeExplicit(t *testing.T) {
	var sink strings.Builder
	for setting, want := range map[string]string{"dark": "dark", "light": "light", "auto": "dark", "": "dark"} {
		if got := DetectTheme(setting, &sink); got != want {
			t.Errorf("DetectTheme(%q) = %q, want %q", setting, got, want)
		}
	}
	if sink.Len() != 0 {
		t.Errorf("detection wrote %q to an output that is not a terminal", sink.String())
	}
}

// themedConsole is console (daily_test.go) in a theme, drawing 256
// colours, with the theme's Markdown style.
func themedConsole(t testing.TB, evs []event.Event, w, h int, th string) (*Model, *fakeSession) {
	t.Helper()
	fs := newFakeSession(t, evs)
	fs.info = runner.ModelInfo{Name: "qwen2.5-coder:32b", Provider: "openai", Host: "127.0.0.1:8080", ContextWindow: 32768}
	p := termenv.ANSI256
	m := New(fs, Options{Labels: seedLabels(t), NoAnimation: true, Theme: th, Profile: &p})
	m.Update(modelInfoCmd(fs)())
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m, fs
}

// liveMarkdown is an 80×24 console in theme th over the live demo, with
// themedReply streaming into the live pane.
func liveMarkdown(t *testing.T, th string) *Model {
	t.Helper()
	fs := newFakeSession(t, liveDemo(t))
	p := termenv.ANSI256
	m := New(fs, Options{Labels: seedLabels(t), NoAnimation: true, Theme: th, Profile: &p})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(eventsMsg{deltas(t, "coder-1-3", themedReply, 7)})
	return m
}

// A reply without a code block: chroma, which colours code blocks, picks
// between equally close palette colours at random.
const themedReply = "## The fix\n\nI read the plan. **One small change** fixes it, in `lib/slugify.sh`:\n\n" +
	"| file | change |\n|---|---|\n| lib/slugify.sh | trim the trailing hyphen |\n\n" +
	"- trim the hyphen\n- run the tests\n\n> Running the tests now to be sure"

// TestLightThemeScreens: the main views at 80x24 in the light theme, as
// golden files that keep the colour escapes, so a change of colour (the
// light theme drawing the dark colours, say) fails. Each view also checks
// that it drew a light colour and none of the dark theme's.
func TestLightThemeScreens(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	light := newTheme(true, termenv.ANSI256)
	dark := newTheme(false, termenv.ANSI256)
	colours := func(th theme) map[int]bool {
		out := map[int]bool{}
		for tn := range numTones {
			c, _ := foreground256(th.Render(tn, "x"))
			out[c] = true
		}
		return out
	}
	lightColours, darkColours := colours(light), colours(dark)
	// after is the light console over evs once ks are pressed; withChanges
	// is the demo's once its result card has loaded, with the demo's
	// changes, and ks are pressed.
	after := func(evs []event.Event, ks ...string) func(t *testing.T) *Model {
		return func(t *testing.T) *Model {
			m, _ := themedConsole(t, evs, 80, 24, ThemeLight)
			press(m, keys(ks...)...)
			return m
		}
	}
	withChanges := func(ks ...string) func(t *testing.T) *Model {
		return func(t *testing.T) *Model {
			m, fs := themedConsole(t, demo, 80, 24, ThemeLight)
			fs.changes = demoChanges()
			loadCard(m)
			press(m, keys(ks...)...)
			return m
		}
	}
	asked := until(demo, event.HumanAnswer)
	views := []struct {
		name  string
		build func(t *testing.T) *Model
		// want is text the view shows in a light tone.
		want []string
	}{
		{"flow", after(demo, "esc"), nil},
		{"sequence", after(demo, "esc", "tab"), nil},
		{"question", after(asked), nil},
		{"question_banner", after(asked, "esc"), []string{light.Render(toneBanner, "❓ A question is waiting for you: press a to answer.")}},
		{"result_changes", withChanges("G"), []string{light.Render(toneOK, "+40"), light.Render(toneErr, "−40")}},
		{"diff", withChanges("w"), nil},
		{"transcript_search", func(t *testing.T) *Model {
			m, fs := themedConsole(t, demo, 80, 24, ThemeLight)
			writeRun(t, fs.ws, &store.Meta{RunID: "run-20261201-104723", Task: "T", Status: "success", StartedAt: demo[0].Timestamp}, demo)
			press(m, keys("esc")...)
			m.flowSel = "orchestrator-0-1"
			press(m, keys("t", "/")...)
			press(m, keyMsg("slug"), keyMsg("enter"), keyMsg("n"))
			return m
		}, []string{light.Render(toneCurrentMatch, "slug")}},
		{"queue", after(demo, "esc", "4"), nil},
		{"live_markdown", func(t *testing.T) *Model { return liveMarkdown(t, ThemeLight) }, nil},
	}
	for _, v := range views {
		t.Run(v.name, func(t *testing.T) {
			m := v.build(t)
			raw := m.View()
			shot(t, m) // the frame's size and safety
			for _, w := range v.want {
				if !strings.Contains(raw, w) {
					t.Errorf("the view does not draw %q", w)
				}
			}
			used := foregrounds256(raw)
			for c := range used {
				if darkColours[c] {
					t.Errorf("the light theme draws colour %d, a dark theme colour", c)
				}
			}
			if v.name != "live_markdown" && !anyOf(used, lightColours) {
				t.Errorf("the view draws none of the light theme's colours (it draws %v)", used)
			}
			golden(t, "light_"+v.name+"_80x24", raw)
		})
	}
}

// TestMarkdownFollowsTheme: the live pane's Markdown is glamour's light
// style in the light theme and its dark style in the dark one.
func TestMarkdownFollowsTheme(t *testing.T) {
	frames := map[string]string{}
	for _, th := range []string{ThemeDark, ThemeLight} {
		frames[th] = liveMarkdown(t, th).View()
	}
	// glamour's styles differ in their text colour: dark draws text 252,
	// light 234.
	if !strings.Contains(frames[ThemeDark], "38;5;252") || strings.Contains(frames[ThemeDark], "38;5;234") {
		t.Errorf("the dark theme's Markdown is not glamour's dark style")
	}
	if !strings.Contains(frames[ThemeLight], "38;5;234") || strings.Contains(frames[ThemeLight], "38;5;252") {
		t.Errorf("the light theme's Markdown is not glamour's light style")
	}
}

func anyOf(a, b map[int]bool) bool {
	for c := range a {
		if b[c] {
			return true
		}
	}
	return false
}

var sgrPattern = regexp.MustCompile(`\x1b\[([0-9;]*)m`)

// foregrounds256 is every 256-colour foreground ("38;5;N") set in s.
func foregrounds256(s string) map[int]bool {
	out := map[int]bool{}
	for _, m := range sgrPattern.FindAllStringSubmatch(s, -1) {
		p := strings.Split(m[1], ";")
		for i := 0; i < len(p); i++ {
			switch p[i] {
			case "38", "48":
				if i+2 < len(p) && p[i+1] == "5" {
					if n, err := strconv.Atoi(p[i+2]); err == nil && p[i] == "38" {
						out[n] = true
					}
					i += 2
				} else if i+4 < len(p) && p[i+1] == "2" {
					i += 4
				}
			}
		}
	}
	return out
}

// foreground256 is the one 256-colour foreground s sets.
func foreground256(s string) (int, bool) {
	fg := foregrounds256(s)
	if len(fg) != 1 {
		return 0, false
	}
	for c := range fg {
		return c, true
	}
	return 0, false
}

// xtermRGB is the RGB of a 256-palette colour outside the terminal's own
// 16: the 6×6×6 cube and the grey ramp, as xterm defines them.
func xtermRGB(i int) (string, bool) {
	levels := []int{0x00, 0x5f, 0x87, 0xaf, 0xd7, 0xff}
	switch {
	case i >= 16 && i <= 231:
		i -= 16
		return fmt.Sprintf("#%02x%02x%02x", levels[i/36], levels[i/6%6], levels[i%6]), true
	case i >= 232 && i <= 255:
		v := 8 + 10*(i-232)
		return fmt.Sprintf("#%02x%02x%02x", v, v, v), true
	}
	return "", false
}

// contrast is WCAG 2's contrast ratio of two #rrggbb colours.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// luminance is WCAG 2's relative luminance of a #rrggbb colour.
func luminance(hex string) float64 {
	var rgb [3]float64
	for i := range rgb {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		c := float64(v) / 255
		if c <= 0.04045 {
			rgb[i] = c / 12.92
		} else {
			rgb[i] = math.Pow((c+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*rgb[0] + 0.7152*rgb[1] + 0.0722*rgb[2]
}

// TestThemeOnSixteenColours: on a terminal of 16 colours the dark theme
// draws the bright colours the console always drew (yellow, green, red:
// 93, 92, 91), and the light theme the normal ones (33, 32, 31), which
// terminals' light palettes make dark enough for a light background.
func TestThemeOnSixteenColours(t *testing.T) {
	want := map[bool]map[tone]string{
		false: {toneActive: "93", toneBanner: "93", toneOK: "92", toneErr: "91", toneCurrentMatch: "93"},
		true:  {toneActive: "33", toneBanner: "33", toneOK: "32", toneErr: "31", toneCurrentMatch: "33"},
	}
	for light, tones := range want {
		th := newTheme(light, termenv.ANSI)
		for tn, code := range tones {
			m := sgrPattern.FindStringSubmatch(th.Render(tn, "x"))
			if m == nil || !strings.HasSuffix(";"+m[1], ";"+code) {
				t.Errorf("light=%v tone %d at 16 colours draws %q, want colour %s", light, tn, th.Render(tn, "x"), code)
			}
		}
	}
}

// TestTrustPromptTheme: the trust prompt draws its warnings in its
// theme's error colour.
func TestTrustPromptTheme(t *testing.T) {
	for light, want := range map[bool]string{true: "38;5;124", false: "38;5;210"} {
		m := newTrustModel(hostilePrompt(), newTheme(light, termenv.ANSI256))
		if v := m.View(); !strings.Contains(v, want) {
			t.Errorf("light=%v: the warnings are not drawn in %s:\n%q", light, want, v)
		}
	}
}
