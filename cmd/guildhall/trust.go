package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/trust"
	"github.com/guildhall/guildhall/tools"
)

// trustState is what was decided about a workspace's own configuration,
// and why: shown by `guildhall check`, the console header and the run's
// run_started event.
type trustState struct {
	// state is trust.Trusted (applied), trust.Ignored (not applied), or ""
	// when the workspace supplies no configuration.
	state trust.Decision
	// source says who decided: "--trust-workspace", "remembered <date>",
	// "you, in the console", or why nothing was asked.
	source string
	files  []string
	notes  []string
}

// info is the run_started form of the decision.
func (t trustState) info() *event.WorkspaceConfig {
	if t.state == "" {
		return nil
	}
	return &event.WorkspaceConfig{State: string(t.state), Source: t.source, Files: t.files}
}

// summary is the one-line form for the console header and `check`.
func (t trustState) summary() string {
	switch t.state {
	case trust.Trusted:
		return "workspace config trusted (" + t.source + ")"
	case trust.Ignored:
		return "workspace config ignored (" + t.source + ")"
	}
	return ""
}

// setupLines describe what this setup runs with — the sandbox policy and
// the workspace trust decision — for the console's and the browser's
// headers.
func (s *setup) setupLines() []string {
	var lines []string
	if p := s.sandbox.policy.Summary(); p != "" {
		lines = append(lines, p)
	}
	if t := s.trust.summary(); t != "" {
		lines = append(lines, t)
	}
	return lines
}

// setupLine is setupLines as one line.
func (s *setup) setupLine() string { return strings.Join(s.setupLines(), " · ") }

// trustPrompt is what the operator is asked about a workspace.
type trustPrompt struct {
	Workspace string
	Files     []string
	Changes   []trust.Change
	// Changed is set when an earlier decision was about other contents.
	Changed *trust.Record
	// Theme is the operator's theme setting (their deployment.json's):
	// the workspace's files are not applied while it asks.
	Theme string
}

// askTrust puts a prompt to the operator and returns the decision; a
// quit is an error.
type askTrust func(ctx context.Context, p trustPrompt) (trust.Decision, error)

// errQuitAtTrust ends the console when the operator quits at the trust
// prompt.
var errQuitAtTrust = errors.New("quit at the workspace trust prompt")

// decideTrust settles whether the workspace's own configuration applies:
// --trust-workspace, a remembered decision about the same contents, or the
// operator's answer when ask is set. Without any of them it is ignored,
// with a note saying how to apply it.
func (c *commonFlags) decideTrust(ctx context.Context, op trust.Dirs, ws string, found *trust.Found, base *runner.Deployment, baseGuild string, ask askTrust) (trustState, error) {
	if !found.Any() {
		return trustState{}, nil
	}
	st := trustState{files: found.Files}
	if !found.Usable() {
		if c.trustWorkspace {
			return st, usageErr(fmt.Errorf("--trust-workspace: the workspace's configuration cannot be used: %w", errors.Join(found.Problems...)))
		}
		st.state, st.source = trust.Ignored, "it does not load"
		for _, p := range found.Problems {
			st.notes = append(st.notes, "ignoring the workspace's configuration, which does not load: "+p.Error())
		}
		return st, nil
	}
	book := op.Book()
	rec, known, err := book.Lookup(ws)
	if err != nil {
		return st, &exitCodeError{code: exitError, err: err}
	}
	remember := func(d trust.Decision, source string) (trustState, error) {
		st.state, st.source = d, source
		r := trust.Record{Decision: d, Hash: found.Hash, Files: found.Files, At: time.Now().UTC()}
		if err := book.Remember(ctx, ws, r); err != nil {
			st.notes = append(st.notes, "could not remember the decision: "+err.Error())
		}
		return st, nil
	}
	switch {
	case c.trustWorkspace:
		return remember(trust.Trusted, "--trust-workspace")
	case known && rec.Hash == found.Hash:
		st.state, st.source = rec.Decision, "remembered from "+rec.At.Local().Format("2006-01-02")
		return st, nil
	case ask != nil:
		p := trustPrompt{Workspace: ws, Files: found.Files, Changes: found.Changes(base, baseGuild), Theme: base.Theme}
		if known {
			p.Changed = &rec
		}
		d, err := ask(ctx, p)
		if err != nil {
			return st, err
		}
		return remember(d, "you, in the console")
	}
	st.state, st.source = trust.Ignored, "not trusted yet"
	why := "it is not trusted"
	if known {
		why = fmt.Sprintf("its files changed since you %s them on %s", rec.Decision, rec.At.Local().Format("2006-01-02"))
	}
	st.notes = append(st.notes, fmt.Sprintf("ignoring the workspace's %s: %s; review them, then pass --trust-workspace or run `guildhall trust`", strings.Join(found.Files, ", "), why))
	return st, nil
}

