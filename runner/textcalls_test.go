package runner

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseTextCalls(t *testing.T) {
	cases := []struct {
		name, content string
		format        string // "" for no call found
		calls         []textCall
		problem       string // a substring of the problem, "" for none
		prose         string
	}{
		{name: "hermes", content: "I will read it.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>",
			format: textHermes, calls: []textCall{{"read_file", `{"path":"a.txt"}`}}, prose: "I will read it."},
		{name: "hermes two calls, one unclosed", content: `<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>{"name":"b","arguments":{"x":1}}`,
			format: textHermes, calls: []textCall{{"a", "{}"}, {"b", `{"x":1}`}}},
		{name: "hermes arguments as a string", content: `<tool_call>{"name":"a","arguments":"{\"x\": 2}"}</tool_call>`,
			format: textHermes, calls: []textCall{{"a", `{"x":2}`}}},
		{name: "hermes OpenAI shape", content: `<tool_call>{"type":"function","function":{"name":"a","arguments":{"y":true}}}</tool_call>`,
			format: textHermes, calls: []textCall{{"a", `{"y":true}`}}},
		{name: "hermes broken JSON", content: `<tool_call>{"name":"read_file","arguments":{"path":</tool_call>`,
			format: textHermes, problem: "not valid JSON"},
		{name: "hermes no name", content: `<tool_call>{"arguments":{}}</tool_call>`, format: textHermes, problem: `no "name"`},
		{name: "hermes tags without JSON are markup", content: `""""<tool_call>"<tool_call><tool_call>" ""`},
		{name: "mistral list", content: `[TOOL_CALLS] [{"name": "write_file", "arguments": {"path": "C.md", "content": "hi"}}]`,
			format: textMistral, calls: []textCall{{"write_file", `{"path":"C.md","content":"hi"}`}}},
		{name: "mistral v11", content: `[TOOL_CALLS]list_directory[ARGS]{"path": "."}[TOOL_CALLS]read_file[CALL_ID]ab12[ARGS]{"path":"x"}`,
			format: textMistral, calls: []textCall{{"list_directory", `{"path":"."}`}, {"read_file", `{"path":"x"}`}}},
		{name: "mistral garbage", content: `[TOOL_CALLS] [{"name": `, format: textMistral, problem: "not valid JSON"},
		{name: "llama python tag", content: `<|python_tag|>{"name": "read_file", "parameters": {"path": "a"}}<|eom_id|>`,
			format: textLlama, calls: []textCall{{"read_file", `{"path":"a"}`}}},
		{name: "llama two calls", content: `<|python_tag|>{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"n": 1}}`,
			format: textLlama, calls: []textCall{{"a", "{}"}, {"b", `{"n":1}`}}},
		{name: "llama code", content: `<|python_tag|>brave_search.call(query="x")`, format: textLlama, problem: "not a JSON object"},
		{name: "llama bare object", content: ` {"name": "list_directory", "parameters": {"path": "."}} `,
			format: textLlama, calls: []textCall{{"list_directory", `{"path":"."}`}}},
		{name: "bare arguments object", content: `{"name": "list_directory", "arguments": {"path": "."}}`,
			format: textJSON, calls: []textCall{{"list_directory", `{"path":"."}`}}},
		{name: "fenced", content: "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"go.mod\"}}\n```",
			format: textJSON, calls: []textCall{{"read_file", `{"path":"go.mod"}`}}},
		// Answers that happen to be JSON are answers.
		{name: "a JSON answer", content: `{"result": 42}`},
		{name: "a person named in JSON", content: `{"name": "Ada", "age": 36}`},
		{name: "fence inside prose is an answer", content: "Call it like this:\n```json\n{\"name\": \"x\", \"arguments\": {}}\n```"},
		{name: "two fences", content: "```json\n{\"name\": \"x\", \"arguments\": {}}\n```\n```json\n{}\n```"},
		{name: "plain prose", content: "The tests pass."},
		{name: "mixed formats", content: `<tool_call>{"name":"a","arguments":{}}</tool_call>[TOOL_CALLS] []`, problem: "mixes"},
		{name: "too many calls", content: strings.Repeat(`<tool_call>{"name":"a","arguments":{}}</tool_call>`, 9), format: textHermes, problem: "more than 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := parseTextCalls(c.content)
			if c.problem == "mixes" {
				if !got.found() || !strings.Contains(got.Problem, "mixes") {
					t.Fatalf("got %+v", got)
				}
				return
			}
			if got.Format != c.format {
				t.Fatalf("format %q, want %q (%+v)", got.Format, c.format, got)
			}
			if c.problem != "" {
				if !strings.Contains(got.Problem, c.problem) {
					t.Fatalf("problem %q, want one with %q", got.Problem, c.problem)
				}
				return
			}
			if got.Problem != "" {
				t.Fatalf("unexpected problem %q", got.Problem)
			}
			if len(got.Calls) != len(c.calls) {
				t.Fatalf("calls %+v, want %+v", got.Calls, c.calls)
			}
			for i := range c.calls {
				if got.Calls[i] != c.calls[i] {
					t.Errorf("call %d = %+v, want %+v", i, got.Calls[i], c.calls[i])
				}
			}
			if got.found() && got.Prose != c.prose {
				t.Errorf("prose %q, want %q", got.Prose, c.prose)
			}
		})
	}
}

