package runner

// This file reads tool calls a model wrote as text in its reply's content
// instead of through the API: what a small model does when the server
// does not turn its calls into tool_calls (llama-server without --jinja,
// a chat template without tools) or when it imitates a format it was
// trained on. It is a parser on model output: malformed input is data,
// never a panic, and its work is linear in a bounded amount of content.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The formats of tool calls written as text.
const (
	// textHermes is Hermes' and Qwen's <tool_call>{json}</tool_call>.
	textHermes = "hermes"
	// textMistral is Mistral's [TOOL_CALLS] [{…}] (or its newer
	// [TOOL_CALLS]name[ARGS]{…}).
	textMistral = "mistral"
	// textLlama is Llama 3's <|python_tag|>{"name", "parameters"} and the
	// bare {"name": …, "parameters": …} object of its JSON tool calling.
	textLlama = "llama"
	// textJSON is a lone {"name", "arguments"} object, fenced or bare.
	textJSON = "json"
)

const (
	// maxTextCallContent is the longest content read for calls; a longer
	// reply with a call marker is reported, not parsed.
	maxTextCallContent = 256 << 10
	// maxTextCalls is the most calls one reply may write as text.
	maxTextCalls = 8
)

// textCall is one call read from content; Arguments is a JSON object.
type textCall struct {
	Name      string
	Arguments string
}

// textCalls is what a reply's content holds in the way of tool calls
// written as text. Format is "" when it holds none. Problem, when set,
// says why the calls cannot be run as they are; Calls are then not to be
// trusted. Prose is the content outside the calls.
type textCalls struct {
	Format  string
	Calls   []textCall
	Problem string
	Prose   string
}

func (t textCalls) found() bool { return t.Format != "" }

// textFormatName is a format as the operator reads it.
func textFormatName(format string) string {
	switch format {
	case textHermes:
		return "Hermes/Qwen <tool_call>"
	case textMistral:
		return "Mistral [TOOL_CALLS]"
	case textLlama:
		return "Llama <|python_tag|> / {\"name\", \"parameters\"}"
	case textJSON:
		return "a JSON {\"name\", \"arguments\"} object"
	}
	return format
}

// parseTextCalls reads the tool calls content writes as text.
func parseTextCalls(content string) textCalls {
	markers := map[string]string{"<tool_call>": textHermes, "[TOOL_CALLS]": textMistral, "<|python_tag|>": textLlama}
	var present []string
	for m, f := range markers {
		if strings.Contains(content, m) {
			present = append(present, f)
		}
	}
	if len(content) > maxTextCallContent {
		if len(present) > 0 {
			return textCalls{Format: present[0], Problem: "the reply is too long to read its tool calls", Prose: content}
		}
		return textCalls{}
	}
	var t textCalls
	switch {
	case len(present) > 1:
		return textCalls{Format: present[0], Problem: "the reply mixes several tool-call formats", Prose: content}
	case len(present) == 1 && present[0] == textHermes:
		t = parseHermes(content)
	case len(present) == 1 && present[0] == textMistral:
		t = parseMistral(content)
	case len(present) == 1 && present[0] == textLlama:
		t = parseLlama(content)
	default:
		t = parseLone(content)
	}
	switch {
	case !t.found() || t.Problem != "":
	case len(t.Calls) == 0:
		t.Problem = "the reply marks a tool call but holds none"
	case len(t.Calls) > maxTextCalls:
		t.Problem = fmt.Sprintf("the reply writes more than %d tool calls", maxTextCalls)
	}
	return t
}

// parseHermes reads <tool_call> blocks. A block with no JSON object in it
// (a stray tag, a quote) is markup, not a call: content made only of
// those holds no call.
func parseHermes(content string) textCalls {
	parts := strings.Split(content, "<tool_call>")
	var prose strings.Builder
	prose.WriteString(parts[0])
	t := textCalls{}
	for _, part := range parts[1:] {
		body, after, closed := strings.Cut(part, "</tool_call>")
		if closed {
			prose.WriteString(after)
		}
		b := strings.TrimSpace(body)
		if !strings.HasPrefix(b, "{") {
			continue
		}
		t.Format = textHermes
		calls, err := callsFromJSON(b, false)
		if err != "" && t.Problem == "" {
			t.Problem = "a <tool_call> block " + err
		}
		t.Calls = append(t.Calls, calls...)
		if len(t.Calls) > maxTextCalls {
			break
		}
	}
	t.Prose = cleanProse(prose.String())
	return t
}

