package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The whole Markdown pipeline, Markdown in and terminal bytes out, against
// character references that decode to control characters: in every form
// the decoders accept, split by every kind of markup that goldmark, glamour
// and bluemonday take out before they decode, in every place Markdown can
// put text.

// hostileRefs are references to ESC (and to CSI, OSC, BEL, bidi
// controls...), whole, malformed and split.
var hostileRefs = []string{
	// Whole, in each form some decoder accepts.
	"&#27;", "&#x1b;", "&#X1B;", "&#x1B;", "&#0000027;", "&#00000000027;", "&#x00000001b;",
	"&#27", "&#x1b", "&#4294967323;", "&#x10000001b;", "&#18446744073709551643;", "&#033;",
	"&#155;", "&#x9b;", "&#x9d;", "&#157;", "&#x90;", "&#x9f;", "&#7;", "&#0;", "&#127;", "&#8;",
	"&#x202e;", "&#8238;", "&#x2066;", "&rlm;", "&lrm;", "&Tab;", "&NewLine;", "&#xd800;", "&#x110000;",
	"&#xfdd0;", "&#65533;",
	// Encoded twice, for a decoder that runs twice.
	"&amp;#27;", "&amp;amp;#27;", "&#38;#27;", "&#x26;#x1b;", "&amp;#x9b;",
	// Split by emphasis, strikethrough and code markers.
	"&#*2*7;", "&#_2_7;", "&#**27**;", "&#__27__;", "&#~~27~~;", "&#~2~7;", "&#`27`;", "&#``27``;",
	"&*#27*;", "&**#x1b**;", "&#x*1b*;", "&#*x1b*;", "&~~#~~27;", "&`#`27;",
	// Split by HTML and comments.
	"&#<b></b>27;", "&#<!-- -->27;", "&<i>#</i>27;", "&#x<span>1b</span>;", "&#2<br>7;", "&#<b x=\"y\">27</b>;",
	"&#27<b>;</b>", "&<!---->#x9b;",
	// Split by backslashes and escapes.
	"&\\#27;", "\\&#27;", "&#2\\7;", "&\\#x1b;", "\\\\&#27;",
	// Split by links and images.
	"&#[27](http://u);", "&#![27](http://u);", "&[#27](http://u);",
	// References to the pieces of a reference.
	"&#38;&#35;27;", "&amp;&#35;27;", "&&#35;27;", "&#x26;&#x23;x1b;",
}

// hostilePayloads follow a reference: what the decoded ESC would start.
var hostilePayloads = []string{"[8mhidden", "]52;c;Y3VybA==&#7;", "]0;title&#x07;", "[2J", "c", "[5;38;5;16;48;5;16m"}

// placements put text (%s) in every place Markdown has for it.
var placements = []string{
	"%s", "*%s*", "**%s**", "_%s_", "~~%s~~", "~%s~", "`%s`", "`` %s ``", "***~~%s~~***",
	"[%s](http://u)", "[t](http://u/%s)", "[t](http://u \"%s\")", "[t](<http://u/%s>)",
	"![%s](http://u)", "![t](http://u/%s)", "[![%s](http://i)](http://u)",
	"<http://u/%s>", "http://u/?q=%s", "www.example.com/%s", "x@%s.example",
	"# %s", "###### %s #", "%s\n===", "| %s | b |\n|---|---|\n| c | %s |", "| a | [%s](http://u) |\n|---|---|",
	"- %s", "1. %s", "- [ ] %s", "> %s", "> - %s\n>   > %s", "Term\n: %s",
	"<div>%s</div>", "<div>\n%s\n</div>", "<p>%s", "x <b>%s</b> y", "<span title=\"%s\">t</span>", "<!-- %s -->",
	"```\n%s\n```", "```%s\nx\n```", "    %s", "~~~\n%s\n~~~",
	"[r]\n\n[r]: http://u/%s", "[r]\n\n[r]: http://u \"%s\"", "[%s]\n\n[%s]: http://u",
	"~~`%s`~~", "~~<b>%s</b>~~", "~~[%s](http://u)~~", "~~![%s](http://u)~~", "~~<http://u/%s>~~", "~~http://u/?%s~~",
	"~~*%s*~~", "**~~`%s`~~**", "| ~~%s~~ | b |\n|---|---|", "# ~~%s~~", "> ~~x %s~~",
}

