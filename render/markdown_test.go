package render

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// checkOnlySGR fails unless the only terminal control in s is SGR styling
// (ESC [ digits ; m) of a shape a glamour style can have (styleShapedSGR)
// and newlines. It parses s itself rather than reusing the output filter,
// so the two cannot share a mistake.
func checkOnlySGR(t *testing.T, s string) {
	t.Helper()
	if err := onlySGR(s); err != nil {
		t.Fatalf("%v in %q", err, s)
	}
}

func onlySGR(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("invalid UTF-8")
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b {
			j := i + 1
			if j >= len(s) || s[j] != '[' {
				return fmt.Errorf("ESC not starting CSI at byte %d", i)
			}
			for j++; j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';'); j++ {
			}
			if j >= len(s) || s[j] != 'm' {
				return fmt.Errorf("CSI other than SGR at byte %d", i)
			}
			if err := styleShapedSGR(s[i+2 : j]); err != nil {
				return fmt.Errorf("%w at byte %d", err, i)
			}
			i = j + 1
			continue
		}
		if c < 0x20 && c != '\n' || c == 0x7f {
			return fmt.Errorf("C0 control 0x%02x at byte %d", c, i)
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= 0x80 && r <= 0x9f {
			return fmt.Errorf("C1 control U+%04X at byte %d", r, i)
		}
		if isBidiForTest(r) {
			return fmt.Errorf("bidi control U+%04X at byte %d", r, i)
		}
		i += n
	}
	return nil
}

// visible is what the operator reads: styling removed, runs of spaces and
// line breaks collapsed, so wrapping and padding do not matter.
func visible(s string) string {
	return strings.Join(strings.Fields(ansi.Strip(s)), " ")
}

func TestRenderMarkdownHostileCorpus(t *testing.T) {
	r := NewMarkdownRenderer("dark")
	for _, tc := range hostileCorpus() {
		for _, width := range []int{40, 80} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, width), func(t *testing.T) {
				checkOnlySGR(t, r.Render(tc.in, width))
			})
		}
	}
}

func TestRenderMarkdownShowsReferencesLiterally(t *testing.T) {
	// A reference that would decode to a control is shown as the text the
	// model wrote, in prose and in code spans alike.
	r := NewMarkdownRenderer("dark")
	tests := []struct{ in, want string }{
		{"&#27;]52;c;Y3VybA==&#7; end", "&#27;]52;c;Y3VybA==&#7; end"},
		{"&#x1b;[2J cleared?", "&#x1b;[2J cleared?"},
		{"`&#27;]0;t&#7;` and `&#x9b;2J`", "&#27;]0;t&#7; and &#x9b;2J"},
		{"&#27[2J no semicolon", "&#27[2J no semicolon"},
		{"&#4294967323;[2J wraps", "&#4294967323;[2J wraps"},
		{"abc&#x202e;def", "abc&#x202e;def"},
		{"# &#27;[2J title", "&#27;[2J title"},
	}
	for _, tc := range tests {
		out := r.Render(tc.in, 80)
		checkOnlySGR(t, out)
		if got := visible(out); !strings.Contains(got, tc.want) {
			t.Errorf("Render(%q) shows %q, want it to contain %q", tc.in, got, tc.want)
		}
	}
}

func TestRenderMarkdownFilterHasNothingToRemove(t *testing.T) {
	// Defense in depth, checked from both sides: what glamour emits for the
	// prepared text already holds no control but the style's own SGR, so
	// the output filter removes nothing; and the filter's set is complete,
	// so no styling of glamour's is lost to it.
	r := NewMarkdownRenderer("dark")
	for _, tc := range hostileCorpus() {
		for _, width := range []int{40, 80} {
			pre := r.layout(tc.in, width)
			if got := r.sgr.filter(pre); got != pre {
				t.Errorf("%s at %d: the filter changed glamour's output\nbefore %q\nafter  %q", tc.name, width, pre, got)
			}
		}
	}
}

