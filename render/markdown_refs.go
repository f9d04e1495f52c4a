package render

import (
	"bytes"
	"html"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	astext "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Character references.
//
// Sanitize removes every control character from the text, but glamour
// then decodes character references (&#27;, &#x9b;, &lrm;) back into them,
// in more places than one can list with confidence: each text node; a
// strikethrough's text joined from its children, so that "~~&#`27`;~~"
// or "~~&#*2*7;~~" decodes once the markers are gone; code spans; and HTML,
// which bluemonday strips of tags before it is decoded. Recognising
// "dangerous references" in the source is therefore not enough, since the
// reference only forms after goldmark and glamour have taken the markup
// out.
//
// So glamour is given no '&' to decode. Before parsing, every '&' is
// replaced by a placeholder, a Unicode noncharacter that no decoder knows,
// one cell wide like '&'; after glamour, the placeholder goes back to '&'.
// The text cannot contain the placeholders itself: they become U+FFFD
// first. A reference cannot be decoded without its '&', however it is
// split, so what glamour emits contains only the characters of the text
// and of its own styling.
//
// '&' stays as it is only where glamour prints text as written and never
// decodes: the lines of code blocks, link and image destinations, and
// autolink URLs outside strikethrough. Which bytes those are comes from
// parsing the text with glamour's own parser configuration. When any '&'
// is kept, the prepared text is parsed once more, exactly as glamour will
// parse it, and checked: no text node, code span, strikethrough or HTML
// that glamour decodes may hold one. If the check fails, every '&' is
// replaced, code blocks included.
//
// References that are safe to show still show as their character:
//   - in prose, a complete reference (CommonMark's: a known name, or 1 to
//     7 decimal or 1 to 6 hex digits, then ';') to a printable character is
//     decoded here, before glamour lays the text out, so widths and tables
//     stay right. A non-ASCII character is written as itself; ASCII
//     punctuation that Markdown could read as syntax is written
//     backslash-escaped, which glamour shows as the bare character; '&' is
//     the placeholder; anything else is left for the post-pass.
//   - elsewhere (link titles, HTML, reference definitions), the placeholder
//     for a reference marks it to be decoded after glamour, by the same
//     rules.
//   - in code spans every '&' is literal, as CommonMark has it (glamour
//     itself would decode them).
//
// A reference to a control character, a bidirectional control, a
// noncharacter, a surrogate or a code point outside Unicode is never
// decoded: it shows as the text the model wrote.

const (
	ampText = '\uFDD0' // an '&' shown as written
	ampRef  = '\uFDD1' // an '&' starting a reference checked safe, decoded after glamour
)

// ampKind says what a byte of the text is to glamour.
type ampKind uint8

const (
	ampOther ampKind = iota // link titles, HTML, reference definitions, fence info
	ampProse                // a text node glamour renders (decoding it)
	ampCode                 // a code span's text
	ampAsIs                 // printed as written: code block lines, destinations, autolink URLs
)

// newMarkdownParser returns a parser configured as glamour v1.0.0
// configures its own (glamour.NewTermRenderer), so that both read the same
// structure from the same text.
func newMarkdownParser() parser.Parser {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM, extension.DefinitionList),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	).Parser()
}

// placeholderReplacer keeps the text's own noncharacters from being read
// as placeholders.
var placeholderReplacer = strings.NewReplacer(string(ampText), "\uFFFD", string(ampRef), "\uFFFD")

// prepareMarkdown returns s (sanitized text) ready for glamour: with no '&'
// that glamour could decode. See the notes above.
func prepareMarkdown(p parser.Parser, s string) string {
	if strings.ContainsRune(s, ampText) || strings.ContainsRune(s, ampRef) {
		s = placeholderReplacer.Replace(s)
	}
	if !strings.Contains(s, "&") {
		return s
	}
	src := []byte(s)
	out := rewriteAmps(s, classifyAmps(p.Parse(text.NewReader(src)), src))
	if bytes.IndexByte(out, '&') >= 0 && !decodeFree(p, out) {
		return strings.ReplaceAll(s, "&", string(ampText))
	}
	return string(out)
}

