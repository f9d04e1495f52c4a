package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/runner/demo"
	"github.com/guildhall/guildhall/runner/seed"
)

type demoFlags struct {
	headless bool
	speed    float64
	keep     bool
	into     string
	runFlags
}

func newDemoCmd(common *commonFlags) *cobra.Command {
	df := &demoFlags{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the offline demo: the seed guild on a scripted model",
		Long: `Run the embedded seed guild against a fresh temporary copy of a sample
workspace (a small project with a failing test), driven by an embedded
scripted model. Real tools run for real; only the model is scripted. It
needs no network and no key.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !df.headless {
				if err := needTerminal(cmd, nil); err != nil {
					return err
				}
			}
			ctx, stop := signalContext()
			defer stop()
			s, cleanup, err := demoSetup(df, common.keys)
			if err != nil {
				return err
			}
			defer cleanup()
			if err := common.applyDemoSandbox(s, cmd.ErrOrStderr()); err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "demo workspace:", s.workspace+demoDirNote(df))
			if !df.headless {
				return runConsoleWith(cmd, common, s, seed.DemoTask())
			}
			return headlessRun(ctx, cmd, common, &df.runFlags, s, seed.DemoTask())
		},
	}
	cmd.Flags().BoolVar(&df.headless, "headless", false, "print the run instead of opening the console")
	cmd.Flags().Float64Var(&df.speed, "speed", 1, "scale the scripted model's thinking time (0 = instant)")
	cmd.Flags().BoolVar(&df.keep, "keep", false, "keep the temporary workspace after the demo")
	cmd.Flags().StringVar(&df.into, "into", "", "copy the sample workspace into DIR (new or empty) and keep it, instead of a temporary folder")
	cmd.Flags().BoolVar(&df.json, "json", false, "with --headless, print log events as NDJSON")
	cmd.Flags().BoolVar(&df.noInput, "no-input", false, "answer ask_human with a \"no operator available\" tool error")
	return cmd
}

// demoSetup copies the sample workspace and builds the scripted provider.
func demoSetup(df *demoFlags, keys keyring) (*setup, func(), error) {
	dir, err := demoDir(df)
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() {
		if !df.keep && df.into == "" {
			os.RemoveAll(dir)
		}
	}
	dm, err := demo.Setup(dir, df.speed)
	if err != nil {
		cleanup()
		return nil, nil, &exitCodeError{code: exitError, err: err}
	}
	records, err := recordsOf(dir, keys)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return &setup{workspace: dir, ephemeral: !df.keep && df.into == "", guild: dm.Guild, deployment: dm.Deployment, provider: dm.Provider, records: records}, cleanup, nil
}

// demoDirNote says what becomes of the demo workspace, so the operator
// knows to pass --keep before the folder is gone.
func demoDirNote(df *demoFlags) string {
	switch {
	case df.into != "":
		return ""
	case df.keep:
		return " (kept after the demo: --keep)"
	}
	return " (temporary: removed when the demo ends; run with --keep to keep it, or --into DIR)"
}

// demoDir is the folder the sample workspace is copied into.
func demoDir(df *demoFlags) (string, error) {
	if df.into == "" {
		dir, err := os.MkdirTemp("", "guildhall-demo-")
		if err != nil {
			return "", &exitCodeError{code: exitError, err: fmt.Errorf("create demo workspace: %w", err)}
		}
		return dir, nil
	}
	abs, err := filepath.Abs(df.into)
	if err != nil {
		return "", usageErr(fmt.Errorf("--into %s: %w", df.into, err))
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return "", usageErr(fmt.Errorf("--into %s: the folder is not empty; give a new or empty folder", df.into))
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", usageErr(fmt.Errorf("--into %s: %w", df.into, err))
	}
	return abs, nil
}
