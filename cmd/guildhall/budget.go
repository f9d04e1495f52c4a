package main

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/guildhall/guildhall/runner"
)

// budgetFlags are --max-wall, --max-tokens and --max-tool-calls: a run's
// budget (runner/budget.go, docs/operations.md "Budgets"), over the
// deployment's executor.budget. They apply to every run a command starts
// or resumes: run, resume, queue run and the console.
type budgetFlags struct {
	wall, tokens, toolCalls string
}

func (f *budgetFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.wall, "max-wall", "", "end a run once it has worked this long, e.g. 90m or 8h; 0 for no limit (default: executor.budget.maxWallSeconds, else no limit)")
	fs.StringVar(&f.tokens, "max-tokens", "", "end a run once its model calls have used this many prompt+completion tokens; 0 for no limit (default: executor.budget.maxTokens, else no limit)")
	fs.StringVar(&f.toolCalls, "max-tool-calls", "", "end a run after this many tool calls; 0 for no limit (default: executor.budget.maxToolCalls, else 2000)")
}

// apply sets the limits the flags give on d, recording the flag as their
// origin. A malformed value is a usage error.
func (f *budgetFlags) apply(d *runner.Deployment) error {
	if f.wall != "" {
		dur, err := time.ParseDuration(f.wall)
		if f.wall == "0" {
			dur, err = 0, nil
		}
		if err != nil || dur < 0 {
			return usageErr(fmt.Errorf("--max-wall %q is not a duration such as 90m or 4h (0 for no limit)", f.wall))
		}
		d.Executor.Budget.MaxWallSeconds = int(math.Ceil(dur.Seconds()))
		d.SetOrigin("executor.budget.maxWallSeconds", "--max-wall")
	}
	for _, l := range []struct {
		flag, value, path string
		dst               *int
	}{
		{"--max-tokens", f.tokens, "executor.budget.maxTokens", &d.Executor.Budget.MaxTokens},
		{"--max-tool-calls", f.toolCalls, "executor.budget.maxToolCalls", &d.Executor.Budget.MaxToolCalls},
	} {
		if l.value == "" {
			continue
		}
		n, err := strconv.Atoi(l.value)
		if err != nil || n < 0 {
			return usageErr(fmt.Errorf("%s %q is not a whole number (0 for no limit)", l.flag, l.value))
		}
		*l.dst = n
		d.SetOrigin(l.path, l.flag)
	}
	return nil
}
