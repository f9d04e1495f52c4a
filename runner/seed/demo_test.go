package seed_test

// These tests play the embedded demo script through the real runner, as
// `guildhall demo` does, and trigger what an operator can trigger from the
// console: an inquiry and a plan modification before every model call of
// the sample run, then follow-up and new tasks after it. Each path must end
// sensibly, never with the scripted model running out of replies.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/demo"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/store"
)

var demoKey = []byte("demo-test-records-key-0123456789abcdef")

// demoRun is one workspace with the demo's guild, deployment and scripted
// model (the configuration of cmd/guildhall's demoSetup), in a session.
type demoRun struct {
	t    *testing.T
	dir  string
	ws   store.Workspace
	sess *runner.Session
	hook *hookedModel
}

// hookedModel calls before(n, req) ahead of the n-th role call (1-based).
type hookedModel struct {
	provider.Provider
	mu     sync.Mutex
	n      int
	before func(n int, req provider.Request)
	reqs   []provider.Request
}

func (h *hookedModel) Complete(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	if req.Role != "" {
		h.mu.Lock()
		h.n++
		n, fn := h.n, h.before
		cp := req
		cp.Messages = slices.Clone(req.Messages)
		h.reqs = append(h.reqs, cp)
		h.mu.Unlock()
		if fn != nil {
			fn(n, req)
		}
	}
	return h.Provider.Complete(ctx, req, onDelta)
}

func (h *hookedModel) SaveState() json.RawMessage { return h.Provider.(runner.Stateful).SaveState() }
func (h *hookedModel) RestoreState(b json.RawMessage) error {
	return h.Provider.(runner.Stateful).RestoreState(b)
}

func newDemoRun(t *testing.T) *demoRun {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	dm, err := demo.Setup(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, d := dm.Guild, dm.Deployment
	hook := &hookedModel{Provider: dm.Provider}
	sealer := store.NewSealer(demoKey, dir)
	sess, err := runner.OpenSession(runner.SessionConfig{Workspace: dir, Sealer: sealer, Guild: g, Deployment: d, Provider: hook, NoInput: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return &demoRun{t: t, dir: dir, ws: store.Workspace{Dir: dir, Seal: sealer}, sess: sess, hook: hook}
}

// submit runs one task to its end and returns its outcome and log.
func (d *demoRun) submit(sub runner.Submission) (runner.Outcome, []event.Event) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := d.sess.Submit(ctx, sub); err != nil {
		d.t.Fatal(err)
	}
	out, err := d.sess.Wait(ctx)
	if err != nil {
		d.t.Fatal(err)
	}
	return out, d.events(out.RunID)
}

func (d *demoRun) events(id string) []event.Event {
	d.t.Helper()
	path, err := d.ws.LogPath(id)
	if err != nil {
		d.t.Fatal(err)
	}
	var evs []event.Event
	if _, err := store.ReadLog(path, func(seq int64, rec []byte) error {
		var e event.Event
		if err := json.Unmarshal(rec, &e); err != nil {
			return err
		}
		evs = append(evs, e)
		return nil
	}); err != nil {
		d.t.Fatal(err)
	}
	return evs
}

func (d *demoRun) plan(id string) (string, error) {
	dir, err := d.ws.RunDir(id)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, store.PlanFile))
	return string(b), err
}

