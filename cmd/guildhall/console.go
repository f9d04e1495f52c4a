package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// runConsole opens the terminal console on the workspace.
func runConsole(cmd *cobra.Command, common *commonFlags, args []string) error {
	return usageErr(errors.New("the terminal console is not built yet; use `guildhall run TASK` or `guildhall demo`"))
}

// runConsoleWith shows a prepared setup; until the console exists it prints
// the run headless.
func runConsoleWith(cmd *cobra.Command, common *commonFlags, s *setup, task string) error {
	ctx, stop := signalContext()
	defer stop()
	return headlessRun(ctx, cmd, common, &runFlags{}, s, task)
}
