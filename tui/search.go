package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// finder is a search over a list of items (transcript entries, log lines):
// every match of the query, ignoring case, and the current one, for "3 of
// 12", n and N. Matches are counted in the items' text, so the count does
// not depend on what is rendered.
type finder struct {
	query   string
	matches []match
	cur     int
}

// match is the nth occurrence (0-based) in item.
type match struct{ item, nth int }

// set starts a search for query over texts, the current match the first
// one at or after item from.
func (f *finder) set(query string, texts []string, from int) {
	f.query = query
	f.reindex(texts)
	f.cur = 0
	for i, mt := range f.matches {
		if mt.item >= from {
			f.cur = i
			break
		}
	}
}

// reindex recounts the matches over texts (they changed) and keeps the
// current match near where it was.
func (f *finder) reindex(texts []string) {
	old, had := f.current()
	f.matches = f.matches[:0]
	if f.query == "" {
		return
	}
	q := strings.ToLower(f.query)
	for i, t := range texts {
		n := strings.Count(strings.ToLower(t), q)
		for k := 0; k < n; k++ {
			f.matches = append(f.matches, match{i, k})
		}
	}
	f.cur = 0
	if had {
		for i, mt := range f.matches {
			if mt.item >= old.item {
				f.cur = i
				break
			}
		}
	}
}

func (f *finder) current() (match, bool) {
	if f.query == "" || len(f.matches) == 0 {
		return match{}, false
	}
	return f.matches[min(f.cur, len(f.matches)-1)], true
}

// step moves to the next (+1) or previous (-1) match, wrapping around.
func (f *finder) step(d int) bool {
	if len(f.matches) == 0 {
		return false
	}
	f.cur = ((f.cur+d)%len(f.matches) + len(f.matches)) % len(f.matches)
	return true
}

// status is "3 of 12", "no match", or "" without a search.
func (f *finder) status() string {
	switch {
	case f.query == "":
		return ""
	case len(f.matches) == 0:
		return fmt.Sprintf("“%s”: no match", f.query)
	}
	return fmt.Sprintf("“%s”: %d of %d", f.query, f.cur+1, len(f.matches))
}

// occurrences finds query in a plain line, ignoring case, as byte ranges.
func occurrences(plain, query string) [][2]int {
	if query == "" {
		return nil
	}
	hay, q := strings.ToLower(plain), strings.ToLower(query)
	if len(hay) != len(plain) || len(q) != len(query) {
		// Folding changed byte lengths: match exactly instead.
		hay, q = plain, query
	}
	var out [][2]int
	for off := 0; ; {
		i := strings.Index(hay[off:], q)
		if i < 0 {
			return out
		}
		out = append(out, [2]int{off + i, off + i + len(q)})
		off += i + len(q)
	}
}

// highlightLines marks every occurrence of query in styled lines, from
// line start on; the nth occurrence (counted from line 0) is the current
// match and stands out. Lines are returned from start.
func highlightLines(th theme, lines []string, query string, nth, start int) []string {
	if query == "" {
		return lines[start:]
	}
	out := make([]string, 0, len(lines)-start)
	seen := 0
	for i, l := range lines {
		plain := ansi.Strip(l)
		occ := occurrences(plain, query)
		if i < start {
			seen += len(occ)
			continue
		}
		if len(occ) == 0 {
			out = append(out, l)
			continue
		}
		var b strings.Builder
		col := 0
		for _, o := range occ {
			a := ansi.StringWidth(plain[:o[0]])
			z := ansi.StringWidth(plain[:o[1]])
			b.WriteString(ansi.Cut(l, col, a))
			match := styleMatch.Render(plain[o[0]:o[1]])
			if seen == nth {
				match = th.Render(toneCurrentMatch, plain[o[0]:o[1]])
			}
			b.WriteString(match)
			col = z
			seen++
		}
		b.WriteString(ansi.Cut(l, col, ansi.StringWidth(plain)))
		out = append(out, b.String())
	}
	return out
}

// nthLineWith is the line holding the nth occurrence of query, or -1.
func nthLineWith(lines []string, query string, nth int) int {
	seen := 0
	for i, l := range lines {
		seen += len(occurrences(ansi.Strip(l), query))
		if seen > nth {
			return i
		}
	}
	return -1
}
