package tools

import (
	"bytes"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/guildhall/guildhall/internal/runetext"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	xunicode "golang.org/x/text/encoding/unicode"
)

// decodeBody decodes a response body to UTF-8, with U+FFFD for every
// malformed sequence. The charset comes from a byte-order mark, the
// Content-Type header, or (for HTML) a <meta> tag; without one, text that
// is valid UTF-8 is taken as UTF-8, HTML that is not falls back to the
// HTML standard's guess, and other text is read as UTF-8 with replacement.
func decodeBody(data []byte, contentType string, isHTML bool) string {
	enc := bodyEncoding(data, contentType, isHTML)
	if enc == nil || enc == xunicode.UTF8 || enc == encoding.Nop {
		return runetext.Decode(data)
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return runetext.Decode(data)
	}
	return runetext.Decode(out)
}

func bodyEncoding(data []byte, contentType string, isHTML bool) encoding.Encoding {
	if _, params, err := mime.ParseMediaType(contentType); err == nil && params["charset"] != "" {
		if e, err := htmlindex.Get(params["charset"]); err == nil {
			return e
		}
	}
	e, _, certain := charset.DetermineEncoding(data, contentType)
	switch {
	case certain, isHTML && declaresCharset(data):
		return e
	case utf8.Valid(data), !isHTML:
		return nil
	}
	return e
}

// declaresCharset reports whether an HTML document's start names its
// charset (the <meta> tag charset.DetermineEncoding reads), as opposed to
// DetermineEncoding falling back to its guess.
func declaresCharset(data []byte) bool {
	return bytes.Contains(bytes.ToLower(data[:min(len(data), 1024)]), []byte("charset"))
}

// droppedElements are never read: code, styling, embedded documents and
// media. Their content is removed, not unwrapped, so a script body never
// becomes text. (The head is not skipped as a whole: its end tag is
// optional, and many pages leave it out. What it holds is handled one by
// one: the title is taken separately, scripts and styles are dropped, and
// meta, link and base are void.)
var droppedElements = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Iframe: true, atom.Frame: true, atom.Frameset: true, atom.Svg: true, atom.Math: true,
	atom.Object: true, atom.Embed: true, atom.Applet: true,
	atom.Canvas: true, atom.Audio: true, atom.Video: true, atom.Select: true,
	atom.Datalist: true, atom.Dialog: true,
}

// paragraphElements start and end with a blank line; lineElements on a
// line of their own.
var (
	paragraphElements = map[atom.Atom]bool{
		atom.P: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
		atom.Blockquote: true, atom.Pre: true, atom.Table: true, atom.Ul: true, atom.Ol: true, atom.Dl: true,
		atom.Figure: true, atom.Hr: true, atom.Section: true, atom.Article: true, atom.Header: true,
		atom.Footer: true, atom.Nav: true, atom.Aside: true, atom.Main: true, atom.Form: true,
		atom.Fieldset: true, atom.Details: true, atom.Address: true,
	}
	lineElements = map[atom.Atom]bool{
		atom.Div: true, atom.Li: true, atom.Tr: true, atom.Dt: true, atom.Dd: true, atom.Caption: true,
		atom.Figcaption: true, atom.Summary: true, atom.Legend: true, atom.Body: true,
	}
)

// htmlText is the readable text of an HTML document.
type htmlText struct {
	Title string
	Text  string
}

