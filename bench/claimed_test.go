package bench

import (
	"bytes"
	"strings"
	"testing"
)

// claimedReport: a small model's suite as the issue found it: three runs
// ended success, two of them failed validation; one run ended error.
func claimedReport() *Report {
	v := "qwen-tiny"
	failed := &Check{Reasons: []string{"CONTRIBUTING.md: missing"}}
	return &Report{Suite: "starter", Repeat: 1, Variants: []string{v}, Results: []Result{
		{Benchmark: "contributing", Variant: v, Repetition: 1, Status: "success", Validation: failed},
		{Benchmark: "contributing", Variant: v, Repetition: 2, Status: "success", Pass: true, Validation: &Check{}},
		{Benchmark: "fix-tests", Variant: v, Repetition: 1, Status: "success", Validation: failed},
		{Benchmark: "fix-tests", Variant: v, Repetition: 2, Status: "error", Validation: failed},
	}}
}

// TestTableCountsSuccessThatFailedValidation: the table counts, per
// benchmark and per variant, the runs that ended "success, validation
// failed", and lists every run with its status beside its verdict.
func TestTableCountsSuccessThatFailedValidation(t *testing.T) {
	r := claimedReport()
	if a := Sum(r.Results); a.SuccessButFailed != 2 || a.Passes != 1 {
		t.Fatalf("aggregate %+v", a)
	}
	var out bytes.Buffer
	WriteTable(&out, r)
	table := out.String()
	lines := strings.Split(table, "\n")
	if !strings.Contains(lines[0], "CLAIMED") {
		t.Fatalf("no CLAIMED column:\n%s", table)
	}
	for bench, want := range map[string]string{"contributing": "1", "fix-tests": "1"} {
		f := strings.Fields(findLine(lines, bench+" "))
		if len(f) < 7 || f[6] != want {
			t.Errorf("%s row %v: CLAIMED %s", bench, f, want)
		}
	}
	for _, want := range []string{`CLAIMED: runs that ended "success, validation failed"`, "2 success, validation failed", "\nRuns\n"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	runRow := func(bench, rep string) string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) >= 5 && f[0] == bench && f[1] == rep {
				return l
			}
		}
		return ""
	}
	if run := runRow("fix-tests", "1"); strings.Join(strings.Fields(run), " ") != "fix-tests 1 qwen-tiny success fail ← success, validation failed" {
		t.Errorf("run row %q:\n%s", run, table)
	}
	if run := runRow("contributing", "2"); strings.Join(strings.Fields(run), " ") != "contributing 2 qwen-tiny success pass" {
		t.Errorf("a passing run %q", run)
	}
	if errRow := runRow("fix-tests", "2"); strings.Join(strings.Fields(errRow), " ") != "fix-tests 2 qwen-tiny error fail" {
		t.Errorf("an error run is not a claimed success: %q", errRow)
	}
	line := ResultLine(r.Results[0], Status{Done: 1, Total: 4})
	if !strings.Contains(line, "FAIL contributing #1 (qwen-tiny): success (success, validation failed), 0 tokens") {
		t.Errorf("result line %q", line)
	}
}

// TestHTMLReportCountsSuccessThatFailedValidation: the report names and
// counts them, and each run row shows status beside verdict.
func TestHTMLReportCountsSuccessThatFailedValidation(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, claimedReport()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<th>success, validation failed</th>", `<td class="fail">2</td>`,
		"<th>status</th><th>verdict</th>", `<td>success <span class="fail">(success, validation failed)</span></td><td class="fail">fail</td>`,
		"1 success, validation failed"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
