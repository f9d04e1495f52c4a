package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

func resumeScript() map[string][]provider.ScriptTurn {
	return map[string][]provider.ScriptTurn{
		"orchestrator": {
			turn("", call("agent", map[string]string{"role": "coder", "task": "write two files"})),
			turn("", finishCall("success", "all done")),
		},
		"coder": {
			turn("", call("write_file", map[string]string{"path": "one.txt", "content": "1"})),
			turn("", call("write_file", map[string]string{"path": "two.txt", "content": "2"})),
			turn("", finishCall("success", "wrote both")),
		},
	}
}

// stopAt runs the script and stops the run before the n-th model call of
// role, returning the run id.
func stopAt(t *testing.T, h *harness, role string, n int) string {
	t.Helper()
	r, _, done := startRunActing(t, h, role, n, (*Run).Stop)
	if out := wait(t, done); !out.Stopped {
		t.Fatalf("want a stopped run, got %+v", out)
	}
	return r.ID()
}

func resumeRun(t *testing.T, h *harness, id string, script map[string][]provider.ScriptTurn) (Outcome, []event.Event) {
	t.Helper()
	_, out, evs := resumeWith(t, h, id, provider.NewScripted(&provider.Script{Roles: script}, 0))
	return out, evs
}

// resumeWith resumes run id of the harness with model p (no bus, no
// broker), runs it to its end and returns the run, its outcome and its log.
func resumeWith(t *testing.T, h *harness, id string, p provider.Provider) (*Run, Outcome, []event.Event) {
	t.Helper()
	opts := h.opts
	opts.Provider, opts.Bus, opts.Broker = p, nil, nil
	r, err := Resume(opts, id)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := r.ExecuteResumed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return r, out, readEvents(t, testWS(h.dir), id)
}

func countBy(evs []event.Event, typ event.Type) map[string]int {
	out := map[string]int{}
	for _, e := range find(evs, typ) {
		var p struct{ RoleID string }
		_ = e.Decode(&p)
		out[p.RoleID]++
	}
	return out
}

func TestResumeMidChild(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, resumeScript())
	id := stopAt(t, h, "coder", 2)
	ws := testWS(h.dir)
	if m, _ := ws.ReadMeta(id); m.Status != store.StatusRunning {
		t.Fatalf("a stopped run stays running (resumable), got %s", m.Status)
	}
	out, evs := resumeRun(t, h, id, resumeScript())
	if out.Status != "success" || out.RunID != id {
		t.Fatalf("resumed outcome = %+v", out)
	}
	for _, name := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(h.dir, name)); err != nil {
			t.Fatalf("%s missing after resume", name)
		}
	}
	if len(find(evs, event.RunResumed)) != 1 {
		t.Fatalf("want one run_resumed: %v", types(evs))
	}
	for id, n := range countBy(evs, event.RoleStart) {
		if n != 1 {
			t.Errorf("role_start for %s appears %d times", id, n)
		}
	}
	fin := countBy(evs, event.RoleFinished)
	if fin["coder-1-2"] != 1 || fin["orchestrator-0-1"] != 1 {
		t.Errorf("role_finished counts = %v", fin)
	}
	if _, err := os.Stat(filepath.Join(h.dir, ".orchestration/runs", id, "state.json")); !os.IsNotExist(err) {
		t.Fatal("checkpoint must be deleted once the resumed run finishes")
	}
}

func TestResumeDeliversFinishedChildCard(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, resumeScript())
	// Stop right after the coder finished, before the orchestrator's next call.
	id := stopAt(t, h, "orchestrator", 2)
	out, evs := resumeRun(t, h, id, resumeScript())
	if out.Status != "success" {
		t.Fatalf("status %s", out.Status)
	}
	if n := countBy(evs, event.RoleStart)["coder-1-2"]; n != 1 {
		t.Fatalf("the finished coder must not run again (role_start %d times)", n)
	}
	coderCalls := 0
	for _, e := range find(evs, event.LLMCall) {
		var p event.LLMCallPayload
		_ = e.Decode(&p)
		if p.Role == "coder" {
			coderCalls++
		}
	}
	if coderCalls != 3 {
		t.Fatalf("coder made %d calls in all; a resume must not re-run it", coderCalls)
	}
}

func TestReconcile(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, resumeScript())
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	h.opts.Now = func() time.Time { return base }
	older := stopAt(t, h, "coder", 2)
	h.opts.Provider = provider.NewScripted(&provider.Script{Roles: resumeScript()}, 0)
	h.opts.Now = func() time.Time { return base.Add(time.Minute) }
	newer := stopAt(t, h, "coder", 2)
	// A third unfinished run whose checkpoint is corrupt.
	h.opts.Provider = provider.NewScripted(&provider.Script{Roles: resumeScript()}, 0)
	h.opts.Now = func() time.Time { return base.Add(2 * time.Minute) }
	broken := stopAt(t, h, "coder", 2)
	ws := testWS(h.dir)
	dir, _ := ws.RunDir(broken)
	os.WriteFile(filepath.Join(dir, store.StateFile), []byte(`{"runId": "run-`), 0o644)
	// A forged pause marker on a folder that is not a run id is ignored.
	os.MkdirAll(filepath.Join(ws.Runs(), "run-evil"), 0o755)
	os.WriteFile(filepath.Join(ws.Runs(), "run-evil", PauseMarker), []byte("{}"), 0o644)

	rec, err := Reconcile(ws, g, base.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Resumable != newer {
		t.Fatalf("resumable = %s, want the newest valid run %s", rec.Resumable, newer)
	}
	if len(rec.Interrupted) != 2 || !strings.Contains(rec.Interrupted[older], "superseded") || !strings.Contains(rec.Interrupted[broken], "could not be resumed") {
		t.Fatalf("interrupted = %v", rec.Interrupted)
	}
	for _, id := range []string{older, broken} {
		m, _ := ws.ReadMeta(id)
		if m.Status != store.StatusInterrupted || m.Error == nil || m.Error.Kind != "interrupted" || m.Task != "Do the thing" {
			t.Errorf("%s meta = %+v", id, m)
		}
	}
	if PauseRequested(ws, "run-evil") {
		t.Fatal("a marker under a non-canonical id must never be honoured")
	}
	// A pause marker on a run with no checkpoint does not make it resumable.
	os.WriteFile(filepath.Join(dir, PauseMarker), []byte("{}"), 0o644)
	if err := Resumable(ws, broken, g); err == nil {
		t.Fatal("a run without a valid checkpoint is not resumable, marker or not")
	}
}

func TestSessionResumesAStoppedRunByID(t *testing.T) {
	g := testGuild(t)
	h := newHarness(t, g, resumeScript())
	id := stopAt(t, h, "coder", 2)
	sess, err := OpenSession(SessionConfig{Workspace: h.dir, Sealer: testSealer(h.dir), Guild: g, Deployment: h.opts.Deployment,
		Provider: provider.NewScripted(&provider.Script{Roles: resumeScript()}, 0), NoInput: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.Resume("run-20000101-000000"); err == nil {
		t.Fatal("an unknown run cannot be resumed")
	}
	if err := sess.Resume(id); err != nil {
		t.Fatalf("resume by id: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := sess.Wait(ctx)
	if err != nil || out.Status != "success" || out.RunID != id {
		t.Fatalf("outcome %+v %v", out, err)
	}
}