// extractHTML turns an HTML document into readable text: headings as
// Markdown-style "#" lines, paragraphs and list items on lines of their
// own, links as "text (url)" with the URL resolved against base (http,
// https and mailto only), images as their alt text, table cells separated
// by " | ", and whitespace collapsed outside <pre>. Scripts, styles,
// embedded documents, attributes (event handlers included) and content
// the page hides (the hidden attribute, aria-hidden, display:none) are
// dropped. Every text node is cleaned of terminal control on its own, so
// an unterminated escape sequence cannot swallow the rest of the page.
//
// It reads the token stream rather than building a tree: html.Parse
// refuses documents nested deeper than 512 elements, and a page must not
// be able to choose a fallback that shows its raw source. An element that
// is dropped or hidden is skipped to its matching end tag; one that is
// never closed hides the rest of the page, which fails safe.
func extractHTML(doc string, base *url.URL) htmlText {
	w := &textWriter{base: base}
	z := html.NewTokenizer(strings.NewReader(doc))
	var skip *skipState
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break // io.EOF: a strings.Reader has no other error
		}
		tok := z.Token()
		if tt == html.SelfClosingTagToken && !voidElements[tok.DataAtom] && !foreignElements[tok.DataAtom] {
			// HTML ignores "/>" on an ordinary element: <script/> opens a
			// script, and what follows is its body.
			tt = html.StartTagToken
		}
		if tok.DataAtom == atom.Title && tt == html.StartTagToken {
			w.readTitle(z)
			continue
		}
		if skip != nil {
			var closed bool
			if skip, closed = skip.next(tt, tok); !closed {
				continue
			}
			// An element whose end tag may be left out was closed by
			// this token, which is then read as usual.
		}
		switch tt {
		case html.TextToken:
			w.text(tok.Data)
		case html.StartTagToken, html.SelfClosingTagToken:
			if droppedElements[tok.DataAtom] || hiddenElement(tok) {
				if tt == html.StartTagToken && !voidElements[tok.DataAtom] {
					skip = newSkip(tok)
				}
				continue
			}
			w.enter(tok)
			if tt == html.SelfClosingTagToken || voidElements[tok.DataAtom] {
				w.leave(tok)
			}
		case html.EndTagToken:
			w.leave(tok)
		}
	}
	return htmlText{Title: w.title, Text: w.String()}
}

// skipState skips an element's content up to its matching end tag.
type skipState struct {
	tag   string
	atom  atom.Atom
	depth int
}

func newSkip(tok html.Token) *skipState {
	return &skipState{tag: tok.Data, atom: tok.DataAtom, depth: 1}
}

// next consumes one token while skipping. It returns nil when the skip is
// over, and closed when tok ended it by implying the element's end (a new
// <li> ends a hidden <li>): that token must then be read as usual.
func (s *skipState) next(tt html.TokenType, tok html.Token) (*skipState, bool) {
	if s.depth == 1 && impliesEnd(s.atom, tt, tok.DataAtom) {
		return nil, true
	}
	if tok.Data != s.tag {
		return s, false
	}
	switch tt {
	case html.StartTagToken:
		s.depth++
	case html.EndTagToken:
		s.depth--
	}
	if s.depth == 0 {
		return nil, false
	}
	return s, false
}

// impliesEnd reports whether a token closes an open element whose end tag
// HTML lets a page leave out (p, li, dt, dd, tr, td, th), as a browser
// would. Without it, one hidden <li> would hide the rest of the page.
func impliesEnd(open atom.Atom, tt html.TokenType, a atom.Atom) bool {
	start, end := tt == html.StartTagToken, tt == html.EndTagToken
	switch open {
	case atom.P:
		block := paragraphElements[a] || lineElements[a]
		return (start && block) || (end && block && a != atom.P)
	case atom.Li:
		return (start && a == atom.Li) || (end && (a == atom.Ul || a == atom.Ol))
	case atom.Dt, atom.Dd:
		return (start && (a == atom.Dt || a == atom.Dd)) || (end && a == atom.Dl)
	case atom.Tr:
		return (start && a == atom.Tr) || (end && tableSection(a))
	case atom.Td, atom.Th:
		return (start && (a == atom.Td || a == atom.Th || a == atom.Tr)) || (end && (a == atom.Tr || tableSection(a)))
	}
	return false
}

func tableSection(a atom.Atom) bool {
	return a == atom.Table || a == atom.Tbody || a == atom.Thead || a == atom.Tfoot
}

