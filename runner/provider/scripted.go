package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Script is a scripted conversation: for each role name, the replies its
// model calls receive in order. The run is sequential and depth-first, so a
// cursor per role name makes the conversation deterministic.
//
// Branches are what lets the script follow an operator: an inquiry, a plan
// change, a follow-up task. Each is an alternative conversation for one
// role instance, chosen by patterns over what the instance was just sent
// (see ScriptBranch); without branches a script behaves as it always did.
type Script struct {
	Roles map[string][]ScriptTurn `json:"roles"`
	// Branches are, per role name, the alternative conversations in the
	// order they are tried.
	Branches map[string][]ScriptBranch `json:"branches,omitempty"`
	// Summaries are the replies of raw summariser calls (requests with no
	// Role), in order. When they run out, a short summary derived from the
	// request text answers instead, so the offline demo gets summaries.
	Summaries []string `json:"summaries,omitempty"`
}

// ScriptTurn is one scripted reply.
type ScriptTurn struct {
	Content   string           `json:"content,omitempty"`
	Reasoning string           `json:"reasoning,omitempty"`
	ToolCalls []ScriptToolCall `json:"toolCalls,omitempty"`
	Usage     *ScriptUsage     `json:"usage,omitempty"`
	DelayMs   int              `json:"delayMs,omitempty"`
}

// ScriptToolCall is a scripted tool call; Arguments is a JSON object.
type ScriptToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ScriptUsage is the usage a scripted reply reports.
type ScriptUsage struct {
	PromptTokens       int `json:"promptTokens"`
	CompletionTokens   int `json:"completionTokens"`
	CachedPromptTokens int `json:"cachedPromptTokens"`
}

// ParseScript decodes a script, rejecting unknown keys.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	if _, err := compileBranches(s.Branches); err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	return &s, nil
}

// Scripted is the offline model that plays a Script. Real tools run for
// real; only the model's replies are canned. Replies stream in small pieces
// so live views behave as with a real model.
type Scripted struct {
	script    *Script
	branches  map[string][]branch
	badScript error // a branch that does not compile (scripts built in Go)
	// Speed scales the scripted delays (0 = no delay, 1 = as written).
	Speed float64

	mu        sync.Mutex
	cursors   map[string]int // the main conversation's position, per role name
	instances map[string]*instance
	calls     int
	summaries int // raw summariser calls answered so far
}

// NewScripted makes a scripted provider. A script from ParseScript is
// valid; one built in Go with a bad branch pattern fails every role call.
func NewScripted(s *Script, speed float64) *Scripted {
	b, err := compileBranches(s.Branches)
	return &Scripted{script: s, branches: b, badScript: err, Speed: speed, cursors: map[string]int{}, instances: map[string]*instance{}}
}

// Name implements Provider.
func (s *Scripted) Name() string { return "script" }

// Complete implements Provider: it returns the role instance's next
// scripted turn.
func (s *Scripted) Complete(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	if req.Role == "" {
		return s.summarize(ctx, req, onDelta)
	}
	if s.badScript != nil {
		return nil, fmt.Errorf("script: %w", s.badScript)
	}
	s.mu.Lock()
	t, ok := s.nextTurn(req)
	s.calls++
	call := s.calls
	s.mu.Unlock()
	if !ok {
		// Out of script: finish honestly rather than loop.
		return &Response{
			ToolCalls: []ToolCall{{ID: fmt.Sprintf("call_%d_0", call), Name: "finish",
				Arguments: `{"status":"error","summary":"The scripted model has no more replies for this role.","error":{"kind":"script_exhausted"}}`}},
			FinishReason: "tool_calls", Model: "scripted",
		}, nil
	}
	resp := &Response{Content: t.Content, Reasoning: t.Reasoning, FinishReason: "stop", Model: "scripted"}
	for j, tc := range t.ToolCalls {
		args := string(tc.Arguments)
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: fmt.Sprintf("call_%d_%d", call, j), Name: tc.Name, Arguments: args})
	}
	if len(resp.ToolCalls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	if t.Usage != nil {
		resp.Usage = Usage{PromptTokens: t.Usage.PromptTokens, CompletionTokens: t.Usage.CompletionTokens,
			TotalTokens: t.Usage.PromptTokens + t.Usage.CompletionTokens, CachedPromptTokens: t.Usage.CachedPromptTokens}
	}
	delay := time.Duration(float64(t.DelayMs)*s.Speed) * time.Millisecond
	if err := s.stream(ctx, t, delay, onDelta); err != nil {
		return nil, err
	}
	return resp, nil
}

