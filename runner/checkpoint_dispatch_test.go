package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/tools"
)

// gate wraps a tool: it counts calls, and the call numbered at (1-based)
// runs the tool, then tells crashed and waits for the run to be stopped,
// as a process killed in the middle of the call would never return.
type gate struct {
	tools.Tool
	calls   atomic.Int32
	at      int32
	crashed chan struct{}
}

func (g *gate) Call(ctx context.Context, env *tools.Env, args json.RawMessage) tools.Result {
	res := g.Tool.Call(ctx, env, args)
	if g.calls.Add(1) == g.at {
		close(g.crashed)
		<-ctx.Done()
	}
	return res
}

// crashInside runs the harness's script until the gated tool's call at
// returns into its wait, and leaves the run's records as a kill -9 there
// would: the files as they were at that moment. more are other gates to
// count calls with.
func crashInside(t *testing.T, h *harness, g *gate, more ...*gate) string {
	t.Helper()
	h.opts.Tools = tools.Builtins()
	for _, x := range append(more, g) {
		h.opts.Tools[x.Tool.Manifest().Name] = x
	}
	r, err := Create(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := r.Execute(context.Background()); done <- err }()
	select {
	case <-g.crashed:
	case err := <-done:
		t.Fatalf("the run ended before the crash point: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the run never reached the crash point")
	}
	dir := filepath.Join(h.dir, ".orchestration", "runs", r.ID())
	snapshot := map[string][]byte{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			continue // undo/: the copies a write kept stay as the crash left them
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		snapshot[e.Name()] = b
	}
	r.Stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	entries, _ = os.ReadDir(dir)
	for _, e := range entries {
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
	for name, b := range snapshot {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r.ID()
}

// toolResults are the logged results of tool, in order.
func toolResults(t *testing.T, evs []event.Event, tool string) []event.ToolResultPayload {
	t.Helper()
	var out []event.ToolResultPayload
	for _, e := range find(evs, event.ToolResult) {
		var p event.ToolResultPayload
		if err := e.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Tool == tool {
			out = append(out, p)
		}
	}
	return out
}

// TestResumeDoesNotRerunACutCall: a write the crash stopped in the
// middle of is not run again; the model gets a cut_by_crash result, logged
// after run_resumed, and the run goes on to its end.
func TestResumeDoesNotRerunACutCall(t *testing.T) {
	h := newHarness(t, testGuild(t), resumeScript())
	write := &gate{Tool: tools.Builtins()["write_file"], at: 1, crashed: make(chan struct{})}
	id := crashInside(t, h, write)
	h.opts.Tools["write_file"] = write
	r, out, evs := resumeWith(t, h, id, provider.NewScripted(&provider.Script{Roles: resumeScript()}, 0))
	if out.Status != "success" {
		t.Fatalf("resumed outcome %+v", out)
	}
	// The budget counts the cut call: it began, though its tool_call was
	// logged after the checkpoint the resume started from.
	calls := 0
	for _, e := range find(evs, event.ToolCall) {
		var p event.ToolCallPayload
		if e.Decode(&p) == nil && p.Tool != "finish" {
			calls++
		}
	}
	if got := r.budget.usage(time.Now()).ToolCalls; got != calls {
		t.Errorf("the budget counts %d tool calls, the log %d", got, calls)
	}
	if n := write.calls.Load(); n != 2 {
		t.Errorf("write_file ran %d times in all, want 2 (one.txt once, two.txt once)", n)
	}
	results := toolResults(t, evs, "write_file")
	if len(results) != 2 || results[0].Kind != KindCutByCrash || results[1].Kind != "success" {
		t.Fatalf("write_file results %+v", results)
	}
	if !strings.Contains(string(results[0].Result), "may have partly run") {
		t.Errorf("the cut result does not say what happened: %s", results[0].Result)
	}
	resumed := find(evs, event.RunResumed)[0].Seq
	for _, e := range find(evs, event.ToolResult) {
		var p event.ToolResultPayload
		if e.Decode(&p) == nil && p.Kind == KindCutByCrash && e.Seq < resumed {
			t.Error("the cut result was logged before the run resumed")
		}
	}
}

// TestResumeDeliversAFinishedCallFromTheLog: a write that finished before
// the crash (the crash came during the read after it, in the same turn)
// is not run again: its logged result is what the model gets. The read
// runs again, as reads may. At log level standard, where a success keeps
// no result, the model is told it finished and was not run again.
func TestResumeDeliversAFinishedCallFromTheLog(t *testing.T) {
	script := func() map[string][]provider.ScriptTurn {
		s := resumeScript()
		s["coder"][0] = turn("", call("write_file", map[string]string{"path": "one.txt", "content": "1"}), call("read_file", map[string]string{"path": "one.txt"}))
		return s
	}
	for _, level := range []string{LogFull, LogStandard} {
		t.Run(level, func(t *testing.T) {
			h := newHarness(t, testGuild(t), script())
			h.opts.LogLevel = level
			write := &gate{Tool: tools.Builtins()["write_file"], crashed: make(chan struct{})}
			read := &gate{Tool: tools.Builtins()["read_file"], at: 1, crashed: make(chan struct{})}
			id := crashInside(t, h, read, write)
			h.opts.Tools["write_file"], h.opts.Tools["read_file"] = write, read
			rec := &recorder{Provider: provider.NewScripted(&provider.Script{Roles: script()}, 0)}
			_, out, evs := resumeWith(t, h, id, rec)
			if out.Status != "success" {
				t.Fatalf("resumed outcome %+v", out)
			}
			if n := write.calls.Load(); n != 2 {
				t.Errorf("write_file ran %d times, want 2 (one.txt once, two.txt once)", n)
			}
			if n := read.calls.Load(); n != 2 {
				t.Errorf("read_file ran %d times, want twice (a read runs again)", n)
			}
			rs := toolResults(t, evs, "write_file")
			if len(rs) != 2 || rs[0].Kind != "success" {
				t.Fatalf("write_file results %+v: want the logged one, not a second", rs)
			}
			// What the model got for the write, in its next request.
			var got string
			for _, m := range rec.byRole("coder")[0].Messages {
				if m.Role == "tool" && m.ToolCallID == rs[0].CallID {
					got = m.Content
				}
			}
			if level == LogFull && got != string(rs[0].Result) {
				t.Errorf("the model got %q, want the logged result %s", got, rs[0].Result)
			}
			if level == LogStandard && (!strings.Contains(got, "finished just before Guildhall stopped") || !strings.Contains(got, `"kind":"success"`)) {
				t.Errorf("the model was not told the call finished: %q", got)
			}
		})
	}
}

// TestStartedOutcomeReadsTheLog: the call a checkpoint says was started
// counts as begun only when the role's last tool_call after its last
// reply is that call; an earlier turn's call with the same id does not.
func TestStartedOutcomeReadsTheLog(t *testing.T) {
	c := provider.ToolCall{ID: "call_1", Name: "run_shell", Arguments: `{"command":"make"}`}
	f := &Frame{RoleID: "coder-1-2", Pending: &PendingTurn{Calls: []provider.ToolCall{c}, Started: true}}
	ev := func(typ event.Type, p any) event.Event {
		b, _ := json.Marshal(p)
		return event.Event{Type: typ, Payload: b}
	}
	reply := ev(event.LLMCall, event.LLMCallPayload{RoleID: f.RoleID})
	started := ev(event.ToolCall, event.ToolCallPayload{RoleID: f.RoleID, Tool: c.Name, CallID: c.ID, Arguments: c.Arguments})
	finished := ev(event.ToolResult, event.ToolResultPayload{RoleID: f.RoleID, Tool: c.Name, CallID: c.ID, Kind: "success", Result: json.RawMessage(`{"kind":"success"}`)})
	other := ev(event.ToolCall, event.ToolCallPayload{RoleID: "other-1-3", Tool: c.Name, CallID: c.ID, Arguments: c.Arguments})
	read := ev(event.ToolCall, event.ToolCallPayload{RoleID: f.RoleID, Tool: "read_file", CallID: "call_2", Arguments: `{"path":"a"}`})
	for name, tc := range map[string]struct {
		log                []event.Event
		logged, isFinished bool
	}{
		"never began":                      {[]event.Event{reply}, false, false},
		"an earlier turn's call of the id": {[]event.Event{started, finished, reply}, false, false},
		"another role's call":              {[]event.Event{reply, other}, false, false},
		"cut":                              {[]event.Event{reply, started}, true, false},
		"cut, another role went on":        {[]event.Event{reply, started, other}, true, false},
		"finished":                         {[]event.Event{reply, started, finished}, true, true},
		"finished, a read began after it":  {[]event.Event{reply, started, finished, read}, true, true},
	} {
		o := startedOutcome(tc.log, f)
		if o.logged != tc.logged || o.finished != tc.isFinished {
			t.Errorf("%s: %+v", name, o)
		}
	}
}
