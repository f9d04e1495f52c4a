package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// conv is one role instance's conversation as the runner builds it.
type conv struct {
	role, id string
	msgs     []Message
}

func newConv(role, id, task string) *conv {
	return &conv{role: role, id: id, msgs: []Message{{Role: "system", Content: "[" + role + "]"}, {Role: "user", Content: task}}}
}

// call sends the conversation, appends the reply and a result for each of
// its tool calls (with the given results text, in order), and returns the
// reply.
func (c *conv) call(t *testing.T, s *Scripted, results ...string) *Response {
	t.Helper()
	resp, err := s.Complete(context.Background(), Request{Role: c.role, RoleID: c.id, Messages: c.msgs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.msgs = append(c.msgs, Message{Role: "assistant", Content: resp.Content, ToolCalls: resp.ToolCalls})
	for i, tc := range resp.ToolCalls {
		r := "{}"
		if i < len(results) {
			r = results[i]
		}
		c.msgs = append(c.msgs, Message{Role: "tool", Content: r, ToolCallID: tc.ID})
	}
	return resp
}

func (c *conv) say(text string) { c.msgs = append(c.msgs, Message{Role: "user", Content: text}) }

func mustParse(t *testing.T, doc string) *Script {
	t.Helper()
	s, err := ParseScript([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const branchScript = `{
  "roles": {
    "orchestrator": [
      {"content": "main 1", "toolCalls": [{"name": "read_file", "arguments": {"path": "a"}}]},
      {"content": "main 2", "toolCalls": [{"name": "read_file", "arguments": {"path": "b"}}]},
      {"content": "main 3", "toolCalls": [{"name": "finish", "arguments": {"status": "success", "summary": "main done"}}]}
    ]
  },
  "branches": {
    "orchestrator": [
      {"name": "replan", "when": ["^\\[Operator plan modification[^\\]]*\\]\\s*(?P<change>(?s:.+))"],
       "turns": [
         {"content": "re-planning: {{change}}", "toolCalls": [{"name": "agent", "arguments": {"role": "planner", "task": "Change: {{change}}"}}]},
         {"content": "replan 2", "toolCalls": [{"name": "read_file", "arguments": {"path": "c"}}]}
       ]},
      {"name": "follow-up", "when": ["^\\[Prior run result — status: (?P<status>\\w+)\\]"], "task": ["(?i)accent"],
       "turns": [{"content": "following up on a {{status}} run", "toolCalls": [{"name": "finish", "arguments": {"status": "success", "summary": "accents"}}]}]},
      {"name": "other", "turns": [{"content": "unscripted task", "toolCalls": [{"name": "finish", "arguments": {"status": "error", "summary": "no script"}}]}]}
    ],
    "inquiry_responder": [
      {"name": "coder", "task": ["(?m)^- (?P<id>coder-\\d+-\\d+) \\(role coder,"],
       "turns": [{"content": "looking at {{id}}", "toolCalls": [{"name": "finish", "arguments": {"status": "success", "summary": "The coder {{id}} is fixing it."}}]}]},
      {"name": "anything", "turns": [{"content": "", "toolCalls": [{"name": "finish", "arguments": {"status": "success", "summary": "The orchestrator is deciding."}}]}]}
    ]
  }
}`

func contents(t *testing.T, s *Scripted, c *conv, n int) []string {
	t.Helper()
	var out []string
	for range n {
		out = append(out, c.call(t, s).Content)
	}
	return out
}

func TestScriptWithoutTriggersPlaysTheMainConversation(t *testing.T) {
	s := NewScripted(mustParse(t, branchScript), 0)
	c := newConv("orchestrator", "orchestrator-0-1", "Fix the tests")
	if got := strings.Join(contents(t, s, c, 3), "|"); got != "main 1|main 2|main 3" {
		t.Fatalf("replies %q", got)
	}
}

func TestPlanModificationBranchesAnywhereAndCapturesTheChange(t *testing.T) {
	for after := range 3 {
		s := NewScripted(mustParse(t, branchScript), 0)
		c := newConv("orchestrator", "orchestrator-0-1", "Fix the tests")
		contents(t, s, c, after)
		c.say("[Operator plan modification — the work below you was stopped; re-plan with this change]\n\nUse \"tabs\"\nnot spaces")
		resp := c.call(t, s)
		if resp.Content != "re-planning: Use \"tabs\"\nnot spaces" {
			t.Fatalf("after %d turns: content %q", after, resp.Content)
		}
		var args struct{ Role, Task string }
		if err := json.Unmarshal([]byte(resp.ToolCalls[0].Arguments), &args); err != nil {
			t.Fatalf("arguments are not JSON after substitution: %v: %s", err, resp.ToolCalls[0].Arguments)
		}
		if args.Task != "Change: Use \"tabs\"\nnot spaces" || args.Role != "planner" {
			t.Fatalf("arguments %+v", args)
		}
		// The branch goes on; when it runs out the main conversation resumes
		// where it was.
		next := strings.Join(contents(t, s, c, 2), "|")
		want := "replan 2|" + []string{"main 1", "main 2", "main 3"}[after]
		if next != want {
			t.Fatalf("after %d turns: then %q, want %q", after, next, want)
		}
	}
}

func TestBranchTriggersOnlyOnWhatWasJustSent(t *testing.T) {
	s := NewScripted(mustParse(t, branchScript), 0)
	c := newConv("orchestrator", "orchestrator-0-1", "Fix the tests")
	c.call(t, s)
	c.say("[Operator plan modification — re-plan]\n\nfirst change")
	if got := c.call(t, s).Content; got != "re-planning: first change" {
		t.Fatal(got)
	}
	// The notice is now history, not news: it does not restart the branch.
	if got := c.call(t, s).Content; got != "replan 2" {
		t.Fatalf("the old notice matched again: %q", got)
	}
	// A tool result that merely mentions the notice is not one.
	c.msgs[len(c.msgs)-1].Content = `{"summary": "see [Operator plan modification] above"}`
	if got := c.call(t, s).Content; got != "main 2" {
		t.Fatalf("a tool result matched the anchored pattern: %q", got)
	}
}

func TestContinuationNeedsEveryPattern(t *testing.T) {
	cont := func(task string) *conv {
		c := newConv("orchestrator", "orchestrator-0-1", "Fix the tests")
		c.msgs = []Message{c.msgs[0], {Role: "user", Content: "Fix the tests"},
			{Role: "assistant", Content: "[Prior run result — status: success]\n\nFixed. Accented letters are left for later."}, {Role: "user", Content: task}}
		return c
	}
	s := NewScripted(mustParse(t, branchScript), 0)
	if got := cont("Now handle ACCENTED letters").call(t, s).Content; got != "following up on a success run" {
		t.Fatalf("accent follow-up: %q", got)
	}
	// A continuation about something else matches one pattern only (the
	// prior result's "Accented" is not the task): the main conversation
	// answers.
	if got := cont("Add a --verbose flag").call(t, s).Content; got != "main 1" {
		t.Fatalf("other follow-up: %q", got)
	}
}

func TestUnlessKeepsABranchOff(t *testing.T) {
	doc := `{"roles": {"orchestrator": [{"content": "demo 1"}, {"content": "demo 2"}]},
	  "branches": {"orchestrator": [{"name": "new-task", "task": ["\\S"], "unless": ["^Fix the slug tests"],
	    "turns": [{"content": "not scripted"}]}]}}`
	s := NewScripted(mustParse(t, doc), 0)
	if got := newConv("orchestrator", "o-0-1", "Fix the slug tests, please").call(t, s).Content; got != "demo 1" {
		t.Fatalf("the demo task: %q", got)
	}
	// A run cut short leaves the main conversation half-way; a new task
	// does not pick it up there.
	if got := newConv("orchestrator", "o-0-1", "Add a --verbose flag").call(t, s).Content; got != "not scripted" {
		t.Fatalf("a new task: %q", got)
	}
}

func TestWhenAndTaskTogetherStartMidInstance(t *testing.T) {
	doc := `{"roles": {"o": [{"content": "main 1"}, {"content": "main 2"}]},
	  "branches": {"o": [
	    {"name": "replan-accents", "when": ["^\\[Operator plan modification"], "task": ["(?i)accent"], "turns": [{"content": "accent replan"}]},
	    {"name": "replan", "when": ["^\\[Operator plan modification"], "turns": [{"content": "replan"}]}]}}`
	for task, want := range map[string]string{"Handle accents": "accent replan", "Fix the tests": "replan"} {
		s := NewScripted(mustParse(t, doc), 0)
		c := newConv("o", "o-0-1", task)
		c.msgs[1].Content = task
		c.call(t, s)
		c.msgs = append(c.msgs, Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "x", Name: "read_file"}}}, Message{Role: "tool", Content: "{}"})
		c.say("[Operator plan modification]\n\nchange")
		if got := c.call(t, s).Content; got != want {
			t.Errorf("task %q: %q, want %q", task, got, want)
		}
	}
}

func TestTaskPatternsStartOnlyOnAFirstCall(t *testing.T) {
	s := NewScripted(mustParse(t, branchScript), 0)
	c := newConv("inquiry_responder", "inquiry_responder-1-3", "nothing live")
	c.call(t, s)
	// Later text that looks like the task of another branch does not start it.
	c.say("- coder-1-4 (role coder, depth 1)")
	resp := c.call(t, s)
	if !strings.Contains(resp.ToolCalls[0].Arguments, "script_exhausted") {
		t.Fatalf("a task pattern matched a later message: %+v", resp)
	}
}

func TestFallbackAnswersOncePerInstanceWhenTheMainConversationIsUsedUp(t *testing.T) {
	s := NewScripted(mustParse(t, branchScript), 0)
	contents(t, s, newConv("orchestrator", "orchestrator-0-1", "Fix the tests"), 3)
	// The next run reuses the role id; its first call is a new instance.
	c := newConv("orchestrator", "orchestrator-0-1", "Something else")
	if got := c.call(t, s).Content; got != "unscripted task" {
		t.Fatalf("new task after the demo: %q", got)
	}
	resp := c.call(t, s)
	if !strings.Contains(resp.ToolCalls[0].Arguments, "script_exhausted") {
		t.Fatalf("a fallback must not loop: %+v", resp)
	}
}

func TestInquiryBranchesOnTheLiveRoles(t *testing.T) {
	s := NewScripted(mustParse(t, branchScript), 0)
	task := "Operator's question:\nwhat now?\n\nLive role instances (root first):\n- orchestrator-0-1 (role orchestrator, depth 0, parent -)\n- coder-1-4 (role coder, depth 1, parent orchestrator-0-1)\n"
	resp := newConv("inquiry_responder", "inquiry_responder-2-5", task).call(t, s)
	if !strings.Contains(resp.ToolCalls[0].Arguments, "The coder coder-1-4 is fixing it.") {
		t.Fatalf("coder inquiry: %s", resp.ToolCalls[0].Arguments)
	}
	// Every inquiry is a fresh instance and gets an answer, however many.
	for i := range 3 {
		resp := newConv("inquiry_responder", "inquiry_responder-1-9", "Live role instances:\n- orchestrator-0-1 (role orchestrator, depth 0, parent -)").call(t, s)
		if !strings.Contains(resp.ToolCalls[0].Arguments, "The orchestrator is deciding.") {
			t.Fatalf("inquiry %d: %s", i, resp.ToolCalls[0].Arguments)
		}
	}
}

func TestScriptStateSurvivesACheckpoint(t *testing.T) {
	s := NewScripted(mustParse(t, branchScript), 0)
	c := newConv("orchestrator", "orchestrator-0-1", "Fix the tests")
	c.call(t, s)
	c.say("[Operator plan modification]\n\nchange it")
	c.call(t, s)
	saved := s.SaveState()

	r := NewScripted(mustParse(t, branchScript), 0)
	if err := r.RestoreState(saved); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(contents(t, r, c, 2), "|"); got != "replan 2|main 2" {
		t.Fatalf("after restore: %q", got)
	}
	// A checkpoint written before branches existed still restores.
	old := NewScripted(mustParse(t, branchScript), 0)
	if err := old.RestoreState(json.RawMessage(`{"cursors":{"orchestrator":2},"calls":2}`)); err != nil {
		t.Fatal(err)
	}
	if got := newConv("orchestrator", "orchestrator-0-1", "x").call(t, old).Content; got != "main 3" {
		t.Fatalf("old state: %q", got)
	}
}

func TestParseScriptRejectsBadBranches(t *testing.T) {
	for name, tc := range map[string]struct{ branches, want string }{
		"no name":         {`{"r": [{"turns": [{"content": "x"}]}]}`, "branches.r[0]: a branch needs a name"},
		"duplicate":       {`{"r": [{"name": "a", "when": ["x"], "turns": [{}]}, {"name": "a", "when": ["y"], "turns": [{}]}]}`, "branches.r[1] (a): another branch of r has this name"},
		"no turns":        {`{"r": [{"name": "a", "when": ["x"]}]}`, "branches.r[0] (a): a branch needs at least one turn"},
		"bad regexp":      {`{"r": [{"name": "a", "when": ["(unclosed"], "turns": [{}]}]}`, "branches.r[0] (a): when[0]: error parsing regexp"},
		"two fallbacks":   {`{"r": [{"name": "a", "turns": [{}]}, {"name": "b", "turns": [{}]}]}`, "branches.r[1] (b): r already has a fallback branch (a)"},
		"bad task regexp": {`{"r": [{"name": "a", "task": ["x", "a**"], "turns": [{}]}]}`, "branches.r[0] (a): task[1]: error parsing regexp"},
		"placeholder from a task pattern": {`{"r": [{"name": "a", "task": ["(?P<x>.)"], "turns": [{"content": "{{x}} {{z}}"}]}]}`,
			"turn 0: {{z}} is not a named group"},
		"unknown placeholder": {`{"r": [{"name": "a", "when": ["(?P<x>.)"], "turns": [{"content": "{{y}}"}]}]}`,
			"branches.r[0] (a): turn 0: {{y}} is not a named group"},
		"placeholder in a fallback": {`{"r": [{"name": "a", "turns": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "{{x}}"}}]}]}]}`,
			"branches.r[0] (a): turn 0: {{x}} is not a named group"},
		"unless alone": {`{"r": [{"name": "a", "unless": ["x"], "turns": [{}]}]}`, "branches.r[0] (a): unless needs a when or task pattern"},
		"placeholder from unless": {`{"r": [{"name": "a", "task": ["."], "unless": ["(?P<u>x)"], "turns": [{"content": "{{u}}"}]}]}`,
			"turn 0: {{u}} is not a named group"},
		"unknown key": {`{"r": [{"name": "a", "if": ["x"], "turns": [{}]}]}`, `unknown field "if"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseScript([]byte(`{"roles": {}, "branches": ` + tc.branches + `}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCaptureIsBounded(t *testing.T) {
	s := NewScripted(mustParse(t, branchScript), 0)
	c := newConv("orchestrator", "orchestrator-0-1", "Fix the tests")
	// An odd prefix puts the byte limit inside a two-byte rune.
	c.say("[Operator plan modification]\n\nx" + strings.Repeat("é", MaxScriptCapture))
	got := strings.TrimPrefix(c.call(t, s).Content, "re-planning: ")
	if len(got) > MaxScriptCapture+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "xé") || !utf8.ValidString(got) {
		t.Fatalf("capture of %d bytes", len(got))
	}
	if !json.Valid([]byte(c.msgs[len(c.msgs)-2].ToolCalls[0].Arguments)) {
		t.Fatal("arguments are not valid JSON")
	}
}

// BenchmarkScriptedCallWithBranches is one call of a long conversation
// (400 messages of 2 KB) against the demo-sized branch set: the cost the
// branch patterns add to every scripted turn.
func BenchmarkScriptedCallWithBranches(b *testing.B) {
	sc, err := ParseScript([]byte(branchScript))
	if err != nil {
		b.Fatal(err)
	}
	msgs := []Message{{Role: "system", Content: "[orchestrator]"}, {Role: "user", Content: "Fix the tests"}}
	for i := range 200 {
		msgs = append(msgs, Message{Role: "assistant", Content: strings.Repeat("x", 2048), ToolCalls: []ToolCall{{ID: fmt.Sprint(i), Name: "read_file"}}},
			Message{Role: "tool", Content: strings.Repeat("y", 2048)})
	}
	long := &Script{Roles: map[string][]ScriptTurn{"orchestrator": make([]ScriptTurn, b.N+1)}, Branches: sc.Branches}
	s := NewScripted(long, 0)
	req := Request{Role: "orchestrator", RoleID: "orchestrator-0-1", Messages: msgs}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Complete(context.Background(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSystemPatternsPlayAPromptChange: a branch with system patterns
// answers an instance whose system prompt matches (a guild whose prompt
// the Foundry changed), on its first call only; an instance with another
// prompt gets the main conversation.
func TestSystemPatternsPlayAPromptChange(t *testing.T) {
	s := NewScripted(mustParse(t, `{
	  "roles": {"coder": [{"content": "careless", "toolCalls": [{"name": "finish", "arguments": {"status": "success", "summary": "skipped the tests"}}]}]},
	  "branches": {"coder": [{"name": "careful", "system": ["(?i)run the (?P<what>tests) first"],
	    "turns": [{"content": "ran the {{what}}", "toolCalls": [{"name": "finish", "arguments": {"status": "success", "summary": "tested"}}]}]}]}
	}`), 0)
	careful := &conv{role: "coder", id: "coder-1-1", msgs: []Message{{Role: "system", Content: "You are the coder. Run the tests first."}, {Role: "user", Content: "fix it"}}}
	if got := careful.call(t, s).Content; got != "ran the tests" {
		t.Errorf("matching prompt got %q", got)
	}
	plain := newConv("coder", "coder-1-2", "fix it: run the tests first")
	if got := plain.call(t, s).Content; got != "careless" {
		t.Errorf("a task naming the phrase matched a system pattern: %q", got)
	}
	if _, err := ParseScript([]byte(`{"roles": {}, "branches": {"c": [{"name": "x", "system": ["("], "turns": [{"content": "a"}]}]}}`)); err == nil || !strings.Contains(err.Error(), "system[0]") {
		t.Errorf("a bad system pattern was not reported: %v", err)
	}
}