func TestRenderMarkdownOrdinaryProse(t *testing.T) {
	r := NewMarkdownRenderer("dark")
	tests := []struct {
		name, in string
		want     []string
	}{
		{"heading", "# Plan\n\nSome words.", []string{"Plan", "Some words."}},
		{"list", "- first\n- second\n1. one\n2. two", []string{"first", "second", "1. one", "2. two"}},
		{"comparison", "Check that a < b && c > d holds.", []string{"a < b && c > d"}},
		{"html-looking text", "Use the <T> parameter & friends", []string{"& friends"}},
		{"entities", "&copy; 2025 &amp; &#169; &lt;tag&gt;", []string{"© 2025 & © <tag>"}},
		{"emoji and cjk", "Done 👍🏽 — 完成しました", []string{"Done 👍🏽 — 完成しました"}},
		{"inline code", "Run `go test ./render/...` now", []string{"go test ./render/..."}},
		{"fenced code", "```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```", []string{"func main() {", "fmt.Println(\"hi\")"}},
		{"emphasis", "*soft* and **strong**", []string{"soft and strong"}},
		{"table", "| name | ok |\n|---|---|\n| build | yes |", []string{"name", "build", "yes"}},
		{"rtl text without controls", "שלום עולם", []string{"שלום עולם"}},
	}
	for _, tc := range tests {
		for _, width := range []int{40, 80} {
			out := r.Render(tc.in, width)
			checkOnlySGR(t, out)
			got := visible(out)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s at %d: shows %q, want %q in it", tc.name, width, got, w)
				}
			}
		}
	}
}

func TestRenderMarkdownKeepsCodeIndentation(t *testing.T) {
	// Go code is indented with tabs; each level must stay visible as four
	// columns rather than collapse or go raw to the terminal.
	r := NewMarkdownRenderer("dark")
	out := ansi.Strip(r.Render("```\nif ok {\n\treturn\n\t\tdeeper\n}\n```", 80))
	indent := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		for _, word := range []string{"if ok {", "return", "deeper"} {
			if strings.HasPrefix(trimmed, word) {
				indent[word] = len(line) - len(trimmed)
			}
		}
	}
	if indent["return"]-indent["if ok {"] != 4 || indent["deeper"]-indent["if ok {"] != 8 {
		t.Errorf("indents %v, want return +4 and deeper +8 over %q in:\n%s", indent, "if ok {", out)
	}
}

func TestRenderMarkdownFitsWidth(t *testing.T) {
	r := NewMarkdownRenderer("dark")
	text := "# A heading that is fairly long for a narrow pane\n\n" +
		"This paragraph is long enough that it must wrap several times at forty columns, " +
		"and it contains ordinary words only.\n\n" +
		"- a list item that also runs on for quite a while before it stops\n" +
		"- 日本語のテキストは幅が二倍です。日本語のテキストは幅が二倍です。\n\n" +
		"> a quoted remark that wraps as well, because it is long\n\n" +
		"See https://example.com/a/very/long/path/without/any/spaces/that/glamour/cannot/wrap/at/all\n"
	for _, width := range []int{40, 80} {
		for i, line := range strings.Split(r.Render(text, width), "\n") {
			if w := ansi.StringWidth(line); w > width {
				t.Errorf("width %d: line %d is %d cells: %q", width, i, w, ansi.Strip(line))
			}
		}
	}
}

func TestRenderMarkdownWidths(t *testing.T) {
	r := NewMarkdownRenderer("notty")
	text := "word " + strings.Repeat("lorem ipsum ", 20)
	if a, b := r.Render(text, 0), r.Render(text, 80); a != b {
		t.Errorf("width 0 should render as 80")
	}
	if a, b := r.Render(text, 100000), r.Render(text, maxWidth); a != b {
		t.Errorf("huge widths should render as %d", maxWidth)
	}
	if a, b := r.Render(text, 30), r.Render(text, 80); a == b {
		t.Errorf("widths 30 and 80 rendered the same")
	}
}

func TestNewMarkdownRendererStyles(t *testing.T) {
	text := "# Title\n\n**bold** and `code`"
	dark := NewMarkdownRenderer("dark").Render(text, 60)
	for _, style := range []string{"dark", "light", "notty", "ascii", "auto", "", "no-such-style"} {
		out := NewMarkdownRenderer(style).Render(text, 60)
		checkOnlySGR(t, out)
		// The ASCII styles keep Markdown's markers, so look for the words.
		if got := visible(out); !strings.Contains(got, "Title") || !strings.Contains(got, "bold") || !strings.Contains(got, "and code") {
			t.Errorf("style %q shows %q", style, got)
		}
		switch style {
		case "auto", "", "no-such-style":
			if out != dark {
				t.Errorf("style %q should fall back to dark", style)
			}
		}
	}
}

// countingTerm wraps a real or fake renderer and counts renders.
type countingTerm struct {
	render func(string) (string, error)
	calls  *int
}

func (c countingTerm) Render(s string) (string, error) {
	*c.calls++
	return c.render(s)
}

