package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
)

// WriteTable prints the report as a terminal table: a row per benchmark
// with each variant's passes, mean tokens, mean time, questions, tool calls
// and the runs that ended "success, validation failed" (CLAIMED), then one
// summary line per variant, best first, and, for two variants, the
// comparison's note; then every run with its status and its verdict side
// by side. Every name is stripped of terminal control.
func WriteTable(w io.Writer, r *Report) {
	ranked := r.Ranked()
	benches := r.Benchmarks()
	rows := [][]string{}
	head := []string{"BENCHMARK"}
	for _, v := range ranked {
		label := ""
		if len(ranked) > 1 {
			label = " " + shortName(v)
		}
		head = append(head, "PASS"+label, "TOKENS", "TIME", "ASKED", "TOOLS", "CLAIMED")
	}
	rows = append(rows, head)
	for _, b := range benches {
		row := []string{render.SanitizeLine(b)}
		for _, v := range ranked {
			a := Sum(r.Select(v, b))
			row = append(row, fmt.Sprintf("%d/%d", a.Passes, a.Runs), humanTokens(a.MeanTokens()),
				humanSeconds(a.MeanSeconds()), fmt.Sprint(a.Questions), fmt.Sprint(a.ToolCalls), fmt.Sprint(a.SuccessButFailed))
		}
		rows = append(rows, row)
	}
	writeColumns(w, rows)
	fmt.Fprintf(w, "CLAIMED: runs that ended %q: the run said it succeeded, the workspace says it did not.\n\n", SuccessButFailedName)
	for i, v := range ranked {
		a := Sum(r.Select(v, ""))
		fmt.Fprintf(w, "%d. %s: pass rate %.1f%% (%d/%d), score %.2f, %s tokens, %s, %d questions, %d tool calls, %d %s\n",
			i+1, render.SanitizeLine(v), 100*a.PassRate, a.Passes, a.Runs, a.Score,
			humanTokens(float64(a.Tokens.Total)), humanSeconds(a.Seconds), a.Questions, a.ToolCalls, a.SuccessButFailed, SuccessButFailedName)
		if m := roleModels(r.Select(v, "")); m != "" {
			fmt.Fprintln(w, "   models: "+m)
		}
	}
	if len(ranked) == 2 {
		fmt.Fprintln(w, render.SanitizeLine(Compare(r, ranked[0], ranked[1]).Note()))
	}
	writeRuns(w, r)
	if errs := harnessErrors(r); len(errs) > 0 {
		fmt.Fprintf(w, "%d runs could not be carried out:\n", len(errs))
		for _, e := range errs {
			fmt.Fprintln(w, "  "+render.SanitizeLine(e))
		}
	}
}

// writeRuns lists every run: its benchmark, repetition and variant, then
// its status and its verdict side by side, and the name of a run that
// ended "success, validation failed".
func writeRuns(w io.Writer, r *Report) {
	if len(r.Results) == 0 {
		return
	}
	fmt.Fprintln(w, "\nRuns")
	rows := [][]string{{"  BENCHMARK", "#", "VARIANT", "STATUS", "VERDICT", ""}}
	for _, x := range r.Results {
		mark := ""
		if x.SuccessButFailed() {
			mark = "← " + SuccessButFailedName
		}
		rows = append(rows, []string{"  " + render.SanitizeLine(x.Benchmark), fmt.Sprint(x.Repetition), shortName(x.Variant),
			render.SanitizeLine(x.Status), x.Verdict(), mark})
	}
	writeColumns(w, rows)
}

func harnessErrors(r *Report) []string {
	var out []string
	for _, x := range r.Results {
		if x.Error != "" {
			out = append(out, fmt.Sprintf("%s #%d (%s): %s", x.Benchmark, x.Repetition, x.Variant, x.Error))
		}
	}
	return out
}

func shortName(v string) string {
	v = render.SanitizeLine(v)
	if ansi.StringWidth(v) > 18 {
		return ansi.Truncate(v, 18, "…")
	}
	return v
}

func writeColumns(w io.Writer, rows [][]string) {
	widths := map[int]int{}
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-ansi.StringWidth(c)))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func humanTokens(n float64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", n/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.0fk", n/1e3)
	case n >= 1e3:
		return fmt.Sprintf("%.1fk", n/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}

func humanSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d >= 10*time.Second:
		return fmt.Sprintf("%.0fs", d.Seconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// ProgressLine is a one-line view of a suite in progress: a bar, the
// counts and what the runs are doing, cut to width.
func ProgressLine(st Status, width int) string {
	const barWidth = 20
	filled := 0
	if st.Total > 0 {
		filled = barWidth * st.Done / st.Total
	}
	line := fmt.Sprintf("[%s%s] %d/%d passed %d", strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), st.Done, st.Total, st.Passed)
	var doing []string
	for _, a := range st.Running {
		doing = append(doing, fmt.Sprintf("%s#%d %s", a.Benchmark, a.Repetition, a.Doing))
	}
	if len(doing) > 0 {
		line += "  " + strings.Join(doing, " | ")
	}
	line = render.SanitizeLine(line)
	if width > 0 && ansi.StringWidth(line) > width {
		line = ansi.Truncate(line, width, "…")
	}
	return line
}

// ResultLine is one finished run as a plain line (the progress output
// when standard error is not a terminal).
func ResultLine(r Result, st Status) string {
	verdict := "FAIL"
	if r.Pass {
		verdict = "pass"
	}
	extra, status := "", r.Status
	if r.SuccessButFailed() {
		status += " (" + SuccessButFailedName + ")"
	}
	if r.Error != "" {
		extra = " — " + r.Error
	} else if r.Validation != nil && len(r.Validation.Reasons) > 0 {
		extra = " — " + r.Validation.Reasons[0]
	}
	return render.SanitizeLine(fmt.Sprintf("[%d/%d] %s %s #%d (%s): %s, %s tokens, %s, %d asked%s",
		st.Done, st.Total, verdict, r.Benchmark, r.Repetition, r.Variant, status,
		humanTokens(float64(r.Tokens.Total)), humanSeconds(r.Seconds), r.QuestionsAsked, clip(extra, 200)))
}

// roleModels says which model each role ran on, over a variant's runs,
// when more than one model did the work (a model per role): "coder
// qwen-7b (fast); orchestrator qwen-32b". "" for a single model.
func roleModels(results []Result) string {
	byRole := map[string]map[string]bool{}
	models := map[string]bool{}
	for _, x := range results {
		for role, m := range x.RoleModels {
			if byRole[role] == nil {
				byRole[role] = map[string]bool{}
			}
			byRole[role][m] = true
			models[m] = true
		}
	}
	if len(models) < 2 {
		return ""
	}
	roles := make([]string, 0, len(byRole))
	for role := range byRole {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	parts := make([]string, 0, len(roles))
	for _, role := range roles {
		ms := make([]string, 0, len(byRole[role]))
		for m := range byRole[role] {
			ms = append(ms, m)
		}
		sort.Strings(ms)
		parts = append(parts, render.SanitizeLine(role)+" "+strings.Join(ms, ", "))
	}
	return strings.Join(parts, "; ")
}