// parseMistral reads [TOOL_CALLS] followed by a JSON array of calls, or
// by one or more name[ARGS]{…} segments.
func parseMistral(content string) textCalls {
	before, rest, _ := strings.Cut(content, "[TOOL_CALLS]")
	t := textCalls{Format: textMistral, Prose: cleanProse(before)}
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "[") {
		var raw []json.RawMessage
		dec := json.NewDecoder(strings.NewReader(rest))
		if err := dec.Decode(&raw); err != nil {
			t.Problem = "the [TOOL_CALLS] list is not valid JSON"
			return t
		}
		for _, r := range raw {
			c, err := callFromObject(r, false)
			if err != "" {
				t.Problem = "a [TOOL_CALLS] entry " + err
				return t
			}
			t.Calls = append(t.Calls, c)
			if len(t.Calls) > maxTextCalls {
				break
			}
		}
		return t
	}
	for _, seg := range strings.Split(rest, "[TOOL_CALLS]") {
		name, args, ok := strings.Cut(seg, "[ARGS]")
		if !ok {
			t.Problem = "a [TOOL_CALLS] entry has no [ARGS]"
			return t
		}
		name, _, _ = strings.Cut(name, "[CALL_ID]")
		name = strings.TrimSpace(name)
		obj, err := oneObject(strings.TrimSpace(args))
		if err != "" || name == "" {
			t.Problem = "a [TOOL_CALLS] entry's name or [ARGS] object is not readable"
			return t
		}
		t.Calls = append(t.Calls, textCall{Name: name, Arguments: obj})
		if len(t.Calls) > maxTextCalls {
			break
		}
	}
	return t
}

// parseLlama reads <|python_tag|> followed by {"name", "parameters"}
// objects (separated by ";").
func parseLlama(content string) textCalls {
	before, rest, _ := strings.Cut(content, "<|python_tag|>")
	t := textCalls{Format: textLlama, Prose: cleanProse(before)}
	for _, end := range []string{"<|eom_id|>", "<|eot_id|>"} {
		rest, _, _ = strings.Cut(rest, end)
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "{") {
		t.Problem = "the <|python_tag|> call is not a JSON object (built-in tools written as code are not supported)"
		return t
	}
	calls, err := callsFromJSON(rest, false)
	if err != "" {
		t.Problem = "the <|python_tag|> call " + err
	}
	t.Calls = calls
	return t
}

// parseLone reads content that is nothing but a call: a JSON object (or
// several separated by ";") or one fenced block holding one. It is strict,
// because an answer may well be JSON: the object must have exactly the
// keys of a call, with a string name and an arguments or parameters
// object.
func parseLone(content string) textCalls {
	s := strings.TrimSpace(content)
	fenced := false
	if strings.HasPrefix(s, "```") {
		inner, ok := loneFence(s)
		if !ok {
			return textCalls{}
		}
		s, fenced = inner, true
	}
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return textCalls{}
	}
	calls, err := callsFromJSON(s, true)
	if err != "" || len(calls) == 0 {
		return textCalls{}
	}
	format := textJSON
	if !fenced && strings.Contains(s, `"parameters"`) {
		format = textLlama
	}
	return textCalls{Format: format, Calls: calls}
}

// loneFence returns the body of s when s is exactly one fenced code block
// (```json … ``` or ``` … ```).
func loneFence(s string) (string, bool) {
	first, body, ok := strings.Cut(s, "\n")
	lang := strings.TrimSpace(strings.TrimPrefix(first, "```"))
	if !ok || (lang != "" && lang != "json") || !strings.HasSuffix(s, "```") {
		return "", false
	}
	body = strings.TrimSuffix(body, "```")
	if strings.Contains(body, "```") {
		return "", false
	}
	return strings.TrimSpace(body), true
}

// callsFromJSON reads one or more call objects separated by ";" or white
// space. err says what is wrong, phrased to follow "the call".
func callsFromJSON(s string, strict bool) ([]textCall, string) {
	dec := json.NewDecoder(strings.NewReader(s))
	var calls []textCall
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return calls, "is not valid JSON"
		}
		c, err := callFromObject(raw, strict)
		if err != "" {
			return calls, err
		}
		calls = append(calls, c)
		if len(calls) > maxTextCalls {
			return calls, ""
		}
		rest := strings.TrimLeft(s[dec.InputOffset():], " \t\r\n;")
		if rest == "" {
			return calls, ""
		}
		if rest[0] != '{' {
			return calls, "has text after its JSON object"
		}
		dec = json.NewDecoder(strings.NewReader(rest))
		s = rest
	}
}

