package tools

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanWebText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text\nwith\ttab", "plain text\nwith\ttab"},
		{"clear\x1b[2Jscreen", "clearscreen"},
		{"\x1b[38;5;196mred\x1b[0m", "red"},
		{"title\x1b]0;pwned\x07after", "titleafter"},
		{"link \x1b]8;;https://evil.example\x1b\\text\x1b]8;;\x1b\\", "link text"},
		{"clip \x1b]52;c;ZXZpbA==\x07", "clip "},
		{"dcs \x1bP+q544e\x1b\\ end", "dcs  end"},
		{"apc \x1b_hidden\x1b\\ pm \x1b^x\x1b\\ sos \x1bXy\x1b\\", "apc  pm  sos "},
		{"two-byte \x1bc reset \x1b(B", "two-byte  reset "},
		{"unterminated \x1b]0;title runs to the end", "unterminated "},
		{"unterminated csi \x1b[12;", "unterminated csi "},
		{"csi then newline \x1b[1\nnext", "csi then newline \nnext"},
		{"c1 csi \u009b31mred", "c1 csi red"},
		{"c1 osc \u009d0;t\u009c after", "c1 osc  after"},
		{"nel\u0085 and c1\u0090dcs\u009c", "nel and c1"},
		{"bell\a back\b del\x7f nul\x00", "bell back del nul"},
		{"over\rwrite", "over\nwrite"},
		{"crlf\r\nline", "crlf\nline"},
		{"sep\u2028line\u2029para", "sep\nline\npara"},
		{"rlo \u202etxt.exe pdi\u2069 lre\u202a lrm\u200e alm\u061c bom\ufeff", "rlo txt.exe pdi lre lrm alm bom"},
		{"bad \xff\xfe utf8", "bad \uFFFD\uFFFD utf8"},
		{"ref &#27;[2J and &#x1B;]0;x", "ref ⟪U+001B⟫[2J and ⟪U+001B⟫]0;x"},
		{"lenient &#27[2J &#0000000027; &#x0001b &amp;#27; &amp;amp;#x1b;", "lenient ⟪U+001B⟫[2J ⟪U+001B⟫ ⟪U+001B⟫ ⟪U+001B⟫ ⟪U+001B⟫"},
		{"c1 refs &#155; &#x9d; bidi &#8238; &#x2066;", "c1 refs ⟪U+009B⟫ ⟪U+009D⟫ bidi ⟪U+202E⟫ ⟪U+2066⟫"},
		{"harmless &#65; &#x263A; &#10; &#9; &amp; &lt;", "harmless &#65; &#x263A; &#10; &#9; &amp; &lt;"},
		{"huge &#99999999999; &#x110000;", "huge &#99999999999; &#x110000;"},
		{"emoji 👩‍💻 and accents café", "emoji 👩‍💻 and accents café"},
	}
	for _, c := range cases {
		if got := cleanWebText(c.in); got != c.want {
			t.Errorf("cleanWebText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzCleanWebText(f *testing.F) {
	for _, s := range []string{"\x1b[2J", "\x1b]0;t\x07", "&#27;", "\u202e", "\xff", "&amp;#x1b;[", "\u009b1m", "a\rb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := cleanWebText(s)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from %q", s)
		}
		assertInert(t, got)
		if again := cleanWebText(got); again != got {
			t.Fatalf("not idempotent: %q → %q → %q", s, got, again)
		}
	})
}

