package render

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// styleShapedSGR fails unless every attribute of params is of a kind a
// glamour style can ask for: reset, bold, italic, underline, reverse,
// crossed-out, overline, and colours in their 16, 256 and RGB forms. It is
// written out here, apart from styleSGR, so the two cannot share a mistake.
// Conceal (8), blink (5, 6), faint (2), fonts, the 2x resets and every
// other parameter fail.
func styleShapedSGR(params string) error {
	if params == "" {
		return nil
	}
	f := strings.Split(params, ";")
	for i := 0; i < len(f); i++ {
		n, err := strconv.Atoi(f[i])
		if f[i] == "" {
			n, err = 0, nil
		}
		if err != nil {
			return fmt.Errorf("SGR parameter %q", f[i])
		}
		switch {
		case n == 0, n == 1, n == 3, n == 4, n == 7, n == 9, n == 53, n == 39, n == 49,
			n >= 30 && n <= 37, n >= 40 && n <= 47, n >= 90 && n <= 97, n >= 100 && n <= 107:
		case n == 38 || n == 48:
			if i+1 >= len(f) {
				return fmt.Errorf("SGR %d cut short in %q", n, params)
			}
			count := map[string]int{"5": 1, "2": 3}[f[i+1]]
			if count == 0 || i+2+count > len(f) {
				return fmt.Errorf("SGR %d with a bad colour in %q", n, params)
			}
			for _, c := range f[i+2 : i+2+count] {
				if v, err := strconv.Atoi(c); err != nil || v < 0 || v > 255 {
					return fmt.Errorf("SGR colour component %q in %q", c, params)
				}
			}
			i += 1 + count
		default:
			return fmt.Errorf("SGR attribute %d, which no glamour style uses, in %q", n, params)
		}
	}
	return nil
}

func TestStyleShapedSGRRejects(t *testing.T) {
	// The test-side check must itself fail on what it is meant to catch.
	for _, p := range []string{"8", "5", "6", "2", "28", "22", "21", "38;5", "38;5;256", "38;2;1;2", "38;9;1", "1;8", "x", "58;5;1", "10"} {
		if styleShapedSGR(p) == nil {
			t.Errorf("styleShapedSGR(%q) accepted it", p)
		}
	}
	for _, p := range []string{"", "0", "1;3;4", "38;5;252", "48;2;0;0;0;1", "97;100"} {
		if err := styleShapedSGR(p); err != nil {
			t.Errorf("styleShapedSGR(%q): %v", p, err)
		}
	}
}

