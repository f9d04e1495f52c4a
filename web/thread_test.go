package web

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/runner/thread"
)

func demoThreadRun(t *testing.T, ts *testServer) string {
	t.Helper()
	return addPastRunFile(t, ts.sess.WS, filepath.Join("..", "runner", "thread", "testdata", "thread", "demo.jsonl"), nil)
}

// TestThreadIsRunnersDerivation: the handler serves runner.LoadThread's
// thread (one derivation), bounded, and nothing of the run's internals.
func TestThreadIsRunnersDerivation(t *testing.T) {
	ts := newTestServer(t)
	id := demoThreadRun(t, ts)
	want, err := runner.LoadThread(ts.sess.WS, id)
	if err != nil {
		t.Fatal(err)
	}
	var th ThreadView
	res := ts.do("GET", "/api/runs/"+id+"/thread", nil, &th)
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || th.RunID != id || th.Identity != want.Identity || len(th.Entries) != len(want.Entries) {
		t.Fatalf("thread: %d %s", res.StatusCode, raw)
	}
	for i := range want.Entries {
		if th.Entries[i].Kind != want.Entries[i].Kind || th.Entries[i].Text != want.Entries[i].Text || !th.Entries[i].At.Equal(want.Entries[i].At) {
			t.Errorf("entry %d: %+v, want %+v", i, th.Entries[i], want.Entries[i])
		}
	}
	kinds := map[string]int{}
	for _, e := range th.Entries {
		kinds[e.Kind]++
	}
	if kinds[thread.Question] != 1 || kinds[thread.Answer] != 1 || kinds[thread.Human] != 1 || kinds[thread.Orchestrator] != 1 {
		t.Errorf("entries by kind %v", kinds)
	}
	if len(th.Lineage) != 1 || th.Lineage[0] != id {
		t.Errorf("lineage %v", th.Lineage)
	}
	for _, secret := range []string{"scripted-demo", "secret-model-name", "list_directory", "tool_result", "callId", "reasoning"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the thread carries %q", secret)
		}
	}
	// No model and nothing cached: the identity stands.
	waitFor(t, "the summary state to settle", func() bool {
		ts.do("GET", "/api/runs/"+id+"/thread", nil, &th)
		return th.SummaryState != SummaryPending
	})
	if th.SummaryState != SummaryUnavailable || th.Summary != nil {
		t.Errorf("summary without a model: %s %+v", th.SummaryState, th.Summary)
	}
}

// TestThreadSummaryIsMadeInTheBackground: with a summariser, the thread
// gains its generated title and description (cached with the run, so a
// server without a model shows it too); the model is never named.
func TestThreadSummaryIsMadeInTheBackground(t *testing.T) {
	sess := newFakeSession(t)
	model := provider.NewScripted(&provider.Script{Summaries: []string{`{"title": "Slug tests fixed", "description": "The operator asked to fix slugify; it was fixed."}`}}, 0)
	ts := newTestServerOn(t, sess, WithSummarizer(model, "secret-summary-model"))
	id := demoThreadRun(t, ts)
	var th ThreadView
	waitFor(t, "the thread summary", func() bool {
		ts.do("GET", "/api/runs/"+id+"/thread", nil, &th)
		return th.SummaryState == SummaryReady
	})
	if th.Summary == nil || th.Summary.Title != "Slug tests fixed" || !strings.Contains(th.Summary.Description, "slugify") {
		t.Fatalf("summary %+v", th.Summary)
	}
	res := ts.do("GET", "/api/runs/"+id+"/thread", nil, nil)
	raw, _ := io.ReadAll(res.Body)
	if strings.Contains(string(raw), "secret-summary-model") || strings.Contains(string(raw), "scripted") {
		t.Error("the thread names the model")
	}
	var c Config
	res = ts.do("GET", "/api/config", nil, &c)
	raw, _ = io.ReadAll(res.Body)
	if strings.Contains(string(raw), "secret-summary-model") {
		t.Error("the config names the summary model")
	}
	dir, _ := sess.WS.RunDir(id)
	if _, err := os.Stat(filepath.Join(dir, runner.ThreadSummaryFile)); err != nil {
		t.Errorf("the summary was not cached with the run: %v", err)
	}

	other := newTestServerOn(t, sess)
	waitFor(t, "the cached summary", func() bool {
		other.do("GET", "/api/runs/"+id+"/thread", nil, &th)
		return th.SummaryState != SummaryPending
	})
	if th.SummaryState != SummaryReady || th.Summary.Title != "Slug tests fixed" {
		t.Errorf("a server without a model does not show the cached summary: %s %+v", th.SummaryState, th.Summary)
	}
}
