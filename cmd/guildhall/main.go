// Command guildhall is a terminal-first console for running a guild of
// language-model roles against a workspace.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/render"
)

// version is stamped at release time with -ldflags "-X main.version=...".
// Without it, the version comes from the module's build information.
var version = "dev"

// Exit statuses (DESIGN.md "CLI").
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitNeedsInput  = 3
	exitInterrupted = 130
)

// exitError carries a process exit status through cobra.
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func usageErr(err error) error { return &exitCodeError{code: exitUsage, err: err} }

func main() {
	beforeCLI()
	keys := takeKeys()
	os.Exit(executeWith(keys, true, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// execute runs the CLI with the keys in the environment, leaving the
// process as it is (tests call it in-process).
func execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return executeWith(readKeys(), false, args, stdin, stdout, stderr)
}

// executeWith runs the CLI and returns the process exit status.
// ownsProcess says that the command is the process (main), so it may set
// process-wide things such as the scheduler's processors; a test running
// it in-process says false.
func executeWith(keys keyring, ownsProcess bool, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(keys, ownsProcess)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ce *exitCodeError
	if errors.As(err, &ce) {
		if ce.err != nil {
			fmt.Fprintln(stderr, "guildhall:", render.Sanitize(ce.err.Error()))
		}
		return ce.code
	}
	fmt.Fprintln(stderr, "guildhall:", render.Sanitize(err.Error()))
	return exitUsage
}

func newRootCmd(keys keyring, ownsProcess bool) *cobra.Command {
	root := &cobra.Command{
		Use:   "guildhall [TASK]",
		Short: "Run a guild of language-model roles against a workspace",
		Long: `Guildhall runs a guild of LLM roles (an orchestrator that delegates to a
planner, a coder, reviewers and acceptance) against the workspace, and shows
the run live in the terminal.

With no arguments it opens the console on the current directory; with a TASK
it opens the console and submits the task at once.`,
		Version:       versionString(version),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          rootArgs,
	}
	common := &commonFlags{keys: keys, ownsProcess: ownsProcess}
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) { settleIn(common, cmd.Annotations[settleAnnotation]) }
	root.RunE = func(cmd *cobra.Command, args []string) error { return runConsole(cmd, common, args) }
	root.AddCommand(
		newRunCmd(common),
		newDemoCmd(common),
		newRunsCmd(common),
		newAttachCmd(common),
		newShowCmd(common),
		newRevertCmd(common),
		newRecordsCmd(common),
		newResumeCmd(common),
		newCheckCmd(common),
		newServeCmd(common),
		newQueueCmd(common),
		newSettingsCmd(common),
		newTrustCmd(common),
		newBenchCmd(common),
		newFoundryCmd(common),
	)
	common.registerSharedFlags(root)
	root.SetFlagErrorFunc(flagError)
	return root
}
