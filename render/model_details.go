package render

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/guildhall/guildhall/runner/event"
)

// Bounds on details bodies. Prose (task text, summaries, questions,
// answers) is kept generously; machine payloads (tool arguments and
// results) are cut harder because the log keeps them whole.
const (
	detailsProseCap = 16000
	detailsJSONCap  = 4000
)

// capText cuts s to at most max bytes on a rune boundary and reports how
// many bytes were dropped.
func capText(s string, max int) (string, int) {
	if len(s) <= max {
		return s, 0
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], len(s) - cut
}

func prose(s string) string {
	s = strings.TrimSpace(s)
	out, dropped := capText(s, detailsProseCap)
	if dropped > 0 {
		out += "\n\n_(truncated: " + strconv.Itoa(dropped) + " more bytes in the run log)_"
	}
	return out
}

// fence wraps s in a fenced code block whose fence is longer than any run of
// backticks inside s, so the content cannot close it early.
func fence(s, lang string) string {
	run, longest := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			if run > longest {
				longest = run
			}
		} else {
			run = 0
		}
	}
	n := 3
	if longest >= n {
		n = longest + 1
	}
	f := strings.Repeat("`", n)
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

// jsonBlock pretty-prints raw JSON (or shows it verbatim when it is not
// JSON) in a bounded fenced block.
func jsonBlock(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	lang := "json"
	var buf bytes.Buffer
	text := string(raw)
	if json.Indent(&buf, raw, "", "  ") == nil {
		text = buf.String()
	} else {
		lang = ""
	}
	text, dropped := capText(text, detailsJSONCap)
	out := fence(text, lang)
	if dropped > 0 {
		out += "\n\n_(truncated: " + strconv.Itoa(dropped) + " more bytes in the run log)_"
	}
	return out
}

func section(title, body string) string {
	if body == "" {
		return ""
	}
	return "**" + title + "**\n\n" + body
}

func taskDetails(task string) string { return section("Task", prose(task)) }

func plainDetails(s string) string { return prose(s) }

func argumentDetails(args string) string { return section("Arguments", jsonBlock([]byte(args))) }

// resultDetails is a tool result's body: a command's result as what it
// did and printed, any other as its JSON.
func resultDetails(result json.RawMessage) string {
	if md, ok := commandDetails(result); ok {
		return md
	}
	return section("Result", jsonBlock(result))
}

// commandLines is how many lines of a stream's head, and of its tail, a
// command's details show.
const commandLines = 20

// commandDetails is a subprocess tool's result as Markdown: its outcome,
// then each command with its exit and the head and tail of its output in
// text blocks.
func commandDetails(result json.RawMessage) (string, bool) {
	entries, ok := event.Commands(result)
	if !ok {
		return "", false
	}
	o := event.OutcomeOf(result)
	v := OutcomeVerdict("success", "", "")
	if o.Failed {
		v = OutcomeVerdict(OutcomeFailed, "", o.Detail())
	} else if o.ChecksPassed > 0 {
		v.Detail = o.Label()
	}
	parts := []string{"**Outcome:** " + v.Text()}
	for _, e := range entries {
		exit := "timed out"
		if !e.TimedOut && e.ExitCode != nil {
			exit = "exit " + strconv.Itoa(*e.ExitCode)
		}
		head := "**Command:** " + exit
		if e.Command != "" {
			head = "**Command** `" + strings.ReplaceAll(SanitizeLine(e.Command), "`", "'") + "` · " + exit
		}
		parts = append(parts, head)
		for _, st := range []struct{ name, text string }{{"stdout", e.Stdout}, {"stderr", e.Stderr}} {
			if strings.TrimSpace(st.text) != "" {
				parts = append(parts, st.name+"\n\n"+fence(headTailLines(st.text, commandLines), "text"))
			}
		}
	}
	return strings.Join(parts, "\n\n"), true
}

// headTailLines keeps the first and last n lines of s.
func headTailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= 2*n+1 {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + "\n… " + strconv.Itoa(len(lines)-2*n) + " lines …\n" + strings.Join(lines[len(lines)-n:], "\n")
}