// classifyAmps marks every byte of src with what it is to glamour.
func classifyAmps(doc ast.Node, src []byte) []ampKind {
	kinds := make([]ampKind, len(src))
	mark := func(start, stop int, k ampKind) {
		for i := max(start, 0); i < min(stop, len(src)); i++ {
			kinds[i] = k
		}
	}
	markSlice := func(b []byte, k ampKind) {
		if off, ok := offsetIn(src, b); ok {
			mark(off, off+len(b), k)
		}
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := n.Lines()
			for i := range lines.Len() {
				seg := lines.At(i)
				mark(seg.Start, seg.Stop, ampAsIs)
			}
		case *ast.Text:
			k := ampProse
			if hasAncestor(n, ast.KindCodeSpan) {
				k = ampCode
			}
			mark(n.Segment.Start, n.Segment.Stop, k)
		case *ast.AutoLink:
			// Glamour prints the URL as written, except inside a
			// strikethrough, whose joined text it decodes.
			if !hasAncestor(n, astext.KindStrikethrough) {
				markSlice(n.Label(src), ampAsIs)
			}
		case *ast.Link:
			markSlice(n.Destination, ampAsIs)
		case *ast.Image:
			markSlice(n.Destination, ampAsIs)
		}
		return ast.WalkContinue, nil
	})
	return kinds
}

// rewriteAmps replaces each '&' of s by what its kind calls for.
func rewriteAmps(s string, kinds []ampKind) []byte {
	out := make([]byte, 0, len(s)+len(s)/8)
	for i := 0; i < len(s); i++ {
		if s[i] != '&' {
			out = append(out, s[i])
			continue
		}
		switch kinds[i] {
		case ampAsIs:
			out = append(out, '&')
		case ampProse:
			if escapedAt(s, kinds, i) {
				// "\&" is a literal '&'; glamour would show the backslash.
				out = utf8.AppendRune(out[:len(out)-1], ampText)
				continue
			}
			if n, dec, ok := parseRef(s[i+1:]); ok && sameKind(kinds[i:i+1+n], ampProse) {
				out = appendDecoded(out, s[i+1:i+1+n], dec)
				i += n
				continue
			}
			out = utf8.AppendRune(out, ampText)
		case ampCode:
			out = utf8.AppendRune(out, ampText)
		default:
			if _, _, ok := parseRef(s[i+1:]); ok {
				out = utf8.AppendRune(out, ampRef)
			} else {
				out = utf8.AppendRune(out, ampText)
			}
		}
	}
	return out
}

// glamourEscapable is the ASCII punctuation glamour shows without its
// backslash when escaped (ansi.escapeReplacer in glamour v1.0.0).
const glamourEscapable = "\\`*_{}[]<>()#+-.!|"

// appendDecoded writes a safe reference (ref is its text after '&', dec
// what it decodes to) found in prose so that glamour shows dec but reads
// no Markdown into it.
func appendDecoded(out []byte, ref, dec string) []byte {
	switch {
	case nonASCII(dec):
		return append(out, dec...)
	case dec == "&":
		return utf8.AppendRune(out, ampText)
	case len(dec) == 1 && strings.IndexByte(glamourEscapable, dec[0]) >= 0:
		return append(out, '\\', dec[0])
	}
	// Letters, digits and the rest could start a list or a link: keep the
	// reference for after glamour.
	out = utf8.AppendRune(out, ampRef)
	return append(out, ref...)
}

