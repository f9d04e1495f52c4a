package render

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/chroma/v2"
	chromastyles "github.com/alecthomas/chroma/v2/styles"
	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/ansi"
	glamourstyles "github.com/charmbracelet/glamour/styles"
	"github.com/muesli/termenv"
)

// The output filter.
//
// Glamour's output is the one place in this package where escape sequences
// are supposed to exist, so it is filtered by what they may be, not only by
// what they may not: an SGR sequence survives only if every one of its
// attributes is one the configured glamour style emits. A style that colours
// headings 39 and code 203 lets 38;5;39 and 38;5;203 through, and nothing
// else: not conceal (8), which hides text; not blink (5, 6); not the
// resets of attributes it never sets; not colon sub-parameters; not a colour
// from outside its palette, which could paint text in the background's
// colour. The set is derived from the style itself (see styleSGR), so a
// change of style or of glamour keeps it exact.
//
// Everything else that is control is dropped one byte (or one rune) at a
// time: an ESC that does not start an allowed SGR loses only the ESC, and
// the bytes after it stay as the text they are. The input of this filter
// has been through Sanitize and through prepareMarkdown, so any other
// sequence would have been decoded from the text, and the text after it is
// the model's; removing "the rest of the sequence" would hide it (an
// unterminated OSC would hide everything that follows).

// sgrSet holds the SGR attributes a style emits, one key per attribute as it
// appears between semicolons: "1", "38;5;39", "48;2;30;30;30". The reset
// "0" is always there.
type sgrSet map[string]struct{}

// glamourChromaTheme is the name glamour registers a style's chroma section
// under, once per process (ansi.chromaStyleTheme).
const glamourChromaTheme = "charm"

// styleSGR derives the SGR attributes glamour can emit for the standard
// style name: every colour and attribute of its elements, as glamour's
// renderText turns them into termenv sequences at the TrueColor profile
// glamour defaults to, and every sequence chroma's terminal256 formatter
// (the one glamour's code blocks use, ansi.chromaFormatter) can emit for
// the code-block theme glamour uses.
func styleSGR(name string) sgrSet {
	set := sgrSet{"0": {}}
	cfg, ok := glamourstyles.DefaultStyles[name]
	if !ok {
		return set
	}
	addPrimitives(set, reflect.ValueOf(*cfg))
	if theme := chromaTheme(name, cfg); theme != "" {
		addChroma(set, theme)
	}
	return set
}

var primitiveType = reflect.TypeOf(ansi.StylePrimitive{})

// addPrimitives adds the attributes of every StylePrimitive reachable from
// v. Walking by reflection keeps up with elements glamour adds. The chroma
// section is skipped: glamour hands it to chroma, whose output addChroma
// derives.
func addPrimitives(set sgrSet, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			addPrimitives(set, v.Elem())
		}
	case reflect.Struct:
		if v.Type() == primitiveType {
			addPrimitive(set, v.Interface().(ansi.StylePrimitive))
			return
		}
		if v.Type() == reflect.TypeOf(ansi.Chroma{}) {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				addPrimitives(set, v.Field(i))
			}
		}
	}
}

// addPrimitive mirrors glamour's renderText (ansi/baseelement.go): the
// attributes it reads, and no others (glamour ignores Faint and Conceal).
func addPrimitive(set sgrSet, p ansi.StylePrimitive) {
	color := func(c *string, bg bool) {
		if c == nil {
			return
		}
		if tc := termenv.TrueColor.Color(*c); tc != nil {
			if seq := tc.Sequence(bg); seq != "" {
				set[seq] = struct{}{}
			}
		}
	}
	color(p.Color, false)
	color(p.BackgroundColor, true)
	for _, a := range []struct {
		on  *bool
		seq string
	}{
		{p.Underline, termenv.UnderlineSeq}, {p.Bold, termenv.BoldSeq}, {p.Italic, termenv.ItalicSeq},
		{p.CrossedOut, termenv.CrossOutSeq}, {p.Overlined, termenv.OverlineSeq},
		{p.Inverse, termenv.ReverseSeq}, {p.Blink, termenv.BlinkSeq},
	} {
		if a.on != nil && *a.on {
			set[a.seq] = struct{}{}
		}
	}
}

// chromaTheme is the chroma style glamour highlights code blocks of the
// style with: its own chroma section, registered under "charm", or a named
// chroma theme. Glamour registers "charm" the first time it renders a code
// block and never replaces it, so the theme in use is whichever style got
// there first in this process; rendering one code block here makes sure it
// is registered before it is read.
func chromaTheme(name string, cfg *ansi.StyleConfig) string {
	if cfg.CodeBlock.Chroma == nil {
		return cfg.CodeBlock.Theme
	}
	term, err := glamour.NewTermRenderer(glamour.WithStandardStyle(name))
	if err != nil {
		return ""
	}
	if _, err := term.Render("```go\nx\n```\n"); err != nil {
		return ""
	}
	return glamourChromaTheme
}

// addChroma adds every SGR attribute chroma's terminal256 formatter can
// emit for theme: bold, underline and italic, and for each colour of the
// theme the palette index the formatter maps it to. The formatter picks
// the closest index by ranging over a map, so when two are equally close it
// picks either, at random; both are added.
func addChroma(set sgrSet, theme string) {
	style := chromastyles.Get(theme)
	// As the formatter does (formatters.clearBackground), ignore the
	// background of the whole block.
	b := style.Builder()
	bg := b.Get(chroma.Background)
	bg.Background, bg.NoInherit = 0, true
	b.AddEntry(chroma.Background, bg)
	if cleared, err := b.Build(); err == nil {
		style = cleared
	}
	palette := xterm256()
	for _, t := range append(style.Types(), chroma.Text) {
		e := style.Get(t)
		for _, a := range []struct {
			on  chroma.Trilean
			seq string
		}{{e.Bold, "1"}, {e.Underline, "4"}, {e.Italic, "3"}} {
			if a.on == chroma.Yes {
				set[a.seq] = struct{}{}
			}
		}
		if e.Colour.IsSet() {
			for _, i := range closest(palette, e.Colour) {
				set["38;5;"+strconv.Itoa(i)] = struct{}{}
			}
		}
		if e.Background.IsSet() {
			for _, i := range closest(palette, e.Background) {
				set["48;5;"+strconv.Itoa(i)] = struct{}{}
			}
		}
	}
}

