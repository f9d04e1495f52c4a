package render

import (
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		in   string // the text after '&'
		n    int
		want string
		ok   bool
	}{
		{"copy; 2025", 5, "©", true},
		{"lt;b", 3, "<", true},
		{"amp;", 4, "&", true},
		{"semi;", 5, ";", true},
		{"#169;", 5, "©", true},
		{"#x1F600;", 8, "😀", true},
		{"#X41;", 5, "A", true},
		{"#0000169;", 9, "©", true},  // seven digits is CommonMark's limit
		{"#x00000a9;", 0, "", false}, // seven hex digits is one too many
		{"#00000169;", 0, "", false},
		{"NotEqualTilde;", 14, "≂̸", true},
		// Never decoded: controls, C1, bidi, noncharacters, surrogates,
		// out of range, and the forms CommonMark does not have.
		{"#27;", 0, "", false},
		{"#x1b;", 0, "", false},
		{"#0;", 0, "", false},
		{"#9;", 0, "", false},
		{"#10;", 0, "", false},
		{"#127;", 0, "", false},
		{"#155;", 0, "", false},
		{"#x9d;", 0, "", false},
		{"#x202e;", 0, "", false},
		{"#x2067;", 0, "", false},
		{"rlm;", 0, "", false},
		{"lrm;", 0, "", false},
		{"Tab;", 0, "", false},
		{"NewLine;", 0, "", false},
		{"#xd800;", 0, "", false},
		{"#x110000;", 0, "", false},
		{"#xfdd0;", 0, "", false},
		{"#xfffe;", 0, "", false},
		{"#x1ffff;", 0, "", false},
		{"#4294967323;", 0, "", false},
		{"#27", 0, "", false},
		{"copy 2025", 0, "", false},
		{"notit;", 0, "", false}, // html would decode the prefix &not
		{"ampx;", 0, "", false},
		{"foo;", 0, "", false},
		{"1abc;", 0, "", false},
		{"#;", 0, "", false},
		{"#x;", 0, "", false},
		{"", 0, "", false},
		{";", 0, "", false},
	}
	for _, tc := range tests {
		n, got, ok := parseRef(tc.in)
		if ok != tc.ok || n != tc.n || got != tc.want {
			t.Errorf("parseRef(%q) = %d, %q, %v; want %d, %q, %v", tc.in, n, got, ok, tc.n, tc.want, tc.ok)
		}
	}
}

func TestPrepareMarkdown(t *testing.T) {
	const T, R = string(ampText), string(ampRef)
	p := newMarkdownParser()
	tests := []struct{ name, in, want string }{
		{"no ampersand", "plain *text*", "plain *text*"},
		{"bare ampersands", "a & b && c", "a " + T + " b " + T + T + " c"},
		{"dangerous references lose their ampersand", "&#27;[2J &#x9b; &rlm;", T + "#27;[2J " + T + "#x9b; " + T + "rlm;"},
		{"split references too", "&#*2*7; ~~&#`27`;~~", T + "#*2*7; ~~" + T + "#`27`;~~"},
		{"non-ASCII decoded in place", "&copy; &#x1F600;", "© 😀"},
		{"syntax characters escaped", "&lt;b&gt; &#42; &#124; &#96;", "\\<b\\> \\* \\| \\`"},
		{"ampersand references", "&amp; &#38;", T + " " + T},
		{"letters and quotes kept for afterwards", "&quot;&#65;", R + "quot;" + R + "#65;"},
		{"escaped ampersand", "\\&lt; \\\\&lt;", T + "lt; \\\\\\<"},
		{"code span literal", "`&lt; &amp;`", "`" + T + "lt; " + T + "amp;`"},
		{"fenced code as is", "```\na && b &lt;\n```", "```\na && b &lt;\n```"},
		{"indented code as is", "    a && b", "    a && b"},
		{"html decoded afterwards", "<div>&lt;&#27;</div>", "<div>" + R + "lt;" + T + "#27;</div>"},
		{"link text decoded, destination as is", "[&lt;](http://u/?a&b)", "[\\<](http://u/?a&b)"},
		{"autolink as is", "<http://u/?a&b> http://v.example/?c&d", "<http://u/?a&b> http://v.example/?c&d"},
		{"autolink in strikethrough replaced", "~~http://v.example/?c&d~~", "~~http://v.example/?c" + T + "d~~"},
		{"not an autolink without a domain", "http://v/?c&d", "http://v/?c" + T + "d"},
		{"reference definition destination as is", "[r]\n\n[r]: http://u/?a&b \"t&amp;\"", "[r]\n\n[r]: http://u/?a&b \"t" + R + "amp;\""},
		{"the text's own placeholders", "x" + T + "y" + R + "z &", "x\uFFFDy\uFFFDz " + T},
	}
	for _, tc := range tests {
		if got := prepareMarkdown(p, tc.in); got != tc.want {
			t.Errorf("%s: prepareMarkdown(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestPrepareMarkdownFallsBackWhenAnAmpersandWouldDecode(t *testing.T) {
	// Whatever the rewriting does to the structure, no '&' kept as written
	// may end up where glamour decodes.
	p := newMarkdownParser()
	for _, in := range []string{
		"```\n&#27;\n```",
		"[x](http://u/&#27;)",
		"<http://u/&#27;>",
		"http://u.example/?&#27;",
		"*http://u.example/?&#27;*",
	} {
		out := prepareMarkdown(p, in)
		if strings.Contains(out, "&") && !decodeFree(p, []byte(out)) {
			t.Errorf("prepareMarkdown(%q) = %q leaves an '&' where glamour decodes", in, out)
		}
	}
	// decodeFree itself must see each place glamour decodes.
	for _, s := range []string{
		"a &#27;", "`&#27;`", "~~http://u.example/&#27;~~", "http://u/&#27;", "<b title='&#27;'>x</b>", "<div>\n&#27;\n</div>", "~~<i>&#27;</i>~~",
		"[&#27;](http://u)", "![&#27;](http://u)", "| &#27; |\n|---|", "# &#27;", "Term\n: &#27;",
	} {
		if decodeFree(p, []byte(s)) {
			t.Errorf("decodeFree(%q) missed an '&' glamour decodes", s)
		}
	}
	for _, s := range []string{"```\n&#27;\n```", "    &#27;", "[x](http://u/&#27;)", "<http://u/&#27;>", "http://u.example/?a&b"} {
		if !decodeFree(p, []byte(s)) {
			t.Errorf("decodeFree(%q) refused an '&' glamour prints as written", s)
		}
	}
}

func TestRestoreAmps(t *testing.T) {
	const T, R = string(ampText), string(ampRef)
	tests := []struct{ in, want string }{
		{"no placeholders", "no placeholders"},
		{T + "#27;[8m", "&#27;[8m"},
		{R + "quot;x" + R + "#65;", "\"xA"},
		{R + "lt;", "<"},
		{R + "#27;", "&#27;"}, // marked, but not safe: never decoded
		{R + "\x1b[0mlt;", "&\x1b[0mlt;"},
		{R, "&"},
		{T + R + "amp;", "&&"},
	}
	for _, tc := range tests {
		if got := restoreAmps(tc.in); got != tc.want {
			t.Errorf("restoreAmps(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