// foreignElements are SVG and MathML roots, where "/>" does close the
// element.
var foreignElements = map[atom.Atom]bool{atom.Svg: true, atom.Math: true}

// voidElements have no content and no end tag.
var voidElements = map[atom.Atom]bool{
	atom.Area: true, atom.Base: true, atom.Br: true, atom.Col: true, atom.Embed: true, atom.Hr: true,
	atom.Img: true, atom.Input: true, atom.Link: true, atom.Meta: true, atom.Source: true,
	atom.Track: true, atom.Wbr: true,
}

// readTitle takes the document's first <title> (raw text up to </title>),
// collapsed and cleaned; it is never part of the body text.
func (w *textWriter) readTitle(z *html.Tokenizer) {
	var b strings.Builder
	for {
		tt := z.Next()
		if tt == html.ErrorToken || tt == html.EndTagToken {
			break
		}
		if tt == html.TextToken {
			b.Write(z.Text())
		}
	}
	if w.title == "" {
		w.title, _ = runetext.Cut(strings.Join(strings.Fields(cleanWebText(b.String())), " "), 300)
	}
}

// textWriter accumulates readable text with collapsed whitespace.
type textWriter struct {
	b       strings.Builder
	base    *url.URL
	title   string
	newline int  // line breaks owed before the next word (at most 2)
	space   bool // a space owed before the next word
	pre     int  // depth inside <pre>
	lists   []*listState
	rows    []int      // cells written in each open table row
	links   []linkOpen // open <a> elements
}

type listState struct {
	ordered bool
	n       int
}

type linkOpen struct {
	start int
	href  string
}

// maxOpen bounds the list, row and link stacks: a page of unclosed tags
// cannot grow them without limit.
const maxOpen = 64

func (w *textWriter) enter(tok html.Token) {
	a := tok.DataAtom
	w.blockBreak(a)
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.token(strings.Repeat("#", int(tok.Data[1]-'0')))
	case atom.Pre:
		w.pre++
	case atom.Ul, atom.Ol:
		if len(w.lists) < maxOpen {
			w.lists = append(w.lists, &listState{ordered: a == atom.Ol})
		}
	case atom.Li:
		w.listMarker()
	case atom.Tr:
		if len(w.rows) < maxOpen {
			w.rows = append(w.rows, 0)
		}
	case atom.Td, atom.Th:
		if len(w.rows) > 0 {
			if w.rows[len(w.rows)-1] > 0 {
				w.token("|")
			}
			w.rows[len(w.rows)-1]++
		}
	case atom.Br:
		w.lineBreak()
	case atom.Hr:
		w.token("---")
	case atom.Img:
		if alt := strings.Join(strings.Fields(cleanWebText(attr(tok, "alt"))), " "); alt != "" {
			w.token("[image: " + alt + "]")
		}
	case atom.A:
		if len(w.links) < maxOpen {
			w.links = append(w.links, linkOpen{start: w.b.Len(), href: w.linkTarget(attr(tok, "href"))})
		}
	}
}

func (w *textWriter) leave(tok html.Token) {
	a := tok.DataAtom
	switch a {
	case atom.Pre:
		if w.pre > 0 {
			w.pre--
		}
	case atom.Ul, atom.Ol:
		if len(w.lists) > 0 {
			w.lists = w.lists[:len(w.lists)-1]
		}
	case atom.Tr:
		if len(w.rows) > 0 {
			w.rows = w.rows[:len(w.rows)-1]
		}
	case atom.A:
		if len(w.links) > 0 {
			l := w.links[len(w.links)-1]
			w.links = w.links[:len(w.links)-1]
			if l.href != "" && strings.TrimSpace(w.b.String()[l.start:]) != l.href {
				w.token("(" + l.href + ")")
			}
		}
	}
	w.blockBreak(a)
}