// sh runs a command in the workspace.
func (d *demoRun) sh(command string) (string, bool) {
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = d.dir
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

func payloads[T any](t *testing.T, evs []event.Event, typ event.Type) []T {
	t.Helper()
	var out []T
	for _, e := range evs {
		if e.Type == typ {
			var p T
			if err := e.Decode(&p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	return out
}

// noExhaustion fails when any role ran out of script.
func noExhaustion(t *testing.T, what string, evs []event.Event) {
	t.Helper()
	for _, f := range payloads[event.RoleFinishedPayload](t, evs, event.RoleFinished) {
		if f.Error != nil && f.Error.Kind == "script_exhausted" {
			t.Fatalf("%s: %s ran out of script", what, f.RoleID)
		}
	}
}

// mainCalls counts the model calls of the plain sample run.
func mainCalls(t *testing.T) int {
	t.Helper()
	d := newDemoRun(t)
	out, evs := d.submit(runner.Submission{Task: seed.DemoTask()})
	if out.Status != "success" || !strings.HasPrefix(out.Card.Summary, "## Slug tests fixed\n") {
		t.Fatalf("the plain demo ended %s: %+v", out.Status, out.Card)
	}
	noExhaustion(t, "plain demo", evs)
	return d.hook.n
}

// inquiryAnswers says what the answer to an inquiry made while a role of
// each kind is the deepest live one talks about.
var inquiryAnswers = map[string]string{
	"orchestrator":        "The orchestrator is deciding the next step.",
	"planner":             "The planner is working out the steps.",
	"coder":               "The coder is at work.",
	"acceptance_lead":     "The review is starting.",
	"acceptance_reviewer": "An acceptance review is under way.",
}

func TestDemoAnswersAnInquiryAtEveryPoint(t *testing.T) {
	calls := mainCalls(t)
	seen := map[string]bool{}
	// The last call is the orchestrator's finish: no safe point follows it.
	for n := 1; n < calls; n++ {
		d := newDemoRun(t)
		d.hook.before = func(at int, req provider.Request) {
			if at == n {
				id, _ := d.sess.Active()
				if err := d.sess.Interrupt(id, "inquiry", "What is happening right now?"); err != nil {
					t.Error(err)
				}
			}
		}
		out, evs := d.submit(runner.Submission{Task: seed.DemoTask()})
		noExhaustion(t, "inquiry", evs)
		if out.Status != "success" || !strings.HasPrefix(out.Card.Summary, "## Slug tests fixed\n") {
			t.Fatalf("inquiry before call %d: the run ended %s: %+v", n, out.Status, out.Card)
		}
		asked := payloads[event.InterruptPayload](t, evs, event.Interrupt)
		answered := payloads[event.InterruptResolvedPayload](t, evs, event.InterruptResolved)
		if len(asked) != 1 || len(answered) != 1 || answered[0].Action != "answered" {
			t.Fatalf("inquiry before call %d: asked %+v, answered %+v", n, asked, answered)
		}
		role := asked[0].Target[:strings.LastIndex(asked[0].Target[:strings.LastIndex(asked[0].Target, "-")], "-")]
		want := inquiryAnswers[role]
		if want == "" || !strings.Contains(answered[0].Summary, want) {
			t.Fatalf("inquiry before call %d at %s: answer %q, want %q", n, asked[0].Target, answered[0].Summary, want)
		}
		if role != "orchestrator" && !strings.Contains(answered[0].Summary, "`"+asked[0].Target+"`") {
			t.Errorf("inquiry at %s: the answer does not name the instance: %q", asked[0].Target, answered[0].Summary)
		}
		seen[role] = true
	}
	for role := range inquiryAnswers {
		if !seen[role] {
			t.Errorf("no inquiry landed while %s was the deepest live role", role)
		}
	}
}

func TestDemoAnswersEveryInquiryOfARun(t *testing.T) {
	d := newDemoRun(t)
	d.hook.before = func(at int, req provider.Request) {
		if at == 2 || at == 9 || at == 10 {
			id, _ := d.sess.Active()
			d.sess.Interrupt(id, "inquiry", "Again?")
		}
	}
	out, evs := d.submit(runner.Submission{Task: seed.DemoTask()})
	noExhaustion(t, "inquiries", evs)
	answered := payloads[event.InterruptResolvedPayload](t, evs, event.InterruptResolved)
	if out.Status != "success" || len(answered) != 3 {
		t.Fatalf("run %s, %d answers", out.Status, len(answered))
	}
	for _, a := range answered {
		if a.Action != "answered" || !strings.Contains(a.Summary, "scripted model") {
			t.Errorf("answer %+v", a)
		}
	}
}

func TestDemoUnwindsAndReplansAtEveryPoint(t *testing.T) {
	replanAtEveryPoint(t, mainCalls(t), nil, "## Slug tests fixed, after your plan change", "6 passed, 0 failed", 6)
}

func TestDemoUnwindsAndReplansTheFollowUpAtEveryPoint(t *testing.T) {
	d := newDemoRun(t)
	first, _ := d.submit(runner.Submission{Task: seed.DemoTask()})
	start := d.hook.n
	out, _ := d.submit(runner.Submission{Task: "Now handle accented letters too", ContinuesFrom: first.RunID})
	if out.Status != "success" {
		t.Fatalf("follow-up ended %s", out.Status)
	}
	replanAtEveryPoint(t, d.hook.n-start, func(d *demoRun) *runner.Submission {
		first, _ := d.submit(runner.Submission{Task: seed.DemoTask()})
		return &runner.Submission{Task: "Now handle accented letters too", ContinuesFrom: first.RunID}
	}, "## Accented letters handled, after your plan change", "9 passed, 0 failed", 9)
}

// replanAtEveryPoint changes the plan before each model call of a run
// (the sample run, or the follow-up that prepare submits after it) and
// checks the unwinding, the re-plan and the result.
func replanAtEveryPoint(t *testing.T, calls int, prepare func(*demoRun) *runner.Submission, wantCard, wantTests string, checks int) {
	t.Helper()
	unwound := 0
	for n := 1; n < calls; n++ {
		d := newDemoRun(t)
		sub := &runner.Submission{Task: seed.DemoTask()}
		if prepare != nil {
			sub = prepare(d)
		}
		offset := d.hook.n
		change := "Keep the fix small, and say \"why\" in the plan."
		d.hook.before = func(at int, req provider.Request) {
			if at == offset+n {
				id, _ := d.sess.Active()
				if err := d.sess.Interrupt(id, "plan_modification", change); err != nil {
					t.Error(err)
				}
			}
		}
		out, evs := d.submit(*sub)
		noExhaustion(t, "plan modification", evs)
		if out.Status != "success" || !strings.HasPrefix(out.Card.Summary, wantCard) || !strings.Contains(out.Card.Summary, change) {
			t.Fatalf("plan change before call %d: the run ended %s: %+v", n, out.Status, out.Card)
		}
		pms := payloads[event.PlanModificationPayload](t, evs, event.PlanModification)
		if len(pms) != 1 || pms[0].TargetRole != "orchestrator" {
			t.Fatalf("plan change before call %d: %+v", n, pms)
		}
		// Every live instance below the owner finished interrupted.
		finished := map[string]event.RoleFinishedPayload{}
		for _, f := range payloads[event.RoleFinishedPayload](t, evs, event.RoleFinished) {
			finished[f.RoleID] = f
		}
		for _, id := range pms[0].Aborted {
			if f, ok := finished[id]; !ok || f.Error == nil || f.Error.Kind != "interrupted" {
				t.Errorf("plan change before call %d: %s finished %+v, want interrupted", n, id, f)
			}
		}
		unwound += len(pms[0].Aborted)
		// The planner re-planned with the change, and the plan says so.
		var replanned bool
		for _, s := range payloads[event.RoleStartPayload](t, evs, event.RoleStart) {
			if s.Role == "planner" && strings.HasPrefix(s.Task, "Revise the plan") && strings.Contains(s.Task, change) {
				replanned = true
			}
		}
		if !replanned {
			t.Fatalf("plan change before call %d: the planner did not re-plan", n)
		}
		plan, err := d.plan(out.RunID)
		if err != nil || !strings.Contains(plan, "## The operator's change\n"+change) {
			t.Fatalf("plan change before call %d: plan.md %q (%v)", n, plan, err)
		}
		if got, ok := d.sh("sh test.sh"); !ok || !strings.Contains(got, wantTests) {
			t.Fatalf("plan change before call %d: the tests afterwards:\n%s", n, got)
		}
		if got, _ := d.sh("grep -c '^check ' test.sh"); strings.TrimSpace(got) != strconv.Itoa(checks) {
			t.Errorf("plan change before call %d: test.sh has %s checks, want %d", n, strings.TrimSpace(got), checks)
		}
	}
	if unwound == 0 {
		t.Fatal("no plan change landed while a role below the orchestrator was live")
	}
}

func TestDemoFollowUpContinuesTheRun(t *testing.T) {
	d := newDemoRun(t)
	first, _ := d.submit(runner.Submission{Task: seed.DemoTask()})
	d.hook.reqs = nil
	out, evs := d.submit(runner.Submission{Task: "Now handle accented letters too", ContinuesFrom: first.RunID})
	noExhaustion(t, "follow-up", evs)
	if out.Status != "success" || !strings.HasPrefix(out.Card.Summary, "## Accented letters handled") {
		t.Fatalf("follow-up ended %s: %+v", out.Status, out.Card)
	}
	started := payloads[event.RunStartedPayload](t, evs, event.RunStarted)
	if len(started) != 1 || started[0].ContinuesFrom != first.RunID {
		t.Fatalf("run_started %+v", started)
	}
	opening := d.hook.reqs[0]
	if opening.Role != "orchestrator" || len(opening.Messages) < 4 ||
		!strings.HasPrefix(opening.Messages[2].Content, "[Prior run result — status: success]") {
		t.Fatalf("the follow-up's opening has no prior-result reference turn: %+v", opening.Messages)
	}
	got, ok := d.sh("sh test.sh")
	if !ok || !strings.Contains(got, "9 passed, 0 failed") || !strings.Contains(got, `ok    slugify "Crème brûlée" -> "creme-brulee"`) {
		t.Fatalf("the tests after the follow-up:\n%s", got)
	}
	if got, _ := d.sh(`sh bin/slug "Ça va, Zoë?"`); strings.TrimSpace(got) != "ca-va-zoe" {
		t.Errorf("bin/slug: %q", got)
	}
	// The same follow-up again finds the work done and still passes.
	again, evs := d.submit(runner.Submission{Task: "And accents once more", ContinuesFrom: out.RunID})
	noExhaustion(t, "second follow-up", evs)
	if got, ok := d.sh("sh test.sh"); again.Status != "success" || !ok || !strings.Contains(got, "9 passed, 0 failed") {
		t.Fatalf("second follow-up %s:\n%s", again.Status, got)
	}
}

func TestDemoExplainsUnscriptedTasks(t *testing.T) {
	d := newDemoRun(t)
	first, _ := d.submit(runner.Submission{Task: seed.DemoTask()})
	for _, tc := range []struct {
		name string
		sub  runner.Submission
		want string
	}{
		{"other follow-up", runner.Submission{Task: "Add a --verbose flag", ContinuesFrom: first.RunID}, "## This follow-up is beyond the demo's script"},
		{"new task", runner.Submission{Task: "Add a --verbose flag"}, "## This task is beyond the demo's script"},
		{"the sample task again", runner.Submission{Task: seed.DemoTask()}, "## The sample task has already run"},
	} {
		out, evs := d.submit(tc.sub)
		noExhaustion(t, tc.name, evs)
		if out.Status != "needs_clarification" || !strings.HasPrefix(out.Card.Summary, tc.want) {
			t.Errorf("%s: ended %s: %+v", tc.name, out.Status, out.Card)
		}
		if !strings.Contains(out.Card.Summary, "accented letters") {
			t.Errorf("%s: the card does not point to the scripted follow-up: %q", tc.name, out.Card.Summary)
		}
	}
}

func TestDemoNewTaskAfterATerminatedRun(t *testing.T) {
	d := newDemoRun(t)
	d.hook.before = func(at int, req provider.Request) {
		if at == 4 {
			id, _ := d.sess.Active()
			d.sess.Terminate(id)
		}
	}
	first, _ := d.submit(runner.Submission{Task: seed.DemoTask()})
	if first.Status != "interrupted" {
		t.Fatalf("terminated run ended %s", first.Status)
	}
	d.hook.before = nil
	// The sample run stopped half-way; a new task must not take up its
	// conversation where it stopped.
	out, evs := d.submit(runner.Submission{Task: "Write a changelog"})
	noExhaustion(t, "new task", evs)
	if out.Status != "needs_clarification" || !strings.HasPrefix(out.Card.Summary, "## This task is beyond the demo's script") {
		t.Fatalf("new task ended %s: %+v", out.Status, out.Card)
	}
}
