package main

// This file resolves the console's theme (deployment.json's "theme") for
// the terminal, once per command: the trust prompt and the console share
// the answer, so an "auto" terminal is asked its background at most once,
// and always before a Bubble Tea program takes the terminal.

import (
	"io"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/trust"
	"github.com/guildhall/guildhall/tui"
)

// consoleTheme is the theme for setting on the terminal out writes to:
// dark and light as they are; auto (or unset) as the terminal's
// background says (tui.DetectTheme), detected on first use and remembered
// in c for the rest of the command.
func (c *commonFlags) consoleTheme(setting string, out io.Writer) string {
	switch setting {
	case runner.ThemeDark, runner.ThemeLight:
		return setting
	}
	if c.detectedTheme == "" {
		c.detectedTheme = tui.DetectTheme(runner.ThemeAuto, out)
	}
	return c.detectedTheme
}

// operatorTheme is the theme setting of the operator's own
// deployment.json, for the commands that load no deployment (attach): a
// file that does not load gives auto, since colours are no reason to
// refuse to attach.
func operatorTheme() string {
	op, err := trust.Operator()
	if err != nil {
		return runner.ThemeAuto
	}
	d, err := operatorDeployment(op)
	if err != nil {
		return runner.ThemeAuto
	}
	return d.Theme
}
