package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds what a tool result says about the work it ran, beside
// whether the tool itself ran: a run_shell, typecheck or test call whose
// command exited 1 is a tool success (kind "success") and a failed
// command. Every view reads it through ToolOutcome, so that a green check
// never stands for a failing test.

// ToolOutcome is what the commands of a subprocess tool did, read from its
// result data ({exitCode, stdout, stderr} or an array of them).
type ToolOutcome struct {
	// Failed is set when a command exited non-zero or timed out, or the
	// output reported failing checks.
	Failed bool `json:"failed"`
	// ExitCode is the first non-zero exit code, 0 when every command
	// exited 0 (a timed-out command has none).
	ExitCode int `json:"exitCode"`
	// Commands counts the commands, FailedCommands those that exited
	// non-zero or timed out.
	Commands       int  `json:"commands"`
	FailedCommands int  `json:"failedCommands,omitempty"`
	TimedOut       bool `json:"timedOut,omitempty"`
	// ChecksPassed and ChecksFailed are the counts the output reported
	// ("4 passed, 2 failed"), summed over the commands, when it reported
	// them.
	ChecksPassed int `json:"checksPassed,omitempty"`
	ChecksFailed int `json:"checksFailed,omitempty"`
}

// Label is the outcome in a few words, the same in every view: "2
// failed", "exit 1", "timed out", "4 passed", "exit 0".
func (o ToolOutcome) Label() string {
	switch {
	case o.ChecksFailed > 0:
		return strconv.Itoa(o.ChecksFailed) + " failed"
	case o.TimedOut:
		return "timed out"
	case o.ExitCode != 0:
		return "exit " + strconv.Itoa(o.ExitCode)
	case o.ChecksPassed > 0:
		return strconv.Itoa(o.ChecksPassed) + " passed"
	}
	return "exit 0"
}

// Detail is the longer form: every count there is ("4 passed, 2 failed ·
// exit 1 · 1 of 3 commands failed").
func (o ToolOutcome) Detail() string {
	var parts []string
	if o.ChecksPassed > 0 || o.ChecksFailed > 0 {
		parts = append(parts, fmt.Sprintf("%d passed, %d failed", o.ChecksPassed, o.ChecksFailed))
	}
	switch {
	case o.TimedOut:
		parts = append(parts, "timed out")
	default:
		parts = append(parts, "exit "+strconv.Itoa(o.ExitCode))
	}
	if o.Commands > 1 {
		parts = append(parts, fmt.Sprintf("%d of %d commands failed", o.FailedCommands, o.Commands))
	}
	return strings.Join(parts, " · ")
}

// maxOutcomeCommands bounds the entries read (the checkers take at most
// 16 commands).
const maxOutcomeCommands = 64

// countTail is how much of each stream's end is read for counts: the
// summary line of a test runner is at the end.
const countTail = 4096

