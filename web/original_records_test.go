package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/thread"
	"github.com/guildhall/guildhall/store"
)

// TestOriginalRecordsThroughTheAPI: the runs the original system wrote
// are listed with their times and marked foreign; their role tree, flow,
// thread and transcripts are derived from its log shapes.
func TestOriginalRecordsThroughTheAPI(t *testing.T) {
	sess := newFakeSession(t)
	if err := os.CopyFS(sess.WS.Dir, os.DirFS(filepath.Join("..", "store", "testdata", "original-records"))); err != nil {
		t.Fatal(err)
	}
	ts := newTestServerOn(t, sess)

	var list struct{ Runs []RunSummary }
	ts.do("GET", "/api/runs", nil, &list)
	if len(list.Runs) != 4 {
		t.Fatalf("runs = %+v", list.Runs)
	}
	byID := map[string]RunSummary{}
	for _, r := range list.Runs {
		byID[r.RunID] = r
		if !r.Foreign || !r.Original || r.StartedAt.Year() != 2025 {
			t.Errorf("%s: foreign %v original %v started %v", r.RunID, r.Foreign, r.Original, r.StartedAt)
		}
	}
	a := byID["run-20250601-101500"]
	if !a.StartedAt.Equal(time.Date(2025, 6, 1, 10, 15, 0, 123e6, time.UTC)) || a.EndedAt == nil || a.EndedAt.Sub(a.StartedAt).Round(time.Second) != 402*time.Second {
		t.Errorf("times of %s: %v %v", a.RunID, a.StartedAt, a.EndedAt)
	}
	if a.Summary == nil || *a.Summary != "Added a --version flag to the CLI" || a.Result == nil || a.Result.Summary != "Added `--version`; the tests pass." {
		t.Errorf("summary and result of %s: %+v", a.RunID, a)
	}
	if e := byID["run-20250601-113000"].Result.Error; e == nil || !strings.Contains(string(e.Detail), "upstream connect error") {
		t.Errorf("the card's error.details: %+v", e)
	}

	var view RunView
	ts.do("GET", "/api/runs/run-20250601-101500", nil, &view)
	if len(view.RoleTree) != 1 || view.RoleTree[0].ID != "orchestrator-0-1" || len(view.RoleTree[0].Children) != 1 ||
		view.RoleTree[0].Children[0].ID != "coder-1-2" || view.RoleTree[0].Children[0].Outcome != "success" {
		t.Fatalf("role tree from parentRoleId: %+v", view.RoleTree)
	}

	var env render.Envelope
	ts.do("GET", "/api/runs/run-20250601-101500/flow", nil, &env)
	// Its log has no run_status: the entry role's card is the run's.
	for id, want := range map[string]string{"run-20250601-113000": "error", "run-20250601-120000": "running"} {
		var other render.Envelope
		ts.do("GET", "/api/runs/"+id+"/flow", nil, &other)
		if other.Model == nil || other.Model.Status != want {
			t.Errorf("flow status of %s = %+v, want %q", id, other.Model, want)
		}
	}
	if env.Model.Status != "success" {
		t.Errorf("flow status = %q, want success", env.Model.Status)
	}
	tools := map[string]int{}
	for _, op := range env.Model.Operations {
		if op.Tool != "" && op.Kind == render.OpCall {
			tools[op.Tool]++
		}
	}
	if tools["write_file"] != 1 || tools["test"] != 1 {
		t.Errorf("the coder's tool calls in the flow: %v", tools)
	}

	var th thread.Thread
	ts.do("GET", "/api/runs/run-20250601-101500/thread", nil, &th)
	var kinds []string
	for _, e := range th.Entries {
		kinds = append(kinds, e.Kind)
	}
	if th.Identity.Questions != 1 || th.Identity.Answered != 1 || !strings.Contains(strings.Join(kinds, " "), "human question answer orchestrator") {
		t.Errorf("the thread of an original run (its ask_human names no role): %v %+v", kinds, th.Identity)
	}

	var tr Transcript
	ts.do("GET", "/api/runs/run-20250601-101500/transcript?roleId=coder-1-2", nil, &tr)
	var calls, results []string
	for _, m := range tr.Messages {
		for _, c := range m.ToolCalls {
			if m.Kind == "received" {
				calls = append(calls, c.Name)
			}
		}
		if m.Kind == "tool_result" {
			results = append(results, m.Tool)
		}
	}
	if strings.Join(calls, ",") != "write_file,test,finish" || strings.Join(results, ",") != "write_file,test" {
		t.Errorf("the coder's transcript: calls %v, results %v", calls, results)
	}
	var otr Transcript
	ts.do("GET", "/api/runs/run-20250601-101500/transcript?roleId=orchestrator-0-1", nil, &otr)
	for _, m := range otr.Messages {
		if m.Tool == "write_file" || m.Tool == "test" {
			t.Errorf("the orchestrator's transcript holds its child's result: %+v", m)
		}
	}

	// Foreign: the API never resumes it.
	if _, err := os.Stat(filepath.Join(sess.WS.Runs(), "run-20250601-120000", store.StateFile)); err != nil {
		t.Fatal(err)
	}
}
