package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/store"
)

func newSettingsCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "settings [--effort E] [--log-level L]",
		Short: "Show or set the project defaults (.orchestration/settings.json)",
		Long: `With no flags, print the project defaults. --effort (quick, standard,
thorough) and --log-level (full, standard) set them; an empty value
(--effort "") clears one, so the built-in default applies. A run's own
--effort or --log-level still wins over these.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := common.workspaceDir()
			if err != nil {
				return err
			}
			ws := store.Workspace{Dir: dir}
			setEffort, setLevel := cmd.Flags().Changed("effort"), cmd.Flags().Changed("log-level")
			if setEffort {
				if err := store.CheckEffort(common.effort); err != nil {
					return usageErr(fmt.Errorf("--effort: %w", err))
				}
			}
			if setLevel {
				if err := store.CheckLogLevel(common.logLevel); err != nil {
					return usageErr(fmt.Errorf("--log-level: %w", err))
				}
			}
			out := cmd.OutOrStdout()
			s, bad := ws.LoadSettings()
			malformed := bad != nil
			if setEffort || setLevel {
				if setEffort {
					s.Effort = common.effort
				}
				if setLevel {
					s.LogLevel = common.logLevel
				}
				if err := ws.WriteSettings(s); err != nil {
					return &exitCodeError{code: exitError, err: err}
				}
				if malformed {
					fmt.Fprintln(cmd.ErrOrStderr(), "note: the unreadable settings.json was replaced:", render.SanitizeLine(bad.Error()))
				}
				fmt.Fprintln(out, "saved", filepath.Join(ws.Orchestration(), store.SettingsFile))
			} else if malformed {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: settings.json reads as empty ("+render.SanitizeLine(bad.Error())+"); setting a value replaces it")
			}
			printSettings(out, s)
			return nil
		},
	}
}

func printSettings(out io.Writer, s store.Settings) {
	row := func(name, value, builtin string) {
		if value == "" {
			fmt.Fprintf(out, "%-10s %-9s (built-in default)\n", name, builtin)
			return
		}
		fmt.Fprintf(out, "%-10s %-9s (project setting)\n", name, render.SanitizeLine(value))
	}
	row("effort", s.Effort, "standard")
	row("log level", s.LogLevel, "full")
}