// xterm256 is the formatter's palette: each colour with the index it is
// written as. The table lists some colours twice (black is 0 and 16);
// being a map, it keeps the later index.
func xterm256() map[chroma.Colour]int {
	p := make(map[chroma.Colour]int, 256)
	basic := []string{"#000000", "#800000", "#008000", "#808000", "#000080", "#800080", "#008080", "#c0c0c0",
		"#808080", "#ff0000", "#00ff00", "#ffff00", "#0000ff", "#ff00ff", "#00ffff", "#ffffff"}
	for i, c := range basic {
		p[chroma.MustParseColour(c)] = i
	}
	levels := []uint8{0x00, 0x5f, 0x87, 0xaf, 0xd7, 0xff}
	for i := range 216 {
		p[chroma.NewColour(levels[i/36], levels[i/6%6], levels[i%6])] = 16 + i
	}
	for i := range 24 {
		v := uint8(8 + 10*i)
		p[chroma.NewColour(v, v, v)] = 232 + i
	}
	return p
}

// closest returns the indexes of the palette colours nearest to c, by
// chroma's own distance.
func closest(palette map[chroma.Colour]int, c chroma.Colour) []int {
	best := math.MaxFloat64
	var out []int
	for p, i := range palette {
		switch d := c.Distance(p); {
		case d < best:
			best, out = d, []int{i}
		case d == best:
			out = append(out, i)
		}
	}
	return out
}

// allows reports whether every attribute of the SGR parameter string params
// (the bytes between "ESC [" and "m") is in the set.
func (a sgrSet) allows(params string) bool {
	return forEachSGRUnit(params, func(u string) bool {
		_, ok := a[u]
		return ok
	})
}

// forEachSGRUnit calls f with each attribute of params: a single number,
// or an extended colour "38;5;n" / "38;2;r;g;b" (and 48, 58) as one unit.
// An empty parameter means 0, as in ECMA-48. It stops and reports false
// when f does, or when an extended colour is cut short.
func forEachSGRUnit(params string, f func(string) bool) bool {
	if params == "" {
		return f("0")
	}
	for i := 0; i <= len(params); {
		end := nextParam(params, i)
		unit := params[i:end]
		switch unit {
		case "38", "48", "58":
			sub := nextParam(params, end+1)
			if end >= len(params) {
				return false
			}
			count := 0
			switch params[end+1 : sub] {
			case "5":
				count = 1
			case "2":
				count = 3
			default:
				return false
			}
			end = sub
			for ; count > 0; count-- {
				if end >= len(params) {
					return false
				}
				end = nextParam(params, end+1)
			}
			unit = params[i:end]
		case "":
			unit = "0"
		}
		if !f(unit) {
			return false
		}
		i = end + 1
	}
	return true
}

// nextParam returns the index of the ';' ending the parameter that starts
// at i, or len(params).
func nextParam(params string, i int) int {
	if i > len(params) {
		return len(params)
	}
	if j := strings.IndexByte(params[i:], ';'); j >= 0 {
		return i + j
	}
	return len(params)
}

// filter is the output filter described above. Tab becomes a space and CR
// is dropped: glamour lays lines out itself, so either could only break that
// layout. Runs of printable ASCII are copied whole, and the parameters of
// the last few SGR allowed are remembered, since glamour repeats the same
// few sequences around every word and every padding space.
func (a sgrSet) filter(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	var recent sgrMemo
	start := 0 // the first byte not yet written
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < del || c == '\n' {
			i++
			continue
		}
		b.WriteString(s[start:i])
		switch {
		case c == esc:
			if m := sgrLen(s[i:]); m > 0 {
				// An empty parameter list is a reset, always allowed.
				if p := s[i+2 : i+m-1]; p == "" || recent.has(p) || a.allows(p) && recent.add(p) {
					b.WriteString(s[i : i+m])
					i += m
					break
				}
			}
			i++ // the ESC alone: what follows is text
		case c == '\t':
			b.WriteByte(' ')
			i++
		case c < utf8.RuneSelf:
			i++ // C0 and DEL
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if !isC1(r) {
				writeText(&b, r, s[i:i+n])
			}
			i += n
		}
		start = i
	}
	b.WriteString(s[start:])
	return b.String()
}

// sgrMemo holds the (non-empty) parameters of the last SGR sequences
// found allowed.
type sgrMemo struct {
	p    [4]string
	next int
}

func (m *sgrMemo) has(p string) bool {
	for _, q := range m.p {
		if q == p {
			return true
		}
	}
	return false
}

// add remembers p and reports true, for use in a condition.
func (m *sgrMemo) add(p string) bool {
	m.p[m.next] = p
	m.next = (m.next + 1) % len(m.p)
	return true
}

// sgrLen returns the length of the SGR sequence at the start of s (ESC [
// digits and ';' m), or 0 if there is none. Glamour and chroma never write
// colon sub-parameters, so a sequence with one is not SGR here.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != esc || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		switch {
		case c == 'm':
			return i + 1
		case (c < '0' || c > '9') && c != ';':
			return 0
		}
	}
	return 0
}