func newTrustCmd(common *commonFlags) *cobra.Command {
	var revoke, list, yes bool
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Trust the workspace's own guild/ and deployment.json (or --revoke, --list)",
		Long: `A workspace's own guild/ and deployment.json are the workspace's, not yours:
Guildhall applies them only once you trust that workspace. This shows what
they would change and asks; the decision is remembered for the workspace's
path and the files' contents, and asked again when the files change.
--yes trusts without asking, --revoke forgets the decision, --list shows
every remembered decision.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			op, err := trust.Operator()
			if err != nil {
				return &exitCodeError{code: exitError, err: err}
			}
			out := cmd.OutOrStdout()
			if list {
				return listTrust(out, op.Book())
			}
			ws, err := common.workspaceDir()
			if err != nil {
				return err
			}
			if revoke {
				found, err := op.Book().Forget(cmd.Context(), ws)
				if err != nil {
					return &exitCodeError{code: exitError, err: err}
				}
				if !found {
					fmt.Fprintln(out, "no decision was remembered for", render.SanitizeLine(ws))
					return nil
				}
				fmt.Fprintln(out, "forgot the decision for", render.SanitizeLine(ws))
				return nil
			}
			return trustHere(cmd, op, ws, yes)
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget the decision about this workspace")
	cmd.Flags().BoolVar(&list, "list", false, "list every remembered decision")
	cmd.Flags().BoolVar(&yes, "yes", false, "trust without asking")
	return cmd
}

// trustHere shows what the workspace's configuration would change and
// records the operator's answer.
func trustHere(cmd *cobra.Command, op trust.Dirs, ws string, yes bool) error {
	out := cmd.OutOrStdout()
	base, err := operatorDeployment(op)
	if err != nil {
		return err
	}
	wst, err := tools.OpenWorkspace(ws)
	if err != nil {
		return usageErr(err)
	}
	found := trust.Discover(wst, base)
	wst.Close()
	if !found.Any() {
		fmt.Fprintln(out, "this workspace supplies no configuration (no guild/, no deployment.json): there is nothing to trust")
		return nil
	}
	if !found.Usable() {
		return usageErr(fmt.Errorf("the workspace's configuration does not load, so it cannot be trusted: %w", errors.Join(found.Problems...)))
	}
	baseGuild := "the seed guild"
	if dir, ok := operatorGuild(op); ok {
		baseGuild = "your guild " + dir
	}
	writeTrustPrompt(out, trustPrompt{Workspace: ws, Files: found.Files, Changes: found.Changes(base, baseGuild)})
	if !yes {
		fmt.Fprint(out, "Trust this workspace's configuration? [y/N] ")
		line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(out, "not trusted; nothing was changed")
			return nil
		}
	}
	r := trust.Record{Decision: trust.Trusted, Hash: found.Hash, Files: found.Files, At: time.Now().UTC()}
	if err := op.Book().Remember(cmd.Context(), ws, r); err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	fmt.Fprintln(out, "trusted; Guildhall applies these files here until they change")
	return nil
}

// writeTrustPrompt prints what trusting a workspace would change: the
// warnings first, with their count, then the files and the rest, so that
// a long guild cannot push a warning past what the operator reads. Every
// string from the workspace goes through the sanitiser.
func writeTrustPrompt(out io.Writer, p trustPrompt) {
	fmt.Fprintf(out, "The workspace %s supplies its own configuration.\n", render.SanitizeLine(p.Workspace))
	if p.Changed != nil {
		fmt.Fprintf(out, "These files changed since you %s them on %s.\n", p.Changed.Decision, p.Changed.At.Local().Format("2006-01-02"))
	}
	var warn, rest []trust.Change
	for _, ch := range p.Changes {
		if ch.Warn {
			warn = append(warn, ch)
		} else {
			rest = append(rest, ch)
		}
	}
	switch len(warn) {
	case 0:
		fmt.Fprintln(out, "No warnings.")
	case 1:
		fmt.Fprintln(out, "1 warning:")
	default:
		fmt.Fprintf(out, "%d warnings:\n", len(warn))
	}
	for _, ch := range warn {
		fmt.Fprintln(out, "  ! "+render.SanitizeLine(ch.Text))
	}
	fmt.Fprintln(out, "Files:")
	for _, f := range p.Files {
		fmt.Fprintln(out, "  "+render.SanitizeLine(f))
	}
	if len(rest) > 0 {
		if len(warn) > 0 {
			fmt.Fprintln(out, "Trusting it would also:")
		} else {
			fmt.Fprintln(out, "Trusting it would:")
		}
		for _, ch := range rest {
			fmt.Fprintln(out, "  - "+render.SanitizeLine(ch.Text))
		}
	}
	fmt.Fprintln(out, "Keys are never sent to an endpoint the workspace chose.")
}

func listTrust(out io.Writer, book *trust.Book) error {
	paths, recs, err := book.List()
	if err != nil {
		return &exitCodeError{code: exitError, err: err}
	}
	if len(paths) == 0 {
		fmt.Fprintln(out, "no workspace decisions remembered in", render.SanitizeLine(book.Path()))
		return nil
	}
	for _, p := range paths {
		r := recs[p]
		fmt.Fprintf(out, "%s  %s  %s  (%s)\n", r.At.Local().Format("2006-01-02"), r.Decision, render.SanitizeLine(p), render.SanitizeLine(strings.Join(r.Files, ", ")))
	}
	return nil
}
