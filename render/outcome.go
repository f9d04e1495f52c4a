package render

// This file is the one rule every view uses to show how something ended:
// the console's flow graph, sequence view, inspector and log screen, the
// headless lines, `guildhall show` and (through the model's outcome
// fields) the browser. A tool that ran a command which failed is failed,
// not a success; a role stopped by a plan change or the operator is
// interrupted, not an error.

import (
	"strings"

	"github.com/guildhall/guildhall/runner/event"
)

// NoActionText is what every view says about a run whose entry role
// answered in words and no tool was called in the whole run
// (run_status.noAction): the answer may be right, but nothing was done.
const NoActionText = "The model answered without doing anything: no tool was called in the whole run."

// OutcomeFailed is the outcome of a tool return whose tool ran but whose
// command exited non-zero or reported failing checks.
const OutcomeFailed = "failed"

// Verdict is how an ending is shown: a glyph, a word, and a detail such as
// "exit 1" or "2 failed" (or a tool's error kind).
type Verdict struct {
	Glyph  string
	Word   string
	Detail string
}

// Failed reports whether the verdict is a failure (✗).
func (v Verdict) Failed() bool { return v.Glyph == "✗" }

// Text is the verdict as a few words: "✓ success", "✗ failed · exit 1",
// "■ interrupted". Its parts are the program's words or machine fields:
// it is sanitized.
func (v Verdict) Text() string {
	s := v.Glyph + " " + v.Word
	if v.Detail != "" && v.Detail != v.Word {
		s += " · " + v.Detail
	}
	return SanitizeLine(strings.TrimSpace(s))
}

// OutcomeVerdict shows an operation's outcome (Operation.Outcome, with its
// ErrorKind and OutcomeDetail).
func OutcomeVerdict(outcome, errKind, detail string) Verdict {
	switch outcome {
	case "":
		return Verdict{}
	case "success":
		return Verdict{Glyph: "✓", Word: "success", Detail: detail}
	case OutcomeFailed:
		return Verdict{Glyph: "✗", Word: "failed", Detail: detail}
	case "error":
		if errKind == "interrupted" {
			return Verdict{Glyph: "■", Word: OutcomeInterrupted}
		}
		return Verdict{Glyph: "✗", Word: "error", Detail: errKind}
	case "needs_clarification":
		return Verdict{Glyph: "■", Word: "needs clarification"}
	}
	return Verdict{Glyph: "■", Word: strings.ReplaceAll(outcome, "_", " ")}
}

// RoleVerdict shows a role's finish (or a run's end): a card's status and
// error kind.
func RoleVerdict(status, errKind string) Verdict {
	return OutcomeVerdict(roleOutcome(status, errKind), errKind, "")
}

// roleOutcome is the outcome of a role's return: its status, except that
// a role stopped by a plan change, the operator or a shutdown (error kind
// interrupted) was interrupted.
func roleOutcome(status, errKind string) string {
	if status == "" {
		status = "success"
	}
	if status == "error" && errKind == "interrupted" {
		return OutcomeInterrupted
	}
	return status
}

// ToolOutcomeOf is what a tool result's commands did: its outcome field,
// or, in a log written without one, what its result body says.
func ToolOutcomeOf(p event.ToolResultPayload) *event.ToolOutcome {
	if p.Outcome != nil {
		return p.Outcome
	}
	if p.Kind != "success" || len(p.Result) == 0 {
		return nil
	}
	return event.OutcomeOf(p.Result)
}

// toolOutcome is the outcome, error kind and detail of a tool's return.
func toolOutcome(p event.ToolResultPayload) (outcome, errKind, detail string) {
	if p.Kind != "success" {
		return "error", p.Kind, ""
	}
	o := ToolOutcomeOf(p)
	switch {
	case o == nil:
		return "success", "", ""
	case o.Failed:
		return OutcomeFailed, "", o.Label()
	case o.ChecksPassed > 0:
		return "success", "", o.Label()
	}
	return "success", "", ""
}

// ToolVerdict shows a tool result.
func ToolVerdict(p event.ToolResultPayload) Verdict {
	outcome, errKind, detail := toolOutcome(p)
	v := OutcomeVerdict(outcome, errKind, detail)
	if o := ToolOutcomeOf(p); o != nil && o.Failed {
		v.Detail = o.Detail()
	}
	return v
}
