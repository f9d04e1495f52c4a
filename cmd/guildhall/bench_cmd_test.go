package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/bench"
	"github.com/guildhall/guildhall/internal/sandboxtest"
)

// copySuite copies some of the starter suite's benchmarks into a fresh
// suite folder.
func copySuite(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		out, err := exec.Command("cp", "-r", filepath.Join("..", "..", "bench", "suite", n), filepath.Join(dir, n)).CombinedOutput()
		if err != nil {
			t.Fatalf("copy %s: %v %s", n, err, out)
		}
	}
	return dir
}

// TestBenchCommandPlaysASuite: guildhall bench with the scripted model
// runs the suite's scripts with the seed guild and writes a result per
// run, report.json and report.html; --one with an index and merge put a
// fanned-out run back together.
func TestBenchCommandPlaysASuite(t *testing.T) {
	sandboxtest.Need(t)
	suite := copySuite(t, "sh-fix-greeting", "sh-needs-question")
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := execute([]string{"bench", suite, "--provider", "script", "--effort", "quick", "--out", out, "--jobs", "2"}, strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	table := stdout.String()
	for _, row := range []string{"sh-fix-greeting", "sh-needs-question"} {
		if f := strings.Fields(findRow(table, row)); len(f) < 2 || f[1] != "1/1" {
			t.Errorf("row %s is not 1/1:\n%s", row, table)
		}
	}
	if !strings.Contains(table, "1. seed: pass rate 100.0% (2/2), score 0.97") {
		t.Errorf("summary:\n%s", table)
	}
	if !strings.Contains(stderr.String(), "[1/2] pass") || !strings.Contains(stderr.String(), "[2/2] pass") {
		t.Errorf("no progress lines on a pipe:\n%s", stderr.String())
	}
	for _, f := range []string{"seed.sh-fix-greeting.1.json", "seed.sh-needs-question.1.json", "report.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	var r bench.Result
	b, _ := os.ReadFile(filepath.Join(out, "seed.sh-needs-question.1.json"))
	if err := json.Unmarshal(b, &r); err != nil || !r.Pass || r.QuestionsAsked != 1 || r.Tokens.Total == 0 || r.ToolCalls == 0 {
		t.Errorf("result file: %+v %v", r, err)
	}

	// A cluster's fan-out: one benchmark per index, then merge.
	shards := t.TempDir()
	for i := range 2 {
		stdout.Reset()
		stderr.Reset()
		dir := filepath.Join(shards, string(rune('a'+i)))
		if code := execute([]string{"bench", suite, "--provider", "script", "--effort", "quick", "--one", string(rune('0' + i)), "--out", dir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("--one %d: exit %d %s", i, code, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
			t.Error("--one wrote an HTML report; merge does")
		}
	}
	stdout.Reset()
	html := filepath.Join(t.TempDir(), "merged.html")
	if code := execute([]string{"bench", "merge", "--html", html, shards}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("merge: exit %d %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "1. seed: pass rate 100.0% (2/2)") {
		t.Errorf("merged table:\n%s", stdout.String())
	}
	if _, err := os.Stat(html); err != nil {
		t.Error("merge wrote no HTML")
	}
}

func TestBenchCommandUsageErrors(t *testing.T) {
	suite := copySuite(t, "sh-fix-greeting")
	cases := map[string][]string{
		"--compare needs two variants":            {"bench", suite, "--compare"},
		"add --compare":                           {"bench", suite, "--guild", "a", "--guild", "b"},
		"--one needs --out DIR":                   {"bench", suite, "--one", "sh-fix-greeting"},
		`--one "nope": no such benchmark`:         {"bench", suite, "--one", "nope", "--out", t.TempDir()},
		"--repeat 0 is not between 1 and 1000":    {"bench", suite, "--repeat", "0"},
		"holds no benchmark":                      {"bench", t.TempDir()},
		`--baseline "aider" is not one of crush`:  {"bench", suite, "--baseline", "aider", "--compare", "--provider", "openai"},
		"needs an OpenAI-compatible endpoint":     {"bench", suite, "--baseline", "crush", "--compare", "--provider", "script"},
		"guildhall bench needs the suite folder":  {"bench"},
		"guildhall bench merge needs result fold": {"bench", "merge"},
	}
	for want, argv := range cases {
		var stdout, stderr bytes.Buffer
		code := execute(argv, strings.NewReader(""), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", argv, code, stderr.String(), want)
		}
	}
}

func findRow(table, name string) string {
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return ""
}