func TestRenderMarkdownReusesRenderersAndCaches(t *testing.T) {
	r := NewMarkdownRenderer("dark")
	real := r.newTerm
	built, renders := 0, 0
	r.newTerm = func(width int) (mdTerm, error) {
		built++
		t, err := real(width)
		if err != nil {
			return nil, err
		}
		return countingTerm{render: t.Render, calls: &renders}, nil
	}
	for frame := 0; frame < 3; frame++ {
		for i := 0; i < 50; i++ {
			r.Render(fmt.Sprintf("message **%d**", i), 80)
		}
	}
	if built != 1 {
		t.Errorf("built %d glamour renderers for one width, want 1", built)
	}
	if renders != 50 {
		t.Errorf("glamour ran %d times for 50 messages over 3 frames, want 50", renders)
	}
	for w := 20; w < 40; w++ {
		r.Render("resize", w)
	}
	if len(r.terms) > maxTerms {
		t.Errorf("holding %d renderers after a resize drag, want at most %d", len(r.terms), maxTerms)
	}
}

func TestRenderMarkdownCacheIsBounded(t *testing.T) {
	r := NewMarkdownRenderer("dark")
	r.newTerm = func(int) (mdTerm, error) {
		return countingTerm{render: func(s string) (string, error) { return s, nil }, calls: new(int)}, nil
	}
	big := strings.Repeat("x", 64<<10)
	for i := 0; i < 400; i++ {
		r.Render(fmt.Sprintf("%d %s", i, big), 80)
	}
	if r.bytes > maxCacheBytes {
		t.Errorf("cache holds %d bytes, bound is %d", r.bytes, maxCacheBytes)
	}
	if len(r.cache) != r.order.Len() || len(r.cache) == 0 {
		t.Errorf("cache index %d entries, LRU list %d", len(r.cache), r.order.Len())
	}
	// The newest message is still served from the cache.
	newest := fmt.Sprintf("%d %s", 399, big)
	if _, ok := r.cache[mdKey{text: newest, width: 80}]; !ok {
		t.Errorf("most recent render was evicted")
	}
}

func TestRenderMarkdownFallback(t *testing.T) {
	hostile := "# Title\x1b]0;pwned\x07\n\nwords " + strings.Repeat("and more words ", 10) + "\tend\u202E"
	tests := []struct {
		name    string
		newTerm func(int) (mdTerm, error)
	}{
		{"renderer cannot be built", func(int) (mdTerm, error) { return nil, errors.New("no style") }},
		{"render fails", func(int) (mdTerm, error) {
			return countingTerm{render: func(string) (string, error) { return "", errors.New("boom") }, calls: new(int)}, nil
		}},
		{"render panics", func(int) (mdTerm, error) {
			return countingTerm{render: func(string) (string, error) { panic("index out of range") }, calls: new(int)}, nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewMarkdownRenderer("dark")
			r.newTerm = tc.newTerm
			out := r.Render(hostile, 40)
			checkOnlySGR(t, out)
			if got := visible(out); !strings.HasPrefix(got, "# Title words and more") || !strings.HasSuffix(got, "end⟪U+202E⟫") {
				t.Errorf("fallback shows %q", got)
			}
			for _, line := range strings.Split(out, "\n") {
				if ansi.StringWidth(line) > 40 {
					t.Errorf("fallback line wider than 40: %q", line)
				}
			}
		})
	}
}

func TestRenderMarkdownRebuildsAfterPanic(t *testing.T) {
	r := NewMarkdownRenderer("dark")
	built := 0
	r.newTerm = func(int) (mdTerm, error) {
		built++
		n := built
		return countingTerm{render: func(s string) (string, error) {
			if n == 1 {
				panic("corrupt state")
			}
			return s, nil
		}, calls: new(int)}, nil
	}
	r.Render("first", 80)
	if out := r.Render("second", 80); out != "second" || built != 2 {
		t.Errorf("after a panic got %q with %d renderers built; want a fresh renderer", out, built)
	}
}

