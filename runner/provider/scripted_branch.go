package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// ScriptBranch is an alternative conversation for one role instance: what
// the scripted model says when the operator asks a question, changes the
// plan or gives a follow-up task, whenever that happens.
//
// Before each call of a role instance, the role's branches are tried in
// order. When and Unless patterns are matched against what the instance
// was just sent: on its first call, every message but the system prompt
// (the task, a continuation's reference turns); on a later call, the
// messages after its last reply (tool results, platform and operator
// notices). Task patterns are matched against the instance's task (the
// last user message of its opening), and System patterns against its
// system prompt (so a script can play a guild's prompt change, as the
// Foundry's tests need). A branch starts over from its first turn when
// each of its When patterns matches some message, each Task pattern
// matches the task, each System pattern matches the system prompt, and no
// Unless pattern matches; a branch with Task or System patterns but no
// When starts only on a first call. Otherwise the
// instance goes on with its current branch, then the role's main
// conversation (Script.Roles). A branch with no When or Task is the
// role's fallback: it answers, once per instance, when nothing else has a
// turn left.
//
// In a branch's turns, {{name}} is replaced with what the named group
// (?P<name>…) of one of its patterns captured, trimmed and capped at
// MaxScriptCapture bytes.
type ScriptBranch struct {
	Name string `json:"name"`
	// When, Task and Unless hold regular expressions (Go RE2 syntax).
	When   []string     `json:"when,omitempty"`
	Task   []string     `json:"task,omitempty"`
	System []string     `json:"system,omitempty"`
	Unless []string     `json:"unless,omitempty"`
	Turns  []ScriptTurn `json:"turns"`
}

// MaxScriptCapture bounds one captured value.
const MaxScriptCapture = 2000

// branch is a ScriptBranch with its patterns compiled.
type branch struct {
	ScriptBranch
	when, task, system, unless []*regexp.Regexp
}

func (b *branch) fallback() bool { return len(b.when) == 0 && len(b.task) == 0 && len(b.system) == 0 }

// instance is one role instance's place in the script.
type instance struct {
	Branch   string            `json:"branch,omitempty"`
	Turn     int               `json:"turn,omitempty"`
	Captures map[string]string `json:"captures,omitempty"`
	FellBack bool              `json:"fellBack,omitempty"`
}

var placeholderRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`) })

// compileBranches checks and compiles every branch: a unique name, at
// least one turn, patterns that compile, and placeholders that name a
// group of the branch's patterns.
func compileBranches(in map[string][]ScriptBranch) (map[string][]branch, error) {
	out := make(map[string][]branch, len(in))
	for role, bs := range in {
		seen := map[string]bool{}
		fallback := ""
		for i, sb := range bs {
			where := fmt.Sprintf("branches.%s[%d]", role, i)
			if strings.TrimSpace(sb.Name) == "" {
				return nil, fmt.Errorf("%s: a branch needs a name", where)
			}
			where += fmt.Sprintf(" (%s)", sb.Name)
			if seen[sb.Name] {
				return nil, fmt.Errorf("%s: another branch of %s has this name", where, role)
			}
			seen[sb.Name] = true
			if len(sb.Turns) == 0 {
				return nil, fmt.Errorf("%s: a branch needs at least one turn", where)
			}
			b := branch{ScriptBranch: sb}
			groups := map[string]bool{}
			for _, f := range []struct {
				name string
				src  []string
				dst  *[]*regexp.Regexp
			}{{"when", sb.When, &b.when}, {"task", sb.Task, &b.task}, {"system", sb.System, &b.system}, {"unless", sb.Unless, &b.unless}} {
				for j, w := range f.src {
					re, err := regexp.Compile(w)
					if err != nil {
						return nil, fmt.Errorf("%s: %s[%d]: %w", where, f.name, j, err)
					}
					for _, g := range re.SubexpNames() {
						groups[g] = groups[g] || (g != "" && f.name != "unless")
					}
					*f.dst = append(*f.dst, re)
				}
			}
			if b.fallback() && len(b.unless) > 0 {
				return nil, fmt.Errorf("%s: unless needs a when or task pattern to qualify", where)
			}
			if b.fallback() {
				if fallback != "" {
					return nil, fmt.Errorf("%s: %s already has a fallback branch (%s); give this one a when or task pattern", where, role, fallback)
				}
				fallback = sb.Name
			}
			if err := checkPlaceholders(sb.Turns, groups); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			out[role] = append(out[role], b)
		}
	}
	return out, nil
}

func checkPlaceholders(turns []ScriptTurn, groups map[string]bool) error {
	for i, t := range turns {
		texts := []string{t.Content, t.Reasoning}
		for _, tc := range t.ToolCalls {
			texts = append(texts, string(tc.Arguments))
		}
		for _, s := range texts {
			for _, m := range placeholderRE().FindAllStringSubmatch(s, -1) {
				if !groups[m[1]] {
					return fmt.Errorf("turn %d: {{%s}} is not a named group (?P<%s>…) of the branch's patterns", i, m[1], m[1])
				}
			}
		}
	}
	return nil
}

// firstCall reports whether messages open a role instance: it has made no
// reply yet. Every reply of a live instance carries tool calls (a reply
// without any finishes the instance), so an assistant message without
// them is a continuation's reference turn, not the instance's own.
func firstCall(messages []Message) bool {
	for _, m := range messages {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			return false
		}
	}
	return true
}

// sent is what a role instance was just sent (on its first call every
// message but the system prompt, later the messages after its last reply),
// its task and its system prompt.
type sent struct {
	texts  []string
	task   string
	system string
	first  bool
}

func sentMessages(messages []Message) sent {
	s := sent{first: firstCall(messages)}
	start := 0
	opening := true
	for i, m := range messages {
		switch {
		case m.Role == "system" && i == 0:
			s.system = m.Content
		case m.Role == "assistant":
			start = i + 1
			opening = opening && len(m.ToolCalls) == 0
		case m.Role == "user" && opening:
			s.task = m.Content
		}
	}
	if s.first {
		start = 0
	}
	for _, m := range messages[start:] {
		if m.Role != "system" {
			s.texts = append(s.texts, m.Content)
		}
	}
	return s
}

// matchBranch is the first branch with patterns that all match, with what
// their named groups captured.
func matchBranch(bs []branch, s sent) (*branch, map[string]string) {
	for i := range bs {
		b := &bs[i]
		if b.fallback() || (len(b.when) == 0 && !s.first) {
			continue
		}
		caps, ok := map[string]string{}, true
		for _, re := range b.when {
			ok = ok && matchAny(re, s.texts, caps)
		}
		for _, re := range b.task {
			ok = ok && matchAny(re, []string{s.task}, caps)
		}
		for _, re := range b.system {
			ok = ok && matchAny(re, []string{s.system}, caps)
		}
		for _, re := range b.unless {
			ok = ok && !matchAny(re, s.texts, map[string]string{})
		}
		if ok {
			return b, caps
		}
	}
	return nil, nil
}

func matchAny(re *regexp.Regexp, texts []string, caps map[string]string) bool {
	for _, t := range texts {
		m := re.FindStringSubmatch(t)
		if m == nil {
			continue
		}
		for i, name := range re.SubexpNames() {
			if name != "" && i < len(m) {
				caps[name] = clip(strings.TrimSpace(m[i]), MaxScriptCapture)
			}
		}
		return true
	}
	return false
}

func findBranch(bs []branch, name string) *branch {
	for i := range bs {
		if bs[i].Name == name {
			return &bs[i]
		}
	}
	return nil
}

func fallbackBranch(bs []branch) *branch {
	for i := range bs {
		if bs[i].fallback() {
			return &bs[i]
		}
	}
	return nil
}

// fill replaces the placeholders of a branch turn with captured values.
// Arguments are rewritten as JSON values, so a capture with quotes or
// newlines stays a well-formed string.
func (b *branch) fill(t ScriptTurn, caps map[string]string) ScriptTurn {
	if b.fallback() {
		return t
	}
	sub := func(s string) string {
		return placeholderRE().ReplaceAllStringFunc(s, func(p string) string {
			return caps[p[2:len(p)-2]]
		})
	}
	t.Content, t.Reasoning = sub(t.Content), sub(t.Reasoning)
	calls := make([]ScriptToolCall, len(t.ToolCalls))
	for i, tc := range t.ToolCalls {
		calls[i] = tc
		if placeholderRE().Match(tc.Arguments) {
			calls[i].Arguments = fillJSON(tc.Arguments, sub)
		}
	}
	t.ToolCalls = calls
	return t
}

// fillJSON applies sub to every string in a JSON document (keys included),
// or returns the document unchanged when it is not valid JSON.
func fillJSON(doc json.RawMessage, sub func(string) string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return doc
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return sub(x)
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[sub(k)] = walk(e)
			}
			return out
		}
		return v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(walk(v)); err != nil {
		return doc
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}