// blockBreak owes the line breaks around a block element: a blank line
// around paragraphs, headings, tables and top-level lists, a line break
// around list items, rows, divs and nested lists.
func (w *textWriter) blockBreak(a atom.Atom) {
	switch {
	case (a == atom.Ul || a == atom.Ol || a == atom.Dl) && len(w.lists) > 0:
		w.breakLine(1)
	case paragraphElements[a]:
		w.breakLine(2)
	case lineElements[a]:
		w.breakLine(1)
	}
}

// listMarker starts a list item: "-" or "N.", indented by nesting depth.
func (w *textWriter) listMarker() {
	depth := len(w.lists)
	marker := "-"
	if depth > 0 {
		l := w.lists[depth-1]
		if l.ordered {
			l.n++
			marker = strconv.Itoa(l.n) + "."
		}
	}
	if depth > 1 {
		marker = strings.Repeat("  ", min(depth-1, 8)) + marker
	}
	w.token(marker)
}

// linkTarget resolves an href for display; "" when it is not worth showing
// (a fragment, a script or data URL, an unparsable or very long one).
func (w *textWriter) linkTarget(href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") || len(href) > 2048 {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if w.base != nil {
		u = w.base.ResolveReference(u)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "mailto":
	default:
		return ""
	}
	s := cleanWebText(u.String())
	if len(s) > 2048 || strings.ContainsAny(s, " \n\t") {
		return ""
	}
	return s
}

// text adds a text node's content.
func (w *textWriter) text(s string) {
	s = stripControl(s)
	if w.pre > 0 {
		w.flush()
		w.b.WriteString(s)
		w.space = false
		return
	}
	if s == "" {
		return
	}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		w.space = true
		return
	}
	if isSpaceByte(s[0]) {
		w.space = true
	}
	for i, f := range fields {
		if i > 0 {
			w.space = true
		}
		w.word(f)
	}
	if isSpaceByte(s[len(s)-1]) {
		w.space = true
	}
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// word writes one word, with the line breaks or space owed before it.
func (w *textWriter) word(s string) {
	w.flush()
	if w.space && !w.atLineStart() {
		w.b.WriteByte(' ')
	}
	w.space = false
	w.b.WriteString(s)
}

// token writes a word that stands apart from its neighbours: a list
// marker, a heading's "#", a cell separator, a link's URL.
func (w *textWriter) token(s string) {
	w.space = true
	w.word(s)
	w.space = true
}

// flush writes the line breaks owed, if any text precedes them.
func (w *textWriter) flush() {
	if w.newline > 0 && w.b.Len() > 0 {
		w.b.WriteString("\n\n"[:w.newline])
		w.space = false
	}
	w.newline = 0
}

func (w *textWriter) atLineStart() bool {
	s := w.b.String()
	return s == "" || s[len(s)-1] == '\n'
}

// breakLine owes n line breaks (1: a new line, 2: a blank line).
func (w *textWriter) breakLine(n int) {
	if n > w.newline {
		w.newline = n
	}
}

// lineBreak is <br>: one more line break, up to a blank line.
func (w *textWriter) lineBreak() {
	if w.newline < 2 {
		w.newline++
	}
	if w.b.Len() == 0 {
		w.newline = 0
	}
}

// String is the text, trailing spaces removed from every line.
func (w *textWriter) String() string {
	lines := strings.Split(w.b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// hiddenElement reports an element the page hides from readers. Hidden
// text is a favourite carrier of prompt injection; what a reader would not
// see is not read. (Text hidden by a stylesheet class cannot be seen here:
// the framing is what keeps such text data.)
func hiddenElement(tok html.Token) bool {
	for _, a := range tok.Attr {
		switch strings.ToLower(a.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") {
				return true
			}
		case "style":
			st := strings.ToLower(strings.Join(strings.Fields(a.Val), ""))
			if strings.Contains(st, "display:none") || strings.Contains(st, "visibility:hidden") {
				return true
			}
		}
	}
	return tok.DataAtom == atom.Input && strings.EqualFold(attr(tok, "type"), "hidden")
}

func attr(tok html.Token, key string) string {
	for _, a := range tok.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}