// callFromObject reads {"name", "arguments"|"parameters"} (or OpenAI's
// {"function": {…}}). strict refuses any other key and a missing
// arguments object.
func callFromObject(raw json.RawMessage, strict bool) (textCall, string) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return textCall{}, "is not a JSON object"
	}
	if fn, ok := obj["function"]; ok && !strict {
		var inner map[string]json.RawMessage
		if json.Unmarshal(fn, &inner) == nil {
			obj = inner
		}
	}
	if strict {
		for k := range obj {
			switch k {
			case "name", "arguments", "parameters", "type", "id":
			default:
				return textCall{}, "has a key " + fmt.Sprintf("%q", k) + " a call does not have"
			}
		}
	}
	var name string
	if json.Unmarshal(obj["name"], &name) != nil || strings.TrimSpace(name) == "" {
		return textCall{}, `has no "name" string`
	}
	args, ok := obj["arguments"]
	if !ok {
		args, ok = obj["parameters"]
	}
	if !ok {
		if strict {
			return textCall{}, `has no "arguments" object`
		}
		return textCall{Name: name, Arguments: "{}"}, ""
	}
	// Arguments are an object, or (as on the OpenAI wire) a string that
	// holds one.
	var str string
	if json.Unmarshal(args, &str) == nil {
		args = json.RawMessage(str)
	}
	o, err := oneObject(string(args))
	if err != "" {
		return textCall{}, `has "arguments" that are not a JSON object`
	}
	return textCall{Name: strings.TrimSpace(name), Arguments: o}, ""
}

// oneObject checks that s is exactly one JSON object and returns it
// compacted.
func oneObject(s string) (string, string) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") || !json.Valid([]byte(s)) {
		return "", "is not a JSON object"
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return "", "is not a JSON object"
	}
	return b.String(), ""
}

// cleanProse is the content outside the calls, without stray call tags.
func cleanProse(s string) string {
	for _, tag := range []string{"</tool_call>", "<tool_call>"} {
		s = strings.ReplaceAll(s, tag, "")
	}
	return strings.TrimSpace(s)
}

// answered reports whether content says anything: not empty, not only
// white space, quotes and punctuation, not only the markup or template
// tokens of chat formats (<|im_end|>, <tool_call>, [INST], <think>…) —
// what a small model or a server with the wrong template sends when it
// has nothing to say. It stops at the first letter or digit outside a
// token.
func answered(content string) bool {
	for i := 0; i < len(content); {
		if n := tokenAt(content[i:]); n > 0 {
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(content[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
		i += size
	}
	return false
}

// roleWords follow <|im_start|> and <|start_header_id|> in leaked chat
// templates; they are part of the markup.
var roleWords = []string{"system", "user", "assistant", "tool", "ipython", "model"}

// tokenAt is the length of the template token or markup tag s starts
// with, 0 for none: <|…|> (and the role word after one), <tag> or </tag>
// of lower-case letters and underscores, [WORD] or [/WORD] of upper-case
// letters and underscores.
func tokenAt(s string) int {
	if len(s) < 3 {
		return 0
	}
	switch {
	case strings.HasPrefix(s, "<|"):
		end := strings.Index(s[2:min(len(s), 66)], "|>")
		if end < 0 {
			return 0
		}
		n := 2 + end + 2
		rest := strings.TrimLeft(s[n:], " ")
		for _, w := range roleWords {
			if strings.HasPrefix(rest, w) && (len(rest) == len(w) || !unicode.IsLetter(rune(rest[len(w)]))) {
				return len(s) - len(rest) + len(w)
			}
		}
		return n
	case s[0] == '<':
		return tagLen(s, '>', func(b byte) bool { return b >= 'a' && b <= 'z' || b == '_' })
	case s[0] == '[':
		return tagLen(s, ']', func(b byte) bool { return b >= 'A' && b <= 'Z' || b == '_' })
	}
	return 0
}

// tagLen is the length of the tag s starts with (its opening byte, an
// optional "/", 1 to 24 bytes ok accepts, then end), 0 for none.
func tagLen(s string, end byte, ok func(byte) bool) int {
	i := 1
	if i < len(s) && s[i] == '/' {
		i++
	}
	start := i
	for i < len(s) && i-start <= 24 && ok(s[i]) {
		i++
	}
	if i == start || i-start > 24 || i >= len(s) || s[i] != end {
		return 0
	}
	return i + 1
}
