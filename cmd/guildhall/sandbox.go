package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// sandboxFlags is --sandbox, on every command (docs/operations.md,
// "The sandbox").
type sandboxFlags struct {
	mode string
}

func (f *sandboxFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.mode, "sandbox", "", "confine the commands tools run: workspace-write (the default), read-only, or none (unconfined); overrides deployment.json's sandbox.mode")
}

// sandboxState is the resolved sandbox of a setup: the process's host
// (its process registry and bubblewrap) and the policy.
type sandboxState struct {
	host   *sandbox.Host
	policy sandbox.Policy
}

// noneWarning is printed at every start with the sandbox off.
const noneWarning = "guildhall: warning: sandbox none: run_shell, typecheck, test, the git tools and MCP servers run unconfined, with this account's files, network and processes (see docs/security.md)"

// resolveSandbox applies --sandbox to the deployment's policy and checks
// that this machine can enforce it, before anything else happens: a
// sandbox that cannot work is a configuration error (exit 2), never a
// silent fall back to running unconfined. With the sandbox off it prints
// the warning.
func (c *commonFlags) resolveSandbox(ws string, d *runner.Deployment) (sandboxState, error) {
	if c.sandbox.mode != "" {
		m, err := sandbox.ParseMode(c.sandbox.mode)
		if err != nil {
			return sandboxState{}, usageErr(fmt.Errorf("--sandbox %q is not one of workspace-write, read-only, none", c.sandbox.mode))
		}
		d.Sandbox.Mode = string(m)
	}
	p, err := sandbox.NewPolicy(d.Sandbox)
	if err != nil {
		return sandboxState{}, usageErr(fmt.Errorf("%s: %w", d.Source, err))
	}
	st := sandboxState{host: sandbox.NewHost(), policy: p}
	if !p.Confined() {
		fmt.Fprintln(os.Stderr, noneWarning)
		return st, nil
	}
	if err := st.host.Check(p); err != nil {
		return sandboxState{}, usageErr(err)
	}
	canon, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return sandboxState{}, usageErr(fmt.Errorf("--workspace %s: %w", ws, err))
	}
	if err := sandbox.CheckWorkspace(p, canon); err != nil {
		return sandboxState{}, usageErr(err)
	}
	return st, nil
}

// demoUnconfined says why the demo runs without the sandbox.
const demoUnconfined = "guildhall: note: the sandbox is not available here (%s); the demo runs its own embedded sample project unconfined. " +
	"Real runs refuse to start without it: install bubblewrap (apt install bubblewrap) to see the demo sandboxed too."

// applyDemoSandbox resolves the demo's sandbox. The demo's workspace is
// Guildhall's own embedded sample and its model a script, so nothing in it
// is hostile: when the default sandbox cannot work on this machine (a
// fresh machine has no bubblewrap), the demo says so and runs unconfined
// rather than refusing, so the README's first command works anywhere. An
// explicit --sandbox is obeyed as it is everywhere else.
func (c *commonFlags) applyDemoSandbox(s *setup, errOut io.Writer) error {
	st, err := c.resolveSandbox(s.workspace, s.deployment)
	if err != nil && c.sandbox.mode == "" {
		fmt.Fprintf(errOut, demoUnconfined+"\n", render.SanitizeLine(err.Error()))
		s.deployment.Sandbox.Mode = string(sandbox.None)
		p, perr := sandbox.NewPolicy(s.deployment.Sandbox)
		if perr != nil {
			return usageErr(perr)
		}
		st, err = sandboxState{host: sandbox.NewHost(), policy: p}, nil
	}
	if err != nil {
		return err
	}
	s.sandbox = st
	return nil
}

// printSandboxSummary is a headless run's first line: the policy at a
// glance (on stderr with --json, whose stdout is NDJSON only), and, at the
// workspace's first run, what the sandbox shows its toolchains.
func printSandboxSummary(out, errOut io.Writer, json bool, s *setup) {
	if json {
		out = errOut
	}
	fmt.Fprintln(out, s.sandbox.policy.Summary())
	if firstRun(s.workspace) {
		printToolchains(context.Background(), out, s.sandbox.policy, s.workspace)
	}
}

// checkSandbox is `guildhall check`'s sandbox line: the policy, and
// whether this machine can enforce it.
func (c *commonFlags) checkSandbox(out io.Writer, ws string, d *runner.Deployment) (sandboxState, error) {
	st, err := c.resolveSandbox(ws, d)
	if err != nil {
		return sandboxState{}, err
	}
	fmt.Fprintf(out, "%s: ok\n", st.policy.Summary())
	printToolchains(context.Background(), out, st.policy, ws)
	return st, nil
}
