package runner

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestGuildValidationErrorsCarryPositions(t *testing.T) {
	prompt := &fstest.MapFile{Data: []byte("p")}
	cases := []struct {
		name  string
		guild string
		want  []string // substrings, each must appear
	}{
		{
			name:  "unknown key",
			guild: "{\n  \"entryRole\": \"a\",\n  \"roles\": {\"a\": {\"systemPrompt\": \"p.md\", \"tools\": [\"finish\"], \"colour\": 1}}\n}",
			want:  []string{"guild.json:3:", `unknown key "colour"`},
		},
		{
			name:  "undeclared tool",
			guild: "{\"entryRole\": \"a\",\n\"roles\": {\"a\": {\"systemPrompt\": \"p.md\", \"tools\": [\"finish\", \"teleport\"]}}}",
			want:  []string{"guild.json:2:", `"teleport"`, "declare it"},
		},
		{
			name:  "deployment key in guild",
			guild: "{\"entryRole\": \"a\", \"roles\": {\"a\": {\"systemPrompt\": \"p.md\", \"tools\": [\"finish\"]}},\n \"model\": {\"name\": \"x\"}}",
			want:  []string{"guild.json:2:2", "deployment.json"},
		},
		{
			name:  "missing entry role",
			guild: `{"entryRole": "boss", "roles": {"a": {"systemPrompt": "p.md", "tools": ["finish"]}}}`,
			want:  []string{`entryRole "boss" is not a role`},
		},
		{
			name:  "missing prompt",
			guild: `{"entryRole": "a", "roles": {"a": {"systemPrompt": "nope.md", "tools": ["finish"]}}}`,
			want:  []string{`cannot read system prompt "nope.md"`},
		},
		{
			name:  "syntax error",
			guild: "{\"entryRole\": \"a\",\n \"roles\": {,}}",
			want:  []string{"guild.json:2:", "invalid JSON"},
		},
		{
			name:  "wrong type",
			guild: `{"entryRole": "a", "roles": {"a": {"systemPrompt": "p.md", "tools": "finish"}}}`,
			want:  []string{"guild.json:1:", "tools must be"},
		},
		{
			// A role name the workspace chose: quoted wherever a message
			// names it, so it cannot break or fake a line.
			name:  "hostile role names",
			guild: `{"entryRole": "boss", "roles": {"a\nguild ok\u001b]0;t\u0007": {"systemPrompt": "p.md", "tools": ["finish"], "x": 1}, "b.c": {"tools": "finish"}}}`,
			want: []string{
				`unknown key "x" in guild.roles["a\nguild ok\x1b]0;t\a"]`,
				`roles["b.c"].tools must be`,
				`roles are "a\nguild ok\x1b]0;t\a"`,
			},
		},
		{
			name:  "duplicate key",
			guild: "{\"entryRole\": \"a\",\n\"entryRole\": \"b\", \"roles\": {}}",
			want:  []string{"guild.json:2:1", "duplicate key"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadGuild(fstest.MapFS{"guild.json": {Data: []byte(tc.guild)}, "p.md": prompt}, "g")
			wantError(t, err, tc.want)
		})
	}
}

func TestDeploymentValidation(t *testing.T) {
	cases := []badDeployment{
		{"api key refused", "{\"model\": {\n  \"apiKey\": \"sk-123\"}}", []string{"d.json:2:3", "credential", "OPENAI_API_KEY"}},
		{"unknown nested key", `{"executor": {"interruptTriggers": {"everyToolCall": 3}}}`, []string{"d.json:1:", `unknown key "everyToolCall"`, "everyToolCalls"}},
		{"bad threshold", `{"executor": {"contextPressureThreshold": 1.5}}`, []string{"contextPressureThreshold must be a fraction"}},
		{"bad provider", `{"model": {"provider": "gemini"}}`, []string{`"gemini" is not one of`}},
		{"max tokens over window", `{"model": {"contextWindow": 1000, "generation": {"maxTokens": 2000}}}`, []string{"maxTokens must be positive and smaller"}},
		{"passEnv not a name", "{\"executor\": {\"passEnv\": [\"OK\",\n \"A=B\"]}}", []string{"d.json:2:2", `passEnv[1] "A=B" is not an environment variable name`}},
		{"passEnv a provider key", `{"executor": {"passEnv": ["OPENAI_API_KEY"]}}`, []string{`passEnv[0] "OPENAI_API_KEY"`, "never reach a tool"}},
		{"passEnv guildhall prefix", `{"executor": {"passEnv": ["GUILDHALL_*"]}}`, []string{"never reach a tool"}},
		{"negative price", "{\"model\": {\n \"price\": {\"input\": -1, \"output\": 2}}}", []string{"d.json:2:11", "may not be negative"}},
		{"bad currency", `{"model": {"price": {"input": 1, "output": 2, "currency": "dollars"}}}`, []string{`currency "dollars" is not a three-letter currency code`}},
		{"unknown price key", `{"model": {"price": {"prompt": 1}}}`, []string{`unknown key "prompt"`}},
	}
	checkBadDeployments(t, cases)
}

func TestDeploymentDefaultsAndOptIns(t *testing.T) {
	d := parseDeployment(t, `{"model": {"name": "qwen", "contextWindow": 16384}, "executor": {"contextHandlerRole": "context_manager"}}`)
	if d.Model.Name != "qwen" || d.Model.ContextWindow != 16384 || d.Executor.MaxAgentDepth != 8 || d.ContextPolicy.MaxToolOutputChars != 4000 {
		t.Fatalf("defaults not kept: %+v", d)
	}
	if d.Executor.InterruptTriggers != nil || d.Executor.InquiryHandlerRole != "" {
		t.Fatalf("handler roles and the cadence are opt-in in a file: %+v", d.Executor)
	}
	g := testGuild(t)
	if err := d.CheckAgainstGuild(g); err == nil || !strings.Contains(err.Error(), `"context_manager"`) {
		t.Fatalf("a handler role missing from the guild must be an error, got %v", err)
	}
}

// badDeployment is a deployment.json that ParseDeployment must refuse, with
// the substrings its error must hold (each must appear).
type badDeployment struct {
	name, json string
	want       []string
}

// parseDeployment is the deployment file d.json holding text; a test
// that needs it fails when it does not parse.
func parseDeployment(t *testing.T, text string) *Deployment {
	t.Helper()
	d, err := ParseDeployment("d.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// wantError fails the test unless err is an error whose text holds each
// of want.
func wantError(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatal("want an error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func checkBadDeployments(t *testing.T, cases []badDeployment) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDeployment("d.json", []byte(tc.json))
			wantError(t, err, tc.want)
		})
	}
}