// nextTurn picks the instance's reply, in this order: a branch whose
// patterns match what the instance was just sent starts over; else the
// instance's current branch goes on; else the role's main conversation;
// else, once per instance, the role's fallback branch. Call with s.mu held.
func (s *Scripted) nextTurn(req Request) (ScriptTurn, bool) {
	news := sentMessages(req.Messages)
	inst := s.instances[req.RoleID]
	if inst == nil || news.first {
		// Role ids repeat across the runs of a session: a first call is a
		// new instance whatever its id.
		inst = &instance{}
		s.instances[req.RoleID] = inst
	}
	branches := s.branches[req.Role]
	if b, caps := matchBranch(branches, news); b != nil {
		inst.Branch, inst.Turn, inst.Captures = b.Name, 0, caps
	}
	if inst.Branch != "" {
		if b := findBranch(branches, inst.Branch); b != nil && inst.Turn < len(b.Turns) {
			t := b.Turns[inst.Turn]
			inst.Turn++
			return b.fill(t, inst.Captures), true
		}
		inst.Branch = "" // a branch that ran out hands back to the main conversation
	}
	turns := s.script.Roles[req.Role]
	if i := s.cursors[req.Role]; i < len(turns) {
		s.cursors[req.Role] = i + 1
		return turns[i], true
	}
	if fb := fallbackBranch(branches); fb != nil && !inst.FellBack {
		inst.FellBack, inst.Branch, inst.Turn, inst.Captures = true, fb.Name, 1, nil
		return fb.Turns[0], true
	}
	return ScriptTurn{}, false
}

// summarize answers a raw summariser call. It keeps its own cursor and
// leaves the role conversation's call numbering alone, so a summary racing
// a run never changes the run's transcript.
func (s *Scripted) summarize(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	i := s.summaries
	s.summaries++
	s.mu.Unlock()
	text := ""
	if i < len(s.script.Summaries) {
		text = s.script.Summaries[i]
	} else {
		text = fallbackSummary(req)
	}
	if onDelta != nil && text != "" {
		onDelta(Delta{Content: text})
	}
	return &Response{Content: text, FinishReason: "stop", Model: "scripted"}, nil
}

// fallbackSummary derives a short summary from a request: the first line
// of its last user message that is not a bare "Label:" heading (of the
// part after a "Result:" heading, when there is one), cut to twelve words.
func fallbackSummary(req Request) string {
	last := req.LastUserContent()
	if _, result, ok := strings.Cut(last, "\nResult:\n"); ok {
		last = result
	}
	for _, line := range strings.Split(last, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(line, "#>*- \t"))
		if line == "" || (strings.HasSuffix(line, ":") && len(strings.Fields(line)) <= 3) {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok && len(strings.Fields(k)) == 1 && strings.TrimSpace(v) != "" {
			line = strings.TrimSpace(v) // "Task: fix it" reads as "fix it"
		}
		words := strings.Fields(line)
		if len(words) > 12 {
			words = words[:12]
		}
		return strings.Join(words, " ")
	}
	return "Scripted demo run"
}

// stream plays the reasoning and content out over the turn's delay.
func (s *Scripted) stream(ctx context.Context, t ScriptTurn, delay time.Duration, onDelta func(Delta)) error {
	pieces := chunk(t.Reasoning, true)
	pieces = append(pieces, chunk(t.Content, false)...)
	if len(pieces) == 0 {
		return Sleep(ctx, delay)
	}
	step := delay / time.Duration(len(pieces))
	for _, p := range pieces {
		if err := Sleep(ctx, step); err != nil {
			return err
		}
		if onDelta != nil {
			onDelta(p)
		}
	}
	return nil
}

func chunk(s string, reasoning bool) []Delta {
	var out []Delta
	for len(s) > 0 {
		n := 0
		for i := 0; i < 12 && n < len(s); i++ {
			_, size := utf8.DecodeRuneInString(s[n:])
			n += size
		}
		d := Delta{Content: s[:n]}
		if reasoning {
			d = Delta{Reasoning: s[:n]}
		}
		out = append(out, d)
		s = s[n:]
	}
	return out
}

// Sleep waits d, or until ctx ends, whose error it then returns.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// scriptState is the scripted model's position, as checkpointed. Runs
// checkpointed before branches existed hold only cursors and calls.
type scriptState struct {
	Cursors   map[string]int       `json:"cursors"`
	Calls     int                  `json:"calls"`
	Instances map[string]*instance `json:"instances,omitempty"`
}

// SaveState returns the per-role cursors and each role instance's branch
// position, so a resumed run replays the script from where its checkpoint
// was taken.
func (s *Scripted) SaveState() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := json.Marshal(scriptState{Cursors: s.cursors, Calls: s.calls, Instances: s.instances})
	return b
}

// RestoreState sets the position saved by SaveState.
func (s *Scripted) RestoreState(b json.RawMessage) error {
	var st scriptState
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("scripted model state: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cursors, s.calls, s.instances = st.Cursors, st.Calls, st.Instances
	if s.cursors == nil {
		s.cursors = map[string]int{}
	}
	if s.instances == nil {
		s.instances = map[string]*instance{}
	}
	for id, in := range s.instances {
		if in == nil {
			delete(s.instances, id)
		}
	}
	return nil
}