func TestRenderMarkdownConcurrent(t *testing.T) {
	r := NewMarkdownRenderer("dark")
	texts := []string{"# one", "- two\n- three", "`four` &#27;[2J", "five\x1b]52;c;QQ==\x07"}
	want := make([]string, len(texts))
	for i, s := range texts {
		want[i] = NewMarkdownRenderer("dark").Render(s, 60)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 20; k++ {
				i := (g + k) % len(texts)
				if got := r.Render(texts[i], 60); got != want[i] {
					errs <- fmt.Sprintf("goroutine %d: %q rendered differently", g, texts[i])
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// twoKBMessage is a typical assistant message: headings, a list, a code
// block and prose, about 2 KB.
func twoKBMessage() string {
	return twoKB("## Summary\n\nI changed the parser so that **malformed input** is data, not a panic.\n\n"+
		"- `render/sanitize.go`: the state machine\n- `render/markdown.go`: the cache\n- tests and a fuzz target\n\n"+
		"```go\nfunc Sanitize(s string) string {\n\tif isPlain(s, true) {\n\t\treturn s\n\t}\n\treturn strip(s)\n}\n```\n\n",
		"The renderer caches output per width, so redrawing a long history costs a map lookup per message. ")
}

// twoKB is head followed by prose, a sentence repeated until the message
// is at least 2 KB long.
func twoKB(head, sentence string) string {
	var b strings.Builder
	b.WriteString(head)
	for b.Len() < 2048 {
		b.WriteString(sentence)
	}
	return b.String()
}

func BenchmarkRenderMarkdownCached(b *testing.B) {
	r := NewMarkdownRenderer("dark")
	msg := twoKBMessage()
	r.Render(msg, 80)
	b.ReportAllocs()
	for b.Loop() {
		r.Render(msg, 80)
	}
}

func BenchmarkRenderMarkdownCold(b *testing.B) { benchmarkRenderCold(b, twoKBMessage()) }

// benchmarkRenderCold renders msg at width 80 with the renderer warm but
// its cache of no use: each round's text differs by a suffix.
func benchmarkRenderCold(b *testing.B, msg string) {
	r := NewMarkdownRenderer("dark")
	r.Render("warm up the width-80 renderer", 80)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		r.Render(msg+strings.Repeat(" ", i%64)+fmt.Sprint(i), 80)
	}
}

func TestRenderMarkdownPathologicalInputStaysSmall(t *testing.T) {
	// Each of these froze the terminal for seconds or minutes, or grew to
	// tens of megabytes, when handed to glamour; they must come back as
	// readable text of reasonable size.
	nestedItems := func(levels int) string {
		var b strings.Builder
		for i := 0; i < levels; i++ {
			b.WriteString(strings.Repeat("  ", 2*i) + "- > item\n")
		}
		return b.String()
	}
	tests := []struct {
		name, in, want string
	}{
		{"80 nested quotes", strings.Repeat("> ", 80) + "deep", "deep"},
		{"500 nested quotes", strings.Repeat(">", 500) + " deep", "deep"},
		{"nested list quotes", nestedItems(40), "item"},
		{"inline nested lists", strings.Repeat("- ", 200) + "deep", "deep"},
		{"bracket word", "start " + strings.Repeat("[", 8000) + " end", "end"},
		{"emphasis word", "start " + strings.Repeat("*a_", 3000) + " end", "end"},
	}
	r := NewMarkdownRenderer("dark")
	for _, tc := range tests {
		for _, width := range []int{1, 20, 80} {
			out := r.Render(tc.in, width)
			checkOnlySGR(t, out)
			if len(out) > 64*len(tc.in)+4096 {
				t.Errorf("%s at %d: %d bytes of output for %d of input", tc.name, width, len(out), len(tc.in))
			}
			if !strings.Contains(strings.ReplaceAll(ansi.Strip(out), "\n", ""), tc.want) {
				t.Errorf("%s at %d: %q not shown", tc.name, width, tc.want)
			}
		}
	}
}

func TestWithinGlamourLimitsAllowsOrdinaryMarkdown(t *testing.T) {
	for _, s := range []string{
		twoKBMessage(),
		"> quoted\n> > reply to quote\n> > > and again",
		"- a\n  - b\n    - c\n      - d\n        - e\n          1. f",
		"```yaml\nroot:\n  a:\n    b:\n      c:\n        - d\n```",
		"See https://example.com/" + strings.Repeat("path/", 100),
	} {
		if !withinGlamourLimits(s) {
			t.Errorf("ordinary Markdown routed to plain text: %q", s)
		}
	}
}

// ampersandMessage is twoKBMessage with the ampersands prose and code carry:
// references, shell and Go operators, a URL query. It takes the pre-pass's
// parse, which twoKBMessage (no '&') skips.
func ampersandMessage() string {
	return twoKB("## Summary &mdash; parser &amp; cache\n\nRun `make && make test`, then open https://example.com/?a=1&b=2 &copy; 2025.\n\n"+
		"```go\nif a && b {\n\treturn x &^ y\n}\n```\n\n| op | meaning |\n|---|---|\n| `&&` | and &lt;both&gt; |\n\n",
		"The renderer caches output per width &amp; style, so redrawing a long history costs a map lookup per message. ")
}

func BenchmarkRenderMarkdownColdAmpersands(b *testing.B) { benchmarkRenderCold(b, ampersandMessage()) }