// CommandResult is one command's entry in a subprocess tool's result.
type CommandResult struct {
	Command  string `json:"command"`
	ExitCode *int   `json:"exitCode"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	TimedOut bool   `json:"timedOut"`
}

// Commands reads the commands of a subprocess tool's success result
// ({kind, data}: one {exitCode, stdout, stderr}, an array of them, or an
// earlier Guildhall's {"results": [...]}). ok is false for anything else:
// another tool's result, an error, a result that is not JSON. Its work is
// bounded by the result's size; malformed input is data, never a panic.
func Commands(result json.RawMessage) ([]CommandResult, bool) {
	if !bytes.Contains(result, []byte(`"exitCode"`)) {
		return nil, false
	}
	var r struct {
		Kind string          `json:"kind"`
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(result, &r) != nil || r.Kind != "success" {
		return nil, false
	}
	var entries []CommandResult
	data := bytes.TrimSpace(r.Data)
	switch {
	case len(data) > 0 && data[0] == '{':
		var e struct {
			CommandResult
			Results []CommandResult `json:"results"`
		}
		if json.Unmarshal(data, &e) != nil {
			return nil, false
		}
		entries = []CommandResult{e.CommandResult}
		if e.ExitCode == nil && !e.TimedOut && len(e.Results) > 0 {
			entries = e.Results
		}
	case len(data) > 0 && data[0] == '[':
		if json.Unmarshal(data, &entries) != nil {
			return nil, false
		}
	default:
		return nil, false
	}
	if len(entries) == 0 || len(entries) > maxOutcomeCommands {
		return nil, false
	}
	for _, e := range entries {
		if e.ExitCode == nil && !e.TimedOut {
			return nil, false // not the shape of a command's result
		}
	}
	return entries, true
}

// OutcomeOf reads a tool result as a subprocess tool's outcome, nil for
// any other result (see Commands).
func OutcomeOf(result json.RawMessage) *ToolOutcome {
	entries, ok := Commands(result)
	if !ok {
		return nil
	}
	o := &ToolOutcome{Commands: len(entries)}
	for _, e := range entries {
		failed := e.TimedOut || *e.ExitCode != 0
		if e.TimedOut {
			o.TimedOut = true
		} else if *e.ExitCode != 0 && o.ExitCode == 0 {
			o.ExitCode = *e.ExitCode
		}
		passed, failedChecks, ok := CheckCounts(tail(e.Stdout) + "\n" + tail(e.Stderr))
		if ok {
			o.ChecksPassed += passed
			o.ChecksFailed += failedChecks
			failed = failed || failedChecks > 0
		}
		if failed {
			o.FailedCommands++
		}
	}
	o.Failed = o.FailedCommands > 0
	return o
}

func tail(s string) string {
	if len(s) > countTail {
		return s[len(s)-countTail:]
	}
	return s
}

// CheckCounts reads the counts a test runner's summary reports: "4
// passed, 2 failed" (the shape of pytest, jest, cargo test, mocha and of
// many scripts), "Tests: 2 failed, 4 passed", "ok 3 … not ok 1" aside. It
// takes the last number before each word "passed"/"passing" and
// "failed"/"failing"/"failures" on the last line that has one. ok is
// false when no line reports a count.
func CheckCounts(out string) (passed, failed int, ok bool) {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		p, pok := countBefore(lines[i], "passed", "passing")
		f, fok := countBefore(lines[i], "failed", "failing", "failures")
		if pok || fok {
			return p, f, true
		}
	}
	return 0, 0, false
}

// countBefore finds "N word" in line for one of words (a whole word, N
// digits right before it, one space or ": " between) and returns N.
func countBefore(line string, words ...string) (int, bool) {
	lower := strings.ToLower(line)
	for _, w := range words {
		for from := 0; from < len(lower); {
			i := strings.Index(lower[from:], w)
			if i < 0 {
				break
			}
			i += from
			from = i + len(w)
			if from < len(lower) && isWordByte(lower[from]) {
				continue
			}
			j := i
			for j > 0 && (lower[j-1] == ' ' || lower[j-1] == ':') && i-j < 2 {
				j--
			}
			if j == i {
				continue
			}
			k := j
			for k > 0 && lower[k-1] >= '0' && lower[k-1] <= '9' && j-k < 9 {
				k--
			}
			if k == j || (k > 0 && isWordByte(lower[k-1])) {
				continue
			}
			n, err := strconv.Atoi(lower[k:j])
			if err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
}

// Excerpt cuts the stdout and stderr of each command in a subprocess
// tool's result to their first and last keep bytes, saying how much was
// left out; nil when result is not such a result.
func Excerpt(result json.RawMessage, keep int) json.RawMessage {
	var r struct {
		Kind string          `json:"kind"`
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil
	}
	cut := func(e map[string]any) {
		for _, k := range []string{"stdout", "stderr"} {
			if s, ok := e[k].(string); ok {
				e[k] = headTail(s, keep)
			}
		}
	}
	var data any
	var one map[string]any
	var many []map[string]any
	switch {
	case json.Unmarshal(r.Data, &many) == nil:
		for _, e := range many {
			cut(e)
		}
		data = many
	case json.Unmarshal(r.Data, &one) == nil:
		if rs, ok := one["results"].([]any); ok {
			for _, e := range rs {
				if m, ok := e.(map[string]any); ok {
					cut(m)
				}
			}
		}
		cut(one)
		data = one
	default:
		return nil
	}
	out, err := json.Marshal(map[string]any{"kind": r.Kind, "data": data})
	if err != nil {
		return nil
	}
	return out
}

// headTail keeps the first and last keep bytes of s (on rune boundaries),
// saying how much was left out between them.
func headTail(s string, keep int) string {
	if len(s) <= 2*keep+100 {
		return s
	}
	head := s[:keep]
	for len(head) > 0 && !utf8.RuneStart(s[len(head)]) {
		head = head[:len(head)-1]
	}
	from := len(s) - keep
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return head + fmt.Sprintf("\n… [%d bytes left out] …\n", from-len(head)) + s[from:]
}
