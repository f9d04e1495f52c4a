package main

import "github.com/spf13/cobra"

func newFoundryCmd(common *commonFlags) *cobra.Command {
	return &cobra.Command{Use: "foundry", Short: "Improve a guild on a benchmark suite, and refuse changes that weaken isolation"}
}