func TestExtractHTML(t *testing.T) {
	base, _ := url.Parse("https://docs.example/guide/intro.html")
	cases := []struct{ name, in, want string }{
		{"headings and paragraphs", "<h2>Setup</h2><p>Run   it\n now.</p><p>Then  this.</p>", "## Setup\n\nRun it now.\n\nThen this."},
		{"inline elements keep their spaces", "<p>a <b>bold</b><i>italic</i> <code>x</code>.</p>", "a bolditalic x."},
		{"lists nest and number", "<ol><li>first<ul><li>sub</li></ul></li><li>second</li></ol>", "1. first\n  - sub\n2. second"},
		{"relative links resolve", `<p>See <a href="../api/">the API</a> and <a href="https://go.dev">https://go.dev</a>.</p>`, "See the API (https://docs.example/api/) and https://go.dev."},
		{"fragment and script links show their text only", `<a href="#top">top</a> <a href="javascript:void(0)">js</a> <a href="vbscript:x">vb</a> <a href="mailto:a@b.example">mail</a>`, "top js vb mail (mailto:a@b.example)"},
		{"tables", "<table><tr><th>name</th><th>age</th></tr><tr><td>ann</td><td>3</td></tr></table>", "name | age\nann | 3"},
		{"pre keeps whitespace", "<p>x</p><pre>  a\n    b</pre><p>y</p>", "x\n\n  a\n    b\n\ny"},
		{"br and hr", "one<br>two<br><br><br>three<hr>four", "one\ntwo\n\nthree\n\n---\n\nfour"},
		{"images by alt", `<p><img src="x.png" alt="a diagram"> <img src="y.png"></p>`, "[image: a diagram]"},
		{"dropped elements", "<p>keep</p><script>s</script><style>s</style><noscript>n</noscript><template>t</template><iframe>i</iframe><svg><text>v</text></svg><math>m</math><select><option>o</option></select>", "keep"},
		{"hidden content", `<p>seen</p><p hidden>a</p><div aria-hidden="TRUE">b</div><span style="DISPLAY : NONE">c</span><p style="visibility:hidden">d</p><input type="hidden" value="e">`, "seen"},
		{"attributes never reach the text", `<p onclick="alert('x')" title="TITLE-ATTR" data-x="DATA-ATTR">text</p>`, "text"},
		{"comments and doctypes", "<!doctype html><!-- a comment --><p>body</p>", "body"},
		{"entities decode and control ones vanish", "<p>a &amp; b &lt;c&gt; &#27;[31mred &#x202e;x</p>", "a & b <c> red x"},
		{"unclosed tags", "<p>one<p>two<li>three", "one\n\ntwo\n- three"},
		{"an unclosed script hides the rest", "<p>a</p><script>var x = 'SCRIPT-BODY'; <p>b</p>", "a"},
		{"an unclosed hidden element hides the rest", "<p>a</p><div hidden><div>inner</div> still hidden", "a"},
		{"nested same-name elements inside a skip", "<div hidden><div>x</div>y</div><p>after</p>", "after"},
		{"a self-closed script still opens one", "<script/>alert('SCRIPT-BODY')</script><p>ok</p>", "ok"},
		{"a self-closed style, iframe, noscript or hidden div too", "<style/>X</style><iframe/>X</iframe><noscript/>X</noscript><div hidden/>X</div><p>ok</p>", "ok"},
		{"a self-closed svg is closed", "<svg/><p>ok</p>", "ok"},
		{"upper-case and spaced end tags close a script", "<SCRIPT>X</SCRIPT ><p>ok</p><script>X</scriptx>Y</script>", "ok"},
		{"a comment hides a script tag", "<!--<script>-->shown<!-- </script> -->", "shown"},
		{"a head left open does not hide the body", "<html><head><title>t</title><meta charset=utf-8><script>X</script><body><p>body text</p>", "body text"},
		{"a hidden list item ends at the next one", "<ul><li hidden>SECRET<li>one<li aria-hidden=true>SECRET<li>two</ul><p>after</p>", "- one\n- two\n\nafter"},
		{"a hidden paragraph ends at the next block", "<p hidden>SECRET<p>shown<div>also</div>", "shown\nalso"},
		{"a hidden row or cell ends at the next", "<table><tr hidden><td>SECRET<tr><td>a<td hidden>SECRET<td>b</table>", "a | b"},
		{"deeper than the tree parser allows", strings.Repeat("<div>", 600) + "<script>DEEP-SCRIPT</script>deep", "deep"},
	}
	for _, c := range cases {
		got := extractHTML(c.in, base).Text
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	if title := extractHTML("<title> A\n  <b>page</b>\x1b[2J </title><p>x</p>", base).Title; title != "A <b>page</b>" {
		t.Errorf("title %q", title)
	}
}

// A page of a million nested elements is read without recursion.
func TestExtractHTMLDeepNesting(t *testing.T) {
	doc := strings.Repeat("<div><span>", 1<<19) + "deep" + strings.Repeat("</span></div>", 1<<19)
	if got := extractHTML(doc, nil).Text; got != "deep" {
		t.Fatalf("got %.100q", got)
	}
}

func BenchmarkExtractHTML(b *testing.B) {
	page := hostilePage()[:fetchMaxBytes]
	base, _ := url.Parse("https://docs.example/")
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		extractHTML(page, base)
	}
}

func FuzzExtractHTML(f *testing.F) {
	for _, s := range []string{"<p>a<script>x</script>", "<li hidden>x<li>y", "<a href='javascript:x'>t</a>", "<pre>\x1b[2J</pre>", "<title>\x1b]0;x", "<svg/><p>&#27;[H"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://docs.example/")
	f.Fuzz(func(t *testing.T, doc string) {
		out := extractHTML(doc, base)
		assertInert(t, cleanWebText(out.Text))
		assertInert(t, out.Title)
	})
}
