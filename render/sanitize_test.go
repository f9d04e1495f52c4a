package render

import (
	"strings"
	"testing"
)

func TestSanitizeHostileCorpus(t *testing.T) {
	corpus := hostileCorpus()
	if len(corpus) < 40 {
		t.Fatalf("hostile corpus has %d cases, want at least 40", len(corpus))
	}
	for _, tc := range corpus {
		t.Run(tc.name, func(t *testing.T) {
			got := Sanitize(tc.in)
			if got != tc.want {
				t.Errorf("Sanitize(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			checkTerminalSafe(t, got)
			if again := Sanitize(got); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}

func TestSanitizeKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"",
		"plain ASCII with punctuation: a < b && c > d; 100% {ok} [x](y) `z` ~!@#$^*",
		"line one\nline two\n\n\tindented with a tab\tand another",
		"héllo wörld, naïve café, Ελληνικά, Русский",
		"日本語のテキストと中文",
		"emoji 👍🏽 family 👨‍👩‍👧 flag 🇳🇿 keycap 1️⃣",
		"עברית ועוד and العربية mixed with latin",
		"zero width joiner\u200d and non-joiner\u200c stay",
		"box drawing ┌─┐ │ └─┘ and arrows → ⇒",
		"replacement char \uFFFD stays itself",
	} {
		if got := Sanitize(s); got != s {
			t.Errorf("Sanitize(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestSanitizeStreamedChunks(t *testing.T) {
	// Tool output arrives in chunks that may split a sequence. Each chunk
	// is sanitized alone, so the halves must each be harmless; the operator
	// may then see the tail of a sequence as text, never obey it.
	tests := []struct {
		chunks []string
		want   string
	}{
		{[]string{"abc\x1b", "[2Jdef"}, "abc[2Jdef"},
		// A chunk that ends inside an OSC shows its body as inert text; the
		// next chunk cannot finish the sequence.
		{[]string{"abc\x1b]0;ti", "tle\x07def"}, "abc]0;titledef"},
		{[]string{"x\r", "\ny"}, "x\n\ny"},
		{[]string{"\xe2\x80", "\xaeafter"}, "\uFFFD\uFFFD\uFFFDafter"},
	}
	for _, tc := range tests {
		var got strings.Builder
		for _, c := range tc.chunks {
			got.WriteString(Sanitize(c))
		}
		checkTerminalSafe(t, got.String())
		if got.String() != tc.want {
			t.Errorf("chunks %q: got %q, want %q", tc.chunks, got.String(), tc.want)
		}
	}
}

func TestSanitizeLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "read_file", "read_file"},
		{"newlines and tabs", "a\nb\tc", "a b c"},
		{"crlf is one space", "line1\r\nline2", "line1 line2"},
		{"cr overwrite", "ok.txt\revil.sh", "ok.txt evil.sh"},
		{"title in file name", "notes\x1b]0;pwned\x07.md", "notes.md"},
		{"bidi file name", "report\u202Efdp.exe", "report⟪U+202E⟫fdp.exe"},
		{"c1 csi in error", "error: \u009b2Jfailed", "error: failed"},
		{"unicode kept", "résumé 📄.md", "résumé 📄.md"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SanitizeLine(tc.in)
			if got != tc.want {
				t.Errorf("SanitizeLine(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if strings.ContainsAny(got, "\n\t") {
				t.Errorf("SanitizeLine(%q) = %q spans lines", tc.in, got)
			}
		})
	}
	for _, tc := range hostileCorpus() {
		got := SanitizeLine(tc.in)
		checkTerminalSafe(t, got)
		if strings.ContainsAny(got, "\n\t") {
			t.Errorf("%s: SanitizeLine = %q spans lines", tc.name, got)
		}
	}
}

func BenchmarkSanitize(b *testing.B) {
	s := mixedText(10 << 10)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Sanitize(s)
	}
}

func BenchmarkSanitizePlainASCII(b *testing.B) {
	s := strings.Repeat("plain tool output line, nothing to strip here\n", 220)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Sanitize(s)
	}
}

// mixedText builds about n bytes of tool-output-like text: ASCII, accented
// and wide text, emoji, colour codes, a title write and the odd CR.
func mixedText(n int) string {
	parts := []string{
		"go test ./... ok  \x1b[32mPASS\x1b[0m github.com/x/y 0.012s\n",
		"naïve café — 日本語 テキスト 👍🏽\n",
		"progress 10%\rprogress 20%\r\n",
		"\x1b]0;build\x07compiling main.go\tdone\n",
		"plain line of ascii output from a compiler or a linter\n",
	}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(parts[i%len(parts)])
	}
	return b.String()
}
