package main

import "testing"

func TestLikelyTypo(t *testing.T) {
	for _, tc := range []struct {
		typed, name string
		want        bool
	}{
		{"shwo", "show", true}, // a transposition is one edit
		{"rnu", "run", true},
		{"qeueu", "queue", true}, // two edits in a five-letter name
		{"efort", "effort", true},
		{"jsno", "json", true},
		{"sho", "show", true}, // a prefix of three letters
		{"sh", "show", false}, // too short a prefix to guess
		{"show", "show", false},
		{"test", "trust", false}, // two edits in a short name: a real word, not a typo
		{"fix", "run", false},
		{"refactor", "resume", false},
		{"RUN", "run", false}, // case alone is not a typo worth a message
		{"héadless", "headless", true},
	} {
		if got := likelyTypo(tc.typed, tc.name); got != tc.want {
			t.Errorf("likelyTypo(%q, %q) = %v, want %v", tc.typed, tc.name, got, tc.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"shwo":                  "shwo",
		"fix the bug":           `"fix the bug"`,
		"it's broken":           `"it's broken"`,
		`say "hi"`:              `'say "hi"'`,
		"cost $5 and it's 'ok'": `'cost $5 and it'\''s '\''ok'\'''`,
		"":                      `""`,
		"a\x1b[31mb":            "ab", // escape-safe: the sequence is stripped
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
