package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/guildhall/guildhall/render"
)

// args describes a command's positional arguments, so that a wrong count
// says what is missing with an example instead of cobra's "accepts 1
// arg(s), received 0". Every such mistake is a usage error (exit 2).
type args struct {
	min, max int    // max < 0: no limit
	what     string // "the task to run"
	example  string // guildhall run "Add a --verbose flag"
	// oneText marks a single free-text argument (a task): more words
	// than max are most likely an unquoted sentence.
	oneText bool
	// hint follows the message: where the operator finds what to pass.
	hint string
}

func (a args) validate(cmd *cobra.Command, got []string) error {
	path := cmd.CommandPath()
	switch {
	case len(got) < a.min:
		return usageErr(fmt.Errorf("%s needs %s, e.g. %s%s", path, a.what, a.example, a.hintText()))
	case a.max >= 0 && len(got) > a.max && a.oneText:
		return usageErr(fmt.Errorf("%s takes %s as one argument, but got %d words; quote it: %s %s",
			path, a.what, len(got), path, shellQuote(strings.Join(got, " "))))
	case a.max >= 0 && len(got) > a.max:
		return usageErr(fmt.Errorf("%s takes %s, but got %d arguments (%s); e.g. %s%s",
			path, a.what, len(got), quoteArgs(got), a.example, a.hintText()))
	}
	return nil
}

func (a args) hintText() string {
	if a.hint == "" {
		return ""
	}
	return " (" + a.hint + ")"
}

// noArgs refuses arguments; for a command with subcommands an argument is
// an unknown subcommand, with the nearest names suggested.
func noArgs(cmd *cobra.Command, got []string) error {
	if len(got) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		return unknownCommand(cmd, got[0], "")
	}
	return usageErr(fmt.Errorf("%s takes no arguments, but got %s (%s --help shows how to use it)", cmd.CommandPath(), quoteArgs(got), cmd.CommandPath()))
}

// rootArgs is the root command's [TASK]: one task, or a mistyped
// subcommand. A single word close to a command's name is taken for the
// command; after "--" it is a task whatever it looks like.
func rootArgs(cmd *cobra.Command, got []string) error {
	if len(got) >= 1 && cmd.ArgsLenAtDash() != 0 && !strings.ContainsAny(got[0], " \t\n") {
		if near := nearestCommands(cmd, got[0]); len(near) > 0 {
			tail := fmt.Sprintf(" (for a one-word task, write guildhall -- %s)", shellQuote(got[0]))
			if len(got) > 1 {
				tail = fmt.Sprintf(" (for a task, quote it: guildhall %s)", shellQuote(strings.Join(got, " ")))
			}
			return unknownCommand(cmd, got[0], tail)
		}
	}
	return args{max: 1, what: "the task", oneText: true}.validate(cmd, got)
}

func unknownCommand(cmd *cobra.Command, name, tail string) error {
	msg := fmt.Sprintf("unknown command %q for %s", render.SanitizeLine(name), cmd.CommandPath())
	if near := nearestCommands(cmd, name); len(near) > 0 {
		msg += "; did you mean " + orList(near, func(s string) string { return cmd.CommandPath() + " " + s }) + "?"
	} else {
		msg += fmt.Sprintf(" (%s --help lists the commands)", cmd.CommandPath())
	}
	return usageErr(fmt.Errorf("%s%s", msg, tail))
}

// nearestCommands are the subcommands of cmd whose name or alias is a
// likely mistyping of name.
func nearestCommands(cmd *cobra.Command, name string) []string {
	var out []string
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		for _, n := range append([]string{c.Name()}, c.Aliases...) {
			if likelyTypo(name, n) {
				out = append(out, c.Name())
				break
			}
		}
	}
	return out
}

// flagError turns pflag's parse errors into usage errors; an unknown flag
// gets the nearest flag of the command, or the commands that do have it.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		if _, short, ok := strings.Cut(msg, "unknown shorthand flag: '"); ok && len(short) > 0 {
			return usageErr(fmt.Errorf("unknown flag -%s for %s (%s --help lists its flags)", render.SanitizeLine(string([]rune(short)[0])), cmd.CommandPath(), cmd.CommandPath()))
		}
		return usageErr(err)
	}
	name = render.SanitizeLine(name)
	var known []string
	visit := func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(known, f.Name) {
			known = append(known, f.Name)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	var near []string
	for _, k := range known {
		if likelyTypo(name, k) {
			near = append(near, k)
		}
	}
	base := fmt.Sprintf("unknown flag --%s for %s", name, cmd.CommandPath())
	if len(near) > 0 {
		return usageErr(fmt.Errorf("%s; did you mean %s?", base, orList(near, func(s string) string { return "--" + s })))
	}
	if owners := flagOwners(cmd.Root(), name); len(owners) > 0 {
		return usageErr(fmt.Errorf("%s; --%s is a flag of %s", base, name, commandList(owners)))
	}
	// A flag of another command, mistyped.
	for _, k := range allFlags(cmd.Root()) {
		if likelyTypo(name, k) {
			return usageErr(fmt.Errorf("%s; did you mean --%s, a flag of %s?", base, k, commandList(flagOwners(cmd.Root(), k))))
		}
	}
	return usageErr(fmt.Errorf("%s (%s --help lists its flags)", base, cmd.CommandPath()))
}

// commandList names at most three commands.
func commandList(cmds []string) string {
	if len(cmds) > 3 {
		return strings.Join(cmds[:3], ", ") + " and others"
	}
	return orList(cmds, func(s string) string { return s })
}

// allFlags are the names of every command's own flags, sorted.
func allFlags(c *cobra.Command) []string {
	var out []string
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(out, f.Name) {
			out = append(out, f.Name)
		}
	})
	for _, sub := range c.Commands() {
		for _, n := range allFlags(sub) {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// flagOwners are the commands that define a flag of that name.
func flagOwners(c *cobra.Command, name string) []string {
	var out []string
	if f := c.LocalFlags().Lookup(name); f != nil && !f.Hidden {
		out = append(out, c.CommandPath())
	}
	for _, sub := range c.Commands() {
		out = append(out, flagOwners(sub, name)...)
	}
	return out
}

// likelyTypo reports whether typed is a mistyping of name: within one edit
// (a transposition counts as one), two when both have five letters or
// more, or a prefix of at least three letters. "test" is not "trust".
func likelyTypo(typed, name string) bool {
	typed, name = strings.ToLower(typed), strings.ToLower(name)
	if typed == name {
		return false
	}
	if len(typed) >= 3 && strings.HasPrefix(name, typed) {
		return true
	}
	limit := 1
	if min(len([]rune(name)), len([]rune(typed))) >= 5 {
		limit = 2
	}
	return editDistance(typed, name) <= limit
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and adjacent transpositions, in runes.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}

func orList(items []string, f func(string) string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = f(s)
	}
	switch len(out) {
	case 1:
		return out[0]
	case 2:
		return out[0] + " or " + out[1]
	}
	return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
}

func quoteArgs(got []string) string {
	out := make([]string, len(got))
	for i, s := range got {
		out[i] = fmt.Sprintf("%q", render.SanitizeLine(s))
	}
	return strings.Join(out, " ")
}

// shellQuote quotes s for a POSIX shell, so a suggested command line can
// be pasted back: double quotes when nothing in s is special inside them,
// else single quotes.
func shellQuote(s string) string {
	s = render.SanitizeLine(s)
	if s != "" && !strings.ContainsAny(s, " \t'\"$`\\!*?[]{}()<>|&;#~") {
		return s
	}
	if !strings.ContainsAny(s, "\"$`\\!") {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
