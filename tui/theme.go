package tui

// This file holds the console's colours. They used to be the terminal's
// bright ANSI colours (9, 10, 11), which are unreadable on a light
// background: yellow on white is about 1.1:1. Every coloured style now has
// a dark and a light variant (lipgloss.AdaptiveColor), and the Model
// carries the theme chosen once at start (DetectTheme), so no view asks
// the terminal anything and nothing is kept in package state.

import (
	"io"
	"os"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/guildhall/guildhall/runner"
)

// The theme settings (deployment.json's "theme", runner.Deployment.Theme).
const (
	ThemeAuto  = runner.ThemeAuto
	ThemeDark  = runner.ThemeDark
	ThemeLight = runner.ThemeLight
)

// tone names one of the console's coloured styles. Styles that only set
// attributes (bold, faint, reverse) are theme-free and stay a style; a
// tone is drawn only through a theme, so it always has its background's
// colour.
type tone int

const (
	toneActive       tone = iota // what is working now, a notice inside a box
	toneBanner                   // the banner line
	toneOK                       // success, added lines
	toneErr                      // failure, removed lines, warnings
	toneCurrentMatch             // the search match n and N are on (reversed)
	numTones
)

// toneColor is a tone's colour for each background. The colours are from
// the 256-colour palette's 6×6×6 cube (16–231), whose RGB values are fixed
// (xterm's, which terminals follow), unlike 0–15, which are whatever the
// terminal's palette says; so their contrast can be checked (theme_test.go:
// WCAG 4.5:1 or more against white and #f0f0f0 for light, black and
// #262626 for dark). On a 16-colour terminal lipgloss maps each to the
// nearest of the 16.
func toneColor(t tone) lipgloss.AdaptiveColor {
	switch t {
	case toneActive, toneBanner, toneCurrentMatch:
		return lipgloss.AdaptiveColor{Dark: "220", Light: "94"} // #ffd700 / #875f00
	case toneOK:
		return lipgloss.AdaptiveColor{Dark: "83", Light: "22"} // #5fff5f / #005f00
	case toneErr:
		return lipgloss.AdaptiveColor{Dark: "210", Light: "124"} // #ff8787 / #af0000
	}
	return lipgloss.AdaptiveColor{}
}

// toneStyle is a tone's style, without its colour.
func toneStyle(t tone, s lipgloss.Style) lipgloss.Style {
	switch t {
	case toneActive, toneBanner:
		return s.Bold(true)
	case toneCurrentMatch:
		// Reversed: the text is drawn in the terminal's background colour
		// on the tone's colour, so the same contrast holds.
		return s.Reverse(true).Bold(true)
	}
	return s
}

// theme is the console's colours for one background, made once when the
// console starts and carried by the Model.
type theme struct {
	light  bool
	styles [numTones]lipgloss.Style
}

// newTheme builds the theme for a light or dark background, rendered at
// profile (the terminal's colour depth; termenv.Ascii draws no colour).
// Its renderer is told the background, so it never asks the terminal.
func newTheme(light bool, profile termenv.Profile) theme {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(profile)
	r.SetHasDarkBackground(!light)
	t := theme{light: light}
	for tn := range numTones {
		t.styles[tn] = toneStyle(tn, r.NewStyle().Foreground(toneColor(tn)))
	}
	return t
}

// Render draws s in the tone.
func (t theme) Render(tn tone, s string) string {
	if tn < 0 || tn >= numTones {
		return s
	}
	return t.styles[tn].Render(s)
}

// markdownStyle is the glamour standard style for the theme's background.
func (t theme) markdownStyle() string {
	if t.light {
		return ThemeLight
	}
	return ThemeDark
}

// DetectTheme resolves a theme setting for the terminal out writes to:
// "dark" and "light" are themselves, and "auto" (or "") is "light" when
// the terminal's background is light. Call it before the console takes
// the terminal.
//
// The terminal is asked once per process: Bubble Tea v1 asks, through
// lipgloss's default renderer, when the program starts (its package init,
// tea_init.go), so for os.Stdout that answer is reused; any other output
// is asked here. termenv sends the OSC 11 query followed by a cursor
// position request, which every terminal answers, so a terminal that
// ignores OSC 11 costs one round trip; one that answers neither is given
// up on after termenv's timeout (termenv.OSCTimeout, 5 s). Nothing is
// asked when out is not a terminal, when the process is not in the
// terminal's foreground, or inside tmux or screen (which may be attached
// to several terminals); then COLORFGBG decides, and without it the
// theme is dark.
func DetectTheme(setting string, out io.Writer) string {
	switch setting {
	case ThemeDark, ThemeLight:
		return setting
	}
	dark := false
	if out == os.Stdout {
		dark = lipgloss.HasDarkBackground()
	} else {
		dark = termenv.NewOutput(out).HasDarkBackground()
	}
	if dark {
		return ThemeDark
	}
	return ThemeLight
}

// colorProfile is the colour depth the console draws at: opts.Profile when
// set, else what out's environment says (TERM, COLORTERM, NO_COLOR), which
// is no colour at all when out is not a terminal.
func colorProfile(opts Options) termenv.Profile {
	if opts.Profile != nil {
		return *opts.Profile
	}
	return termenv.NewOutput(opts.Output).EnvColorProfile()
}
