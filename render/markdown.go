package render

import (
	"container/list"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/parser"
)

// Bounds on what a MarkdownRenderer keeps. A long run renders thousands of
// messages at a handful of widths; the caches must serve what is on screen
// without growing with the history.
const (
	maxCacheBytes = 16 << 20 // rendered output plus source text, summed
	entryOverhead = 128      // rough bytes per cache entry beyond its strings
	maxTerms      = 8        // glamour renderers, one per recent width
	maxWidth      = 512      // glamour pads every line to the width
	defaultWidth  = 80       // used before the first resize reports a size
	tabStop       = 4        // CommonMark's tab stop

	// See withinGlamourLimits.
	maxNestingScore = 32
	maxWordBytes    = 1000
)

// mdTerm is the part of *glamour.TermRenderer that MarkdownRenderer uses.
type mdTerm interface {
	Render(in string) (string, error)
}

type mdKey struct {
	text  string
	width int
}

type mdEntry struct {
	key mdKey
	out string
}

type termEntry struct {
	width int
	term  mdTerm
}

// MarkdownRenderer renders untrusted Markdown (model prose) for a terminal.
// The text is sanitized, stripped of every '&' glamour could decode into a
// control character (markdown_refs.go), rendered with glamour, and the
// result is filtered so that only the SGR attributes of the style reach the
// terminal (markdown_sgr.go). Renderers are built once per width and results
// are cached per (text, width) in a size-bounded LRU. A MarkdownRenderer is
// safe for concurrent use; renders are serialised.
type MarkdownRenderer struct {
	newTerm func(width int) (mdTerm, error)
	parser  parser.Parser // glamour's configuration, for prepareMarkdown
	sgr     sgrSet        // what the output filter keeps

	mu    sync.Mutex
	terms []termEntry // most recently used first
	cache map[mdKey]*list.Element
	order *list.List // of *mdEntry, most recently used first
	bytes int
}

// NewMarkdownRenderer returns a renderer using one of glamour's standard
// styles: "dark", "light", "notty" or "ascii". Any other name, including
// glamour's "auto" (which queries the terminal from inside the renderer),
// selects "dark".
func NewMarkdownRenderer(style string) *MarkdownRenderer {
	switch style {
	case "dark", "light", "notty", "ascii":
	default:
		style = "dark"
	}
	return &MarkdownRenderer{
		newTerm: func(width int) (mdTerm, error) {
			return glamour.NewTermRenderer(
				glamour.WithStandardStyle(style),
				glamour.WithWordWrap(width),
			)
		},
		parser: newMarkdownParser(),
		sgr:    styleSGR(style),
		cache:  make(map[mdKey]*list.Element),
		order:  list.New(),
	}
}

// Render returns text rendered as Markdown for a terminal width columns
// wide. A width of zero or less means 80; widths above 512 are treated as
// 512. The result contains no terminal control other than SGR styling and
// newlines. If glamour fails, the sanitized text is returned wrapped to
// width instead.
func (m *MarkdownRenderer) Render(text string, width int) string {
	if width <= 0 {
		width = defaultWidth
	}
	width = min(width, maxWidth)
	key := mdKey{text: text, width: width}

	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.cache[key]; ok {
		m.order.MoveToFront(el)
		return el.Value.(*mdEntry).out
	}
	out := m.render(text, width)
	m.remember(key, out)
	return out
}

func (m *MarkdownRenderer) render(text string, width int) string {
	// The filter runs last, so nothing after it can reintroduce control.
	return m.sgr.filter(m.layout(text, width))
}

// layout is the pipeline up to the output filter. Its result holds no
// control but the style's SGR whenever the steps before the filter work as
// intended; the tests check that the filter has nothing to remove from it.
func (m *MarkdownRenderer) layout(text string, width int) string {
	clean := expandTabs(Sanitize(text))
	out, err := "", errTooComplex
	if withinGlamourLimits(clean) {
		out, err = m.glamour(clean, width)
	}
	if err != nil {
		out = ansi.Wrap(clean, width, "")
	}
	return fitWidth(out, width)
}

// fitWidth hard-wraps s if any line is wider than width. Glamour wraps only
// at spaces, so a long URL or a run of CJK text would otherwise spill past
// the pane; breaking it keeps every character on screen.
func fitWidth(s string, width int) string {
	for line := range strings.SplitSeq(s, "\n") {
		if ansi.StringWidth(line) > width {
			return ansi.Hardwrap(s, width, true)
		}
	}
	return s
}

