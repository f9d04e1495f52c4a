package render

import (
	"strings"
	"testing"
)

func FuzzSanitize(f *testing.F) {
	for _, tc := range hostileCorpus() {
		f.Add(tc.in)
	}
	f.Add(mixedText(512))
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		checkTerminalSafe(t, out)
		if again := Sanitize(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		line := SanitizeLine(s)
		checkTerminalSafe(t, line)
		if strings.ContainsAny(line, "\n\t") {
			t.Fatalf("SanitizeLine(%q) = %q spans lines", s, line)
		}
		if err := onlySGR(stripNonSGR(s)); err != nil {
			t.Fatalf("stripNonSGR(%q): %v", s, err)
		}
	})
}
