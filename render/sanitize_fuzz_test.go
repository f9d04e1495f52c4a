package render

import (
	"strings"
	"testing"
)

// fuzzSGRSet is a plausible style's set, with extended colours so the
// filter's unit parser is exercised.
var fuzzSGRSet = sgrSet{"0": {}, "1": {}, "3": {}, "4": {}, "38;5;252": {}, "48;5;236": {}, "38;2;10;20;30": {}}

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
		// The Markdown output filter, over any input whatever, leaves only
		// the SGR of its set.
		if err := onlySGR(fuzzSGRSet.filter(s)); err != nil {
			t.Fatalf("filter(%q): %v", s, err)
		}
	})
}