func TestAnswered(t *testing.T) {
	cases := []struct {
		content string
		want    bool
	}{
		{"", false},
		{" \n\t ", false},
		{`""""<tool_call>"<tool_call><tool_call>" ""`, false},
		{"\"\"\n\n\n\"", false},
		{"<|im_start|>assistant\n<|im_end|>", false},
		{"<|eot_id|>", false},
		{"[INST] [/INST] </s>", false},
		{"<think></think>", false},
		{"...!?", false},
		{"OK", true},
		{"42", true},
		{"<|im_end|>Done.", true},
		{"Готово", true},
		{"The file <b>is</b> written.", true},
		{"<|unterminated token and words", true},
	}
	for _, c := range cases {
		if got := answered(c.content); got != c.want {
			t.Errorf("answered(%q) = %v, want %v", c.content, got, c.want)
		}
	}
}

// TestParseTextCallsLongContent: a reply past the read limit is not
// parsed, but a call marker in it is still reported.
func TestParseTextCallsLongContent(t *testing.T) {
	long := strings.Repeat("a", maxTextCallContent) + `<tool_call>{"name":"a","arguments":{}}</tool_call>`
	got := parseTextCalls(long)
	if got.Format != textHermes || !strings.Contains(got.Problem, "too long") || len(got.Calls) != 0 {
		t.Fatalf("got format %q problem %q, %d calls", got.Format, got.Problem, len(got.Calls))
	}
	if got := parseTextCalls(strings.Repeat("b", maxTextCallContent+1)); got.found() {
		t.Fatalf("prose found as a call: %+v", got.Format)
	}
}

// FuzzParseTextCalls: whatever the content, the parser returns, and a
// result it would run holds at most maxTextCalls calls, each with a name
// and a JSON object for arguments.
func FuzzParseTextCalls(f *testing.F) {
	for _, s := range []string{
		`<tool_call>{"name":"a","arguments":{"x":1}}</tool_call>`,
		`[TOOL_CALLS] [{"name":"a","arguments":{}}]`,
		`[TOOL_CALLS]a[ARGS]{}[TOOL_CALLS]`,
		`<|python_tag|>{"name":"a","parameters":{}};{"name":"b"`,
		"```json\n{\"name\":\"a\",\"arguments\":{}}\n```",
		`{"name":"a","arguments":"{\"k\":"}`,
		`<tool_call><tool_call>{"function":{"name":1}}`,
		"<|im_start|>assistant\n\x00\xff[/INST]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		got := parseTextCalls(content)
		_ = answered(content)
		if !got.found() || got.Problem != "" {
			return
		}
		if len(got.Calls) == 0 || len(got.Calls) > maxTextCalls {
			t.Fatalf("%d calls without a problem", len(got.Calls))
		}
		for _, c := range got.Calls {
			var obj map[string]any
			if strings.TrimSpace(c.Name) == "" || json.Unmarshal([]byte(c.Arguments), &obj) != nil || obj == nil {
				t.Fatalf("call %+v is not a name and an object", c)
			}
		}
	})
}