// restoreAmps turns the placeholders in glamour's output back into '&',
// decoding the references marked safe.
func restoreAmps(s string) string {
	if !strings.ContainsRune(s, ampText) && !strings.ContainsRune(s, ampRef) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case ampText:
			b.WriteByte('&')
		case ampRef:
			if m, dec, ok := parseRef(s[i+n:]); ok {
				b.WriteString(dec)
				i += n + m
				continue
			}
			b.WriteByte('&')
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// decodeFree parses src as glamour will and reports whether glamour would
// find no '&' anywhere it decodes, and no control character in what it
// prints as written.
func decodeFree(p parser.Parser, src []byte) bool {
	ok := true
	has := func(b []byte) bool { return bytes.IndexByte(b, '&') >= 0 }
	_ = ast.Walk(p.Parse(text.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Text:
			ok = !has(n.Segment.Value(src))
		case *ast.String:
			ok = !has(n.Value)
		case *ast.RawHTML:
			ok = !has(n.Segments.Value(src))
		case *ast.HTMLBlock:
			ok = !has(n.Lines().Value(src)) && !(n.HasClosure() && has(n.ClosureLine.Value(src)))
		case *ast.AutoLink:
			ok = printable(n.URL(src)) && !(hasAncestor(n, astext.KindStrikethrough) && has(n.Label(src)))
		case *ast.Link:
			ok = printable(n.Destination)
		case *ast.Image:
			ok = printable(n.Destination)
		}
		if !ok {
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return ok
}

// parseRef reads a character reference at the start of s, the text after
// an '&': CommonMark's forms only, each ending in ';'. It returns the
// reference's length, what it decodes to, and whether it is complete and
// safe to show decoded.
func parseRef(s string) (int, string, bool) {
	if len(s) < 2 {
		return 0, "", false
	}
	if s[0] == '#' {
		i, base, most := 1, 10, 7
		if s[1] == 'x' || s[1] == 'X' {
			i, base, most = 2, 16, 6
		}
		start, v := i, 0
		for ; i < len(s) && i-start <= most; i++ {
			d := hexDigit(s[i])
			if d >= base {
				break
			}
			v = v*base + d
		}
		if n := i - start; n == 0 || n > most || i >= len(s) || s[i] != ';' || !safeRune(rune(v)) {
			return 0, "", false
		}
		return i + 1, string(rune(v)), true
	}
	i := 0
	for i < len(s) && i < 48 && isAlnum(s[i]) {
		i++
	}
	if i == 0 || i >= len(s) || s[i] != ';' || s[0] <= '9' {
		return 0, "", false
	}
	ref := "&" + s[:i+1]
	dec := html.UnescapeString(ref)
	// html.UnescapeString also decodes a known prefix (&notit; is ¬it;),
	// which CommonMark does not: the ';' must have been consumed.
	if dec == ref || strings.HasSuffix(dec, ";") && s[:i] != "semi" {
		return 0, "", false
	}
	for _, r := range dec {
		if !safeRune(r) {
			return 0, "", false
		}
	}
	return i + 1, dec, true
}

// safeRune reports whether a reference to r may be shown decoded: a
// character Sanitize would keep as it is, other than tab and newline, and
// not a noncharacter.
func safeRune(r rune) bool {
	switch {
	case r < 0x20, r == del, isC1(r), r >= 0xd800 && r <= 0xdfff, r > utf8.MaxRune:
		return false
	case r >= 0xfdd0 && r <= 0xfdef, r&0xfffe == 0xfffe:
		return false
	}
	return !isBidi(r)
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func nonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < utf8.RuneSelf {
			return false
		}
	}
	return s != ""
}

// escapedAt reports whether the '&' at s[i] is backslash-escaped in prose:
// preceded by an odd run of backslashes of the same text.
func escapedAt(s string, kinds []ampKind, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\' && kinds[j] == ampProse; j-- {
		n++
	}
	return n%2 == 1
}

func sameKind(kinds []ampKind, k ampKind) bool {
	for _, x := range kinds {
		if x != k {
			return false
		}
	}
	return true
}

func hasAncestor(n ast.Node, kind ast.NodeKind) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == kind {
			return true
		}
	}
	return false
}

// offsetIn returns where sub starts in src when sub is a slice of src's
// own bytes, as goldmark's destinations and URLs are.
func offsetIn(src, sub []byte) (int, bool) {
	if len(sub) == 0 {
		return 0, false
	}
	off := cap(src) - cap(sub)
	if off < 0 || off+len(sub) > len(src) || &src[off] != &sub[0] {
		return 0, false
	}
	return off, true
}

// printable reports whether b holds no control character: what glamour
// prints as written must not.
func printable(b []byte) bool {
	for _, r := range string(b) {
		if r < 0x20 || r == del || isC1(r) || isBidi(r) {
			return false
		}
	}
	return true
}
