package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/store"
)

// TestShowPrintsTheThread runs the scripted demo headless (answering its
// question on stdin), then shows the run: the card is followed by the
// thread, with the operator's and the orchestrator's turns and nothing of
// the roles' inner work.
func TestShowPrintsTheThread(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	res := runCLI(t, "1\n", "demo", "--headless", "--speed", "0", "--into", dir)
	if res.code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	ids, err := store.Workspace{Dir: dir}.ListRunIDs()
	if err != nil || len(ids) != 1 {
		t.Fatalf("runs: %v %v", ids, err)
	}
	show := runCLI(t, "", "show", "--workspace", dir, ids[0])
	if show.code != 0 {
		t.Fatalf("show exit %d: %s", show.code, show.stderr)
	}
	out := show.stdout
	i := strings.Index(out, "\nThread\n")
	if i < 0 || !strings.Contains(out[:i], "Status   success") {
		t.Fatalf("want the card, then a Thread section:\n%s", out)
	}
	thread := out[i:]
	for _, want := range []string{
		"1 run · 0 continuations · 1 question asked, 1 answered",
		"Run " + ids[0] + " started",
		"Operator · task of " + ids[0],
		"Orchestrator asked",
		"only fix the failing tests, or also look at accented",
		"transliterated",
		"Operator answered",
		"Only fix the failing tests",
		"Orchestrator · result (success)",
		"Run finished: success",
	} {
		if !strings.Contains(thread, want) {
			t.Errorf("the thread lacks %q", want)
		}
	}
	// The shown run's task and result are on the card; the thread marks
	// their place instead of printing them again.
	for _, once := range []string{"Fix the slugify function", "now trims hyphens from", "Still a documented limitation"} {
		if n := strings.Count(out, once); n != 1 {
			t.Errorf("%q is printed %d times, want once", once, n)
		}
	}
	if n := strings.Count(thread, "(shown above)"); n != 2 {
		t.Errorf("the thread marks %d entries as shown above, want the task and the result:\n%s", n, thread)
	}
	order := []string{"started", "Operator · task", "Orchestrator asked", "Operator answered", "Orchestrator · result", "Run finished"}
	at := 0
	for _, s := range order {
		j := strings.Index(thread[at:], s)
		if j < 0 {
			t.Fatalf("%q is missing or out of order in\n%s", s, thread)
		}
		at += j
	}
	for _, bad := range []string{
		"A tiny, dependency-free shell library", // a tool result
		"Verdict: findings",                     // a child role's result
		"Plan written to",                       // the planner's result
		"One question is worth asking",          // reasoning
		"for this run. Before anyone changes",   // an internal turn
		"\x1b",                                  // notty output carries no escapes
	} {
		if strings.Contains(thread, bad) {
			t.Errorf("the thread shows %q", bad)
		}
	}
	// The scripted model also wrote the run's one-line summary.
	if !strings.Contains(out[:i], "Summary  ") {
		t.Errorf("the card lacks the generated summary:\n%s", out[:i])
	}
}

func TestShowThreadOfAnUnreadableRun(t *testing.T) {
	dir := t.TempDir()
	res := runCLI(t, "", "show", "--workspace", dir, "run-20260101-000000")
	if res.code != exitError || strings.Contains(res.stdout, "Thread") {
		t.Fatalf("a missing run: exit %d, stdout %q", res.code, res.stdout)
	}
}