// terminalSafe fails unless out is what may reach a terminal from a
// renderer whose style allows set: valid UTF-8; no ESC that does not start
// an SGR whose attributes are all in set (and of a shape a style can
// have); no other C0 but newline; no C1; no bidi control; no placeholder.
func terminalSafe(out string, set sgrSet) error {
	if err := onlySGR(out); err != nil {
		return err
	}
	for i := 0; i < len(out); i++ {
		if out[i] != 0x1b {
			continue
		}
		m := sgrLen(out[i:])
		if !set.allows(out[i+2 : i+m-1]) {
			return fmt.Errorf("SGR %q at byte %d is not the style's", out[i:i+m], i)
		}
		i += m - 1
	}
	if strings.ContainsRune(out, ampText) || strings.ContainsRune(out, ampRef) {
		return fmt.Errorf("a placeholder reached the terminal")
	}
	return nil
}

// rendererSGR is the set r's output filter keeps.
func rendererSGR(r *MarkdownRenderer) sgrSet { return r.sgr }

// shown is the visible text with all whitespace removed, so wrapping,
// padding and hard breaks do not matter.
func shown(s string) string {
	return strings.Join(strings.Fields(ansi.Strip(s)), "")
}

func TestMarkdownPipelineHostileReferences(t *testing.T) {
	r := NewMarkdownRenderer("dark")
	const tail = "sentinelword"
	n := 0
	for _, ref := range hostileRefs {
		for pi, place := range placements {
			payload := hostilePayloads[(n+pi)%len(hostilePayloads)]
			n++
			in := strings.ReplaceAll(place, "%s", ref+payload) + "\n\n" + tail
			width := []int{24, 80}[n%2]
			// Render is the output filter over layout (and a cache); one
			// glamour run gives both.
			pre := r.layout(in, width)
			out := rendererSGR(r).filter(pre)
			if err := terminalSafe(out, rendererSGR(r)); err != nil {
				t.Fatalf("Render(%q, %d): %v\n%q", in, width, err, out)
			}
			if !strings.Contains(shown(out), tail) {
				t.Fatalf("Render(%q, %d) lost the text after it: shows %q", in, width, visible(out))
			}
			// The strongest check: nothing was left for the output filter
			// to catch, so no reference decoded to anything.
			if pre != out {
				t.Fatalf("Render(%q, %d): glamour decoded a reference into control:\n%q", in, width, pre)
			}
		}
	}
}

func TestMarkdownPipelineShowsWhatWasWritten(t *testing.T) {
	// The text after a hostile reference is the model's and must show, as
	// must the reference itself, as written; safe references show as their
	// character wherever Markdown decodes them.
	r := NewMarkdownRenderer("dark")
	tests := []struct{ name, in, want string }{
		{"split by emphasis", "&#*2*7;[8mhidden text", "&#27;[8mhidden text"},
		{"split in strikethrough by code", "~~&#`27`;[8m~~ after", "&#27;[8m after"},
		{"split in strikethrough by emphasis", "~~&#*2*7;]0;t~~ after", "&#27;]0;t after"},
		{"raw html in strikethrough", "~~x<b>&#27;[8m</b>~~ after", "x<b>&#27;[8m</b> after"},
		{"split by a tag in html", "<p>&#<b></b>27;]52;c;QUJD</p>\n\nafter", "&#27;]52;c;QUJD after"},
		{"encoded twice in html", "<div>&amp;#27;[8m</div>\n\nafter", "&#27;[8m after"},
		{"osc introducer keeps the rest", "&#27;]0;title without end and more words", "&#27;]0;title without end and more words"},
		{"c1 csi", "a &#x9b;2J b", "a &#x9b;2J b"},
		{"bidi override", "abc&#x202e;def", "abc&#x202e;def"},
		{"wrap-around", "&#4294967323;[2J x", "&#4294967323;[2J x"},
		{"named bidi mark", "a&rlm;b", "a&rlm;b"},
		{"not an entity", "&notit; &foo; &#; & a && b", "&notit; &foo; &#; & a && b"},
		{"escaped ampersand", "\\&lt; and \\&#27;", "&lt; and &#27;"},
		{"entities in prose", "&copy; &mdash; &lt;b&gt; &amp; &quot;q&quot; &#169; &#x1F600; &nbsp;x", "© — <b> & \"q\" © 😀 \u00a0x"},
		{"entity that would be syntax", "&#35; not a heading &#42;not emphasis&#42; &#96;not code&#96;", "# not a heading *not emphasis* `not code`"},
		{"entity pipe in a table", "| a &#124; b | c |\n|---|---|\n| d | e |", "a | b"},
		{"entity in link text and alt text", "[&lt;docs&gt;](http://u) ![&copy; logo](http://i)", "<docs>"},
		{"code span is literal", "`&lt;div&gt; &amp; &#27;`", "&lt;div&gt; &amp; &#27;"},
		{"code block is byte-exact", "```sh\nmake && make test &>/dev/null &#27;\n```", "make && make test &>/dev/null &#27;"},
		{"indented code is byte-exact", "    a &amp;&amp; b", "a &amp;&amp; b"},
		{"html block decodes once", "<div>&lt;b&gt; &amp;amp;</div>", "<b> &amp;"},
		{"autolink as written", "see https://example.com/?a=1&b=2&amp;c", "https://example.com/?a=1&b=2&amp;c"},
		{"link destination as written", "[x](http://u/?a=1&b=2)", "http://u/?a=1&b=2"},
		{"the text's own noncharacters", "a\uFDD0copy; b\uFDD1lt;", "a\uFFFDcopy; b\uFFFDlt;"},
	}
	for _, tc := range tests {
		for _, width := range []int{30, 80} {
			out := r.Render(tc.in, width)
			if err := terminalSafe(out, rendererSGR(r)); err != nil {
				t.Fatalf("%s: %v in %q", tc.name, err, out)
			}
			if got, want := shown(out), strings.Join(strings.Fields(tc.want), ""); !strings.Contains(got, want) {
				t.Errorf("%s at %d: shows %q, want it to contain %q", tc.name, width, visible(out), tc.want)
			}
		}
	}
}