func (m *MarkdownRenderer) glamour(clean string, width int) (string, error) {
	term, err := m.term(width)
	if err != nil {
		return "", err
	}
	out, err := renderGuarded(term, prepareMarkdown(m.parser, clean))
	if err != nil {
		m.dropTerm(width) // it may have been left in a broken state
		return "", err
	}
	return restoreAmps(out), nil
}

var errTooComplex = errors.New("markdown too deeply nested or with too long a word for glamour")

// withinGlamourLimits reports whether glamour can render s in reasonable
// time and space. Measured with glamour v1.0.0: 80 nested block quotes, 161
// bytes of input, rendered to 62 MB in about 90 s, growing exponentially
// with depth; and a single 8,000-byte word of '[' took 3 s, quadratic in
// the word's length. Text past these limits is shown as plain wrapped text
// instead, which ordinary prose never needs.
func withinGlamourLimits(s string) bool {
	word := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\n' {
			word = 0
		} else if word++; word > maxWordBytes {
			return false
		}
	}
	for line := range strings.Lines(s) {
		if nestingScore(line) > maxNestingScore {
			return false
		}
	}
	return true
}

// nestingScore estimates how deeply a line's containers nest: one point
// per leading space (list nesting is by indentation) and two per block
// quote or list marker before the text starts.
func nestingScore(line string) int {
	score := 0
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ':
			score++
			i++
		case c == '>':
			score += 2
			i++
		case (c == '-' || c == '*' || c == '+') && i+1 < len(line) && (line[i+1] == ' ' || line[i+1] == '\n'):
			score += 2
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j+1 >= len(line) || (line[j] != '.' && line[j] != ')') || line[j+1] != ' ' {
				return score
			}
			score += 2
			i = j + 1
		default:
			return score
		}
	}
	return score
}

// renderGuarded turns a panic inside glamour into an error: a hostile
// message must not take the terminal down with it.
func renderGuarded(t mdTerm, s string) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("glamour panicked: %v", p)
		}
	}()
	return t.Render(s)
}

func (m *MarkdownRenderer) term(width int) (mdTerm, error) {
	for i, e := range m.terms {
		if e.width == width {
			copy(m.terms[1:i+1], m.terms[:i])
			m.terms[0] = e
			return e.term, nil
		}
	}
	t, err := m.newTerm(width)
	if err != nil {
		return nil, fmt.Errorf("markdown renderer for width %d: %w", width, err)
	}
	if len(m.terms) == maxTerms {
		m.terms = m.terms[:maxTerms-1]
	}
	m.terms = append([]termEntry{{width: width, term: t}}, m.terms...)
	return t, nil
}

func (m *MarkdownRenderer) dropTerm(width int) {
	for i, e := range m.terms {
		if e.width == width {
			m.terms = append(m.terms[:i], m.terms[i+1:]...)
			return
		}
	}
}

func (m *MarkdownRenderer) remember(key mdKey, out string) {
	cost := entryCost(key, out)
	if cost > maxCacheBytes/4 {
		return // one huge message must not evict everything else
	}
	m.cache[key] = m.order.PushFront(&mdEntry{key: key, out: out})
	m.bytes += cost
	for m.bytes > maxCacheBytes {
		oldest := m.order.Back()
		e := m.order.Remove(oldest).(*mdEntry)
		delete(m.cache, e.key)
		m.bytes -= entryCost(e.key, e.out)
	}
}

func entryCost(key mdKey, out string) int {
	return len(key.text) + len(out) + entryOverhead
}

// expandTabs replaces tabs with spaces up to the next 4-column stop. Glamour
// would pass a tab through and count it as one column, breaking its own
// layout; CommonMark defines tabs by the same stop, so the Markdown
// structure is unchanged. Columns are counted in runes, as CommonMark does.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	col := 0
	for _, r := range s {
		switch r {
		case '\t':
			n := tabStop - col%tabStop
			b.WriteString("    "[:n])
			col += n
		case '\n':
			b.WriteByte('\n')
			col = 0
		default:
			b.WriteRune(r)
			col++
		}
	}
	return b.String()
}
