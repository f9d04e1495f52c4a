package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Shortening labels for narrow terminals. A cut label must still say which
// thing it is: two nodes that both read "Acceptance…" or a figure cut to
// "9.…" are worse than a shorter label. So labels are cut at word
// boundaries, the words that tell a label from its siblings are kept, and
// figures are atomic: a figure shows whole or not at all.

// shortCandidates lists the forms of a plain label that fit width cells,
// best first: the label itself; its leading words with "…"; for a name
// (names), its last word kept whole with the words before it abbreviated
// ("Acc. reviewer", "A. reviewer"); and, last, a cut inside a word.
func shortCandidates(label string, width int, names bool) []string {
	if width <= 0 {
		return []string{""}
	}
	if ansi.StringWidth(label) <= width {
		return []string{label}
	}
	words := strings.Fields(label)
	var out []string
	add := func(s string) {
		if s != "" && ansi.StringWidth(s) <= width {
			for _, o := range out {
				if o == s {
					return
				}
			}
			out = append(out, s)
		}
	}
	// Leading words, longest first: "Write plan …" becomes "Write…".
	for n := len(words) - 1; n >= 1; n-- {
		add(strings.Join(words[:n], " ") + "…")
	}
	// The distinguishing tail kept whole, the head abbreviated.
	if names && len(words) > 1 {
		last := words[len(words)-1]
		head := words[:len(words)-1]
		for k := 6; k >= 1; k-- {
			var b strings.Builder
			for _, w := range head {
				b.WriteString(abbrev(w, k))
				b.WriteByte(' ')
			}
			add(b.String() + last)
		}
	}
	add(ansi.Truncate(label, width, "…"))
	if len(out) == 0 {
		out = append(out, ansi.Truncate(label, width, ""))
	}
	return out
}

// abbrev shortens a word to its first k runes and a dot, or keeps it when
// that would not be shorter.
func abbrev(w string, k int) string {
	r := []rune(w)
	if len(r) <= k+1 {
		return w
	}
	return string(r[:k]) + "."
}

// shortWords cuts one label (a sentence) to width cells at a word
// boundary.
func shortWords(label string, width int) string {
	return shortCandidates(label, width, false)[0]
}

// shortenDistinct shortens labels, each to its own width, so that labels
// that differ stay different: a label whose first choice collides with a
// different label's moves on to its next candidate. Equal labels may share
// a form.
func shortenDistinct(labels []string, widths []int) []string {
	cands := make([][]string, len(labels))
	pick := make([]int, len(labels))
	out := make([]string, len(labels))
	for i, l := range labels {
		cands[i] = shortCandidates(l, widths[i], true)
		out[i] = cands[i][0]
	}
	for round := 0; round < 16; round++ {
		moved := false
		for i := range labels {
			for j := range labels {
				if i == j || labels[i] == labels[j] || out[i] != out[j] {
					continue
				}
				// Both move on: a cut that two labels share says neither.
				for _, k := range []int{i, j} {
					if pick[k]+1 < len(cands[k]) {
						pick[k]++
						out[k] = cands[k][pick[k]]
						moved = true
					}
				}
			}
		}
		if !moved {
			break
		}
	}
	return out
}

// labelRoom is the room a node's label gets at width, for the figures
// that must show.
func labelRoom(glyph string, keep []string, width int) int {
	fixed := 0
	if glyph != "" {
		fixed = ansi.StringWidth(glyph) + 1
	}
	for _, k := range keep {
		fixed += 1 + ansi.StringWidth(k)
	}
	return max(1, width-fixed)
}

// fitSegments joins the segments that fit width cells, dropping those with
// the lowest priority first (higher keeps longer); a segment is shown
// whole or not at all. The result keeps the segments' order.
func fitSegments(segs []segment, width int) string {
	on := chooseSegments(segs, width)
	var b strings.Builder
	for i, s := range segs {
		if on[i] {
			b.WriteString(s.text)
		}
	}
	return b.String()
}

// chooseSegments reports which segments fitSegments keeps.
func chooseSegments(segs []segment, width int) []bool {
	on := make([]bool, len(segs))
	total := 0
	for i, s := range segs {
		on[i] = true
		total += ansi.StringWidth(s.text)
	}
	for total > width {
		lo := -1
		for i, s := range segs {
			if on[i] && (lo < 0 || s.prio < segs[lo].prio) {
				lo = i
			}
		}
		if lo < 0 {
			break
		}
		on[lo] = false
		total -= ansi.StringWidth(segs[lo].text)
	}
	return on
}

// spread lays out a left and a right group of segments on one line of
// width cells, the right group flush right, dropping segments of either
// group by priority until both fit with a space between.
func spread(left, right []segment, width int) string {
	all := append(append([]segment(nil), left...), right...)
	on := chooseSegments(all, width-1)
	var l, r strings.Builder
	for i, s := range all {
		switch {
		case !on[i]:
		case i < len(left):
			l.WriteString(s.text)
		default:
			r.WriteString(s.text)
		}
	}
	ls, rs := l.String(), r.String()
	gap := width - ansi.StringWidth(ls) - ansi.StringWidth(rs)
	if gap < 0 {
		return ansi.Truncate(ls+rs, width, "")
	}
	return ls + strings.Repeat(" ", gap) + rs
}

// segment is a piece of a line that shows whole or not at all.
type segment struct {
	text string
	prio int
}