// opDetails is an operation's details body. Tool arguments and results are
// kept as their raw JSON and rendered when read: most are never opened, and
// indenting and fencing every one was a fifth of replaying a log. One
// larger than deferMax is rendered at once, so the model holds no more
// than about the capped text either way.
type opDetails struct {
	text string // the Markdown body, or the raw JSON of a deferred one
	kind detailsKind
}

type detailsKind uint8

const (
	detailsText detailsKind = iota
	detailsArguments
	detailsResult
)

const deferMax = detailsJSONCap

func textDetails(md string) opDetails { return opDetails{text: md} }

func argumentsDetails(args string) opDetails {
	if len(args) > deferMax {
		return textDetails(argumentDetails(args))
	}
	return opDetails{text: args, kind: detailsArguments}
}

func resultsDetails(result json.RawMessage) opDetails {
	if len(result) > deferMax {
		return textDetails(resultDetails(result))
	}
	return opDetails{text: string(result), kind: detailsResult}
}

// toolResultDetails is a tool result's body. A command's result too large
// to keep raw keeps its outputs' heads and tails raw instead, so that the
// inspector can still show what the command printed.
func toolResultDetails(p event.ToolResultPayload) opDetails {
	if len(p.Result) > deferMax && ToolOutcomeOf(p) != nil {
		if ex := event.Excerpt(p.Result, outputKeep); ex != nil && len(ex) <= deferMax {
			return opDetails{text: string(ex), kind: detailsResult}
		}
	}
	return resultsDetails(p.Result)
}

// outputKeep is the bytes of each output stream's head, and tail, the
// details of a large command result keep.
const outputKeep = 600

// markdown renders the body.
func (d opDetails) markdown() string {
	switch d.kind {
	case detailsArguments:
		return argumentDetails(d.text)
	case detailsResult:
		return resultDetails(json.RawMessage(d.text))
	}
	return d.text
}

// empty reports whether the body renders as nothing, without rendering it.
func (d opDetails) empty() bool {
	if d.kind == detailsText {
		return d.text == ""
	}
	return strings.TrimSpace(d.text) == "" // jsonBlock of blank JSON is ""
}

func finishDetails(p event.RoleFinishedPayload) string {
	var errText string
	if p.Error != nil && p.Error.Message != "" {
		// The error's raw details (a provider body) are operator-only and
		// never enter details.
		errText = section("Error", prose(p.Error.Message))
	}
	return joinBlocks(section("Summary", prose(p.Summary)), section("Artifacts", bullets(p.Artifacts, prose)), errText)
}

// bullets is a Markdown list with one line per item, or "" for none (so
// its section is left out).
func bullets[T any](items []T, line func(T) string) string {
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- ")
		b.WriteString(line(it))
	}
	return b.String()
}

func questionDetails(p event.AskHumanPayload) string {
	opts := section("Options", bullets(p.Options, func(o event.Option) string {
		if o.Description == "" {
			return prose(o.Label)
		}
		return prose(o.Label) + " — " + prose(o.Description)
	}))
	ctx := section("Context", prose(p.Context))
	if p.Context == "" {
		ctx = section("Previous assistant message (no context was provided)", prose(p.AssistantText))
	}
	return joinBlocks(section("Question", prose(p.Question)), opts, ctx)
}

func answerDetails(p event.HumanAnswerPayload) string {
	title := "Answer"
	if p.Source != "" {
		title += " (" + p.Source + ")"
	}
	return section(title, prose(p.Answer))
}

func inquiryDetails(message string) string { return section("Operator inquiry", prose(message)) }

func interruptDetails(message string) string { return section("Interrupt", prose(message)) }

func resolutionDetails(p event.InterruptResolvedPayload, existing string) string {
	line := "**Resolution:** " + prose(p.Action)
	if p.Action == "" {
		line = "**Resolution**"
	}
	if p.HandlerStatus != "" {
		line += " (handler " + prose(p.HandlerStatus) + ")"
	}
	summary := prose(p.Summary)
	if summary == "" || strings.Contains(existing, summary) {
		return line
	}
	return line + "\n\n" + summary
}