func TestStyleSGR(t *testing.T) {
	for _, name := range []string{"dark", "light", "notty", "ascii", "dracula", "tokyo-night", "pink"} {
		set := styleSGR(name)
		if _, ok := set["0"]; !ok {
			t.Errorf("%s: no reset in %v", name, set)
		}
		for u := range set {
			if err := styleShapedSGR(u); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	dark := styleSGR("dark")
	// Straight from glamour's dark style: text 252, headings 39 bold,
	// links 30 underlined, code 203 on 236; and chroma's code colours.
	for _, want := range []string{"38;5;252", "38;5;39", "1", "4", "38;5;30", "38;5;203", "48;5;236", "3", "9"} {
		if _, ok := dark[want]; !ok {
			t.Errorf("dark style: %q missing from %v", want, dark)
		}
	}
	for _, never := range []string{"8", "5", "6", "2", "28", "38;5;16"} {
		if _, ok := dark[never]; ok {
			t.Errorf("dark style allows %q", never)
		}
	}
	if len(styleSGR("no-such-style")) != 1 {
		t.Errorf("an unknown style should allow only the reset")
	}
}

func TestForEachSGRUnit(t *testing.T) {
	tests := []struct {
		params string
		want   []string
		ok     bool
	}{
		{"", []string{"0"}, true},
		{"1", []string{"1"}, true},
		{"38;5;252;1", []string{"38;5;252", "1"}, true},
		{"1;38;2;10;20;30;48;5;236", []string{"1", "38;2;10;20;30", "48;5;236"}, true},
		{"1;;3", []string{"1", "0", "3"}, true},
		{"1;", []string{"1", "0"}, true},
		{"38;5", nil, false},
		{"38;2;1;2", nil, false},
		{"38;7;1", nil, false},
		{"38", nil, false},
	}
	for _, tc := range tests {
		var got []string
		ok := forEachSGRUnit(tc.params, func(u string) bool { got = append(got, u); return true })
		if ok != tc.ok || (ok && strings.Join(got, "|") != strings.Join(tc.want, "|")) {
			t.Errorf("forEachSGRUnit(%q) = %q, %v; want %q, %v", tc.params, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSGRFilter(t *testing.T) {
	set := sgrSet{"0": {}, "1": {}, "38;5;252": {}, "48;5;236": {}}
	tests := []struct {
		name, in, want string
	}{
		{"keeps the style's sgr", "\x1b[38;5;252;1mhi\x1b[0m\n", "\x1b[38;5;252;1mhi\x1b[0m\n"},
		{"keeps an empty reset", "\x1b[mx", "\x1b[mx"},
		{"conceal loses its esc, the text stays", "\x1b[8mhidden", "[8mhidden"},
		{"conceal beside allowed attributes", "\x1b[1;8mhidden", "[1;8mhidden"},
		{"blink", "\x1b[5mx\x1b[6my", "[5mx[6my"},
		{"colour outside the palette", "\x1b[38;5;16mx", "[38;5;16mx"},
		{"truecolour outside the palette", "\x1b[38;2;0;0;0mx", "[38;2;0;0;0mx"},
		{"colon sub-parameters", "\x1b[4:3mx", "[4:3mx"},
		{"cut-short colour", "\x1b[38;5mx", "[38;5mx"},
		{"erase display", "\x1b[2Jx", "[2Jx"},
		{"private sgr-like", "\x1b[?31mx", "[?31mx"},
		{"8-bit csi", "\u009b31mx", "31mx"},
		{"osc52 keeps its text", "a\x1b]52;c;QUJD\x07b", "a]52;c;QUJDb"},
		{"unterminated osc keeps the rest", "a\x1b]0;t b c", "a]0;t b c"},
		{"8-bit osc keeps the rest", "a\u009d0;t b c", "a0;t b c"},
		{"reset terminal", "\x1bcafter", "cafter"},
		{"sgr inside osc survives alone", "\x1b]0;\x1b[1mt\x07", "]0;\x1b[1mt"},
		{"tab becomes space", "a\tb", "a b"},
		{"cr dropped", "a\rb", "ab"},
		{"bidi made visible", "a\u202Eb", "a⟪U+202E⟫b"},
		{"truncated sgr", "x\x1b[31", "x[31"},
		{"esc at end", "x\x1b", "x"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := set.filter(tc.in); got != tc.want {
				t.Errorf("filter(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSGRFilterKeepsStyledTablesInColour(t *testing.T) {
	// Tables go through lipgloss, which styles by the terminal it detects:
	// none in a test, a true-colour one in the console. Whatever it adds
	// must be in the set, or the console would show "[...m" junk.
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	r := NewMarkdownRenderer("dark")
	in := "| name | state |\n|:---|---:|\n| **build** | `ok` &copy; |\n| [docs](https://x.example) | ~~no~~ |"
	for _, width := range []int{30, 80} {
		pre := r.layout(in, width)
		if got := r.sgr.filter(pre); got != pre {
			t.Errorf("at %d the filter changed a table:\nbefore %q\nafter  %q", width, pre, got)
		}
	}
}

// benignDocument uses every element glamour styles, and code in the
// languages models write most.
func benignDocument() string {
	var b strings.Builder
	b.WriteString("# H1\n\n## H2\n\n### H3\n\n#### H4\n\n##### H5\n\n###### H6\n\nSetext\n===\n\n")
	b.WriteString("Text with *emphasis*, **strong**, ***both***, ~~struck~~, `code`, [a link](https://x.example \"t\"), ")
	b.WriteString("<https://auto.example>, www.example.com, ![an image](https://i.example/p.png) and <b>html</b>.\n\n")
	b.WriteString("> quoted **text**\n> > nested\n\n- item\n  - nested item\n1. one\n2. two\n- [ ] task\n- [x] done\n\n")
	b.WriteString("Term\n: definition\n\n---\n\n| a | b |\n|:--|--:|\n| `x` | [l](https://y.example) |\n\n<div>block html</div>\n\n    indented code\n\n")
	for lang, code := range map[string]string{
		"go":     "package main\n\n// Comment\nfunc main() {\n\tx := 42 + 0x1f\n\tfmt.Println(\"hi\\n\", x, true, nil)\n}\n",
		"python": "# comment\n@decorator\nclass A(B):\n    def f(self, x=1.5):\n        return f\"{x!r}\" if x else None\n",
		"js":     "// c\nconst x = /re+/g; let y = `t${x}`; async function f() { await null; throw new Error('e') }\n",
		"sh":     "#!/bin/sh\n# comment\nset -e; make && make test &>/dev/null || echo \"$HOME\" 'x'\n",
		"json":   "{\"a\": [1, 2.5, true, null], \"b\": \"s\"}\n",
		"yaml":   "key: value # c\nlist:\n  - 1\n  - \"two\"\n",
		"diff":   "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n",
		"html":   "<!doctype html><a href=\"x\" class='y'>t &amp; u</a><!-- c -->\n",
		"rust":   "#[derive(Debug)]\nfn main() -> Result<(), E> { let v: Vec<u8> = vec![b'x']; Ok(()) }\n",
		"c":      "#include <stdio.h>\nint main(void) { char *s = \"x\"; return 0; } /* c */\n",
		"sql":    "SELECT a, COUNT(*) FROM t WHERE b = 'x' -- c\n",
		"":       "no language at all\n",
		"nosuch": "an unknown language\n",
	} {
		b.WriteString("```" + lang + "\n" + code + "```\n\n")
	}
	return b.String()
}

func TestSGRSetCoversGlamour(t *testing.T) {
	// The set must hold everything glamour emits, or the filter would break
	// its styling into visible "[...m". Chroma breaks ties between palette
	// colours at random, so render several times.
	doc := benignDocument()
	for _, style := range []string{"dark", "light", "notty", "ascii"} {
		r := NewMarkdownRenderer(style)
		for i := range 8 {
			pre := r.layout(doc, 60+i)
			if got := r.sgr.filter(pre); got != pre {
				t.Fatalf("%s: the filter changed glamour's output of benign Markdown:\nbefore %q\nafter  %q", style, pre, got)
			}
		}
	}
}

// BenchmarkRenderMarkdownOutputFilter is the output filter over glamour's
// output for a typical 2 KB message, about 19 KB of styled text (glamour
// wraps every word and every padding space in its own SGR pair).
func BenchmarkRenderMarkdownOutputFilter(b *testing.B) {
	r := NewMarkdownRenderer("dark")
	pre := r.layout(twoKBMessage(), 80)
	b.SetBytes(int64(len(pre)))
	b.ReportAllocs()
	for b.Loop() {
		r.sgr.filter(pre)
	}
}

// BenchmarkRenderMarkdownPrepare is the pre-pass over a message with
// ampersands in prose, code spans, a URL and a code block: two parses.
func BenchmarkRenderMarkdownPrepare(b *testing.B) {
	p := newMarkdownParser()
	msg := ampersandMessage()
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		prepareMarkdown(p, msg)
	}
}