func TestMarkdownPipelineAutolinkStaysOneLink(t *testing.T) {
	// An '&' kept as written in a bare URL keeps the URL one styled run.
	r := NewMarkdownRenderer("dark")
	out := r.Render("see https://example.com/?a=1&b=2 now", 80)
	if !strings.Contains(out, "https://example.com/?a=1&b=2") {
		t.Errorf("the URL is broken up: %q", out)
	}
}

func TestMarkdownPipelineDecodedReferencesKeepTablesAligned(t *testing.T) {
	// References decoded before glamour lays out a table leave its
	// columns where glamour put them.
	r := NewMarkdownRenderer("notty")
	out := r.Render("| what | who |\n|---|---|\n| &copy; 2025 &mdash; &lt;x&gt; | me |\n| plain text here | you |", 60)
	var widths []int
	for _, line := range strings.Split(ansi.Strip(out), "\n") {
		if i := strings.IndexAny(line, "|│"); i >= 0 {
			widths = append(widths, ansi.StringWidth(line[:i]))
		}
	}
	if len(widths) < 3 {
		t.Fatalf("no table in %q", out)
	}
	for _, w := range widths {
		if w != widths[0] {
			t.Errorf("column separators at %v, want one column:\n%s", widths, ansi.Strip(out))
			break
		}
	}
}

func FuzzMarkdownPipeline(f *testing.F) {
	for i, ref := range hostileRefs {
		for j, place := range placements {
			if (i+j)%7 == 0 {
				f.Add(strings.ReplaceAll(place, "%s", ref+hostilePayloads[(i+j)%len(hostilePayloads)]), uint16(i*j))
			}
		}
	}
	f.Add(twoKBMessage(), uint16(80))
	f.Add(ampersandMessage(), uint16(40))
	f.Add("| `&#27;[2J` | <b>&#x1b;]0;t&#7;</b> |\n|---|---|\n| ~~&#`27`;~~ | &#*2*7;[8m |", uint16(3))
	// One renderer for the whole run, as the console uses it.
	r := NewMarkdownRenderer("dark")
	const tail = "QzSentinelZq"
	f.Fuzz(func(t *testing.T, text string, w uint16) {
		width := 20 + int(w%180)
		in := text + "\n\n" + tail + "\n"
		out := r.Render(in, width)
		if err := terminalSafe(out, rendererSGR(r)); err != nil {
			t.Fatalf("Render(%q, %d): %v\n%q", in, width, err, out)
		}
		// Render is the output filter over layout: that the filter has
		// nothing to remove means nothing decoded, and no styling is lost.
		// (Chroma breaks colour ties at random, so layout is not compared
		// with Render's earlier result.)
		if pre := r.layout(in, width); rendererSGR(r).filter(pre) != pre {
			t.Fatalf("Render(%q, %d): the filter had something to remove:\nbefore %q\nafter  %q", in, width, pre, rendererSGR(r).filter(pre))
		}
		if mayHideWhatFollows(text) || !strings.Contains(Sanitize(in), tail) {
			return
		}
		if !strings.Contains(shown(out), tail) {
			t.Fatalf("Render(%q, %d) lost the paragraph after it: shows %q", in, width, visible(out))
		}
	})
}

// mayHideWhatFollows reports whether text opens an HTML block that runs
// past a blank line (CommonMark's kinds 1 to 5: script, pre, style,
// textarea, comments, processing instructions, declarations, CDATA), whose
// content bluemonday may drop; anything else ends before the next
// paragraph.
func mayHideWhatFollows(text string) bool {
	l := strings.ToLower(text)
	for _, open := range []string{"<script", "<pre", "<style", "<textarea", "<!", "<?"} {
		if strings.Contains(l, open) {
			return true
		}
	}
	return false
}
