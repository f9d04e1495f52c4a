package tools

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// cleanWebText makes text from the web safe to hand on: it is valid UTF-8,
// carries no terminal control (ESC-introduced sequences are removed whole,
// with C0 controls other than newline and tab, DEL and C1 controls), no
// bidirectional override, embedding or isolate characters, and no
// character reference that would decode to one of those. Carriage returns
// become newlines, so no line can overwrite another.
//
// The terminal has its own filter (render.Sanitize); this one runs first,
// at the source, so that neither the model nor a view that skips a filter
// ever receives live control from a web page.
func cleanWebText(s string) string {
	s = stripControl(s)
	return neutralizeControlRefs(s)
}

// stripControl removes control sequences and characters; see cleanWebText.
func stripControl(s string) string {
	if isCleanText(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
			i++
			continue
		case r == 0x1b:
			i = skipEscape(s, i+n)
			continue
		case r == 0x9b: // C1 CSI
			i = skipCSI(s, i+n)
			continue
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f: // DCS, SOS, OSC, PM, APC
			i = skipString(s, i+n)
			continue
		case r == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
				continue
			}
			b.WriteByte('\n')
		case r == 0x2028 || r == 0x2029:
			b.WriteByte('\n')
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case dropRune(r):
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isCleanText reports whether s needs no change from stripControl.
func isCleanText(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r == '\r' || r == 0x2028 || r == 0x2029 || (r != '\n' && r != '\t' && dropRune(r)) {
			return false
		}
	}
	return utf8.ValidString(s)
}

// dropRune reports the characters removed outright: C0 and C1 controls,
// DEL, bidirectional controls and the byte-order mark.
func dropRune(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case isBidiControl(r), r == 0xfeff:
		return true
	}
	return false
}

// isBidiControl reports the bidirectional formatting characters: marks,
// embeddings, overrides and isolates. They can make text read differently
// from how it is stored (Trojan Source).
func isBidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// skipEscape skips an ESC-introduced sequence whose ESC ends at i.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// Intermediate bytes, then one final byte.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI skips a control sequence's parameter and intermediate bytes and
// its final byte. An unterminated sequence runs to the end.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		i++
		if c >= 0x40 && c <= 0x7e {
			return i
		}
		if c < 0x20 || c > 0x3f {
			// Not a parameter or intermediate byte: the sequence is
			// malformed; drop what was read and go on from here.
			return i - 1
		}
	}
	return i
}

// skipString skips an OSC, DCS, SOS, PM or APC string up to its terminator
// (BEL, ESC \ or the C1 ST). An unterminated string runs to the end.
func skipString(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x07 || r == 0x9c:
			return i + n
		case r == 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i + 1
		}
		i += n
	}
	return i
}

// controlRef matches numeric character references, including the lenient
// forms (no semicolon, leading zeros) and the escaped ampersands a second
// decoding pass would turn into one.
var controlRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`&(?:amp;)*#(?:[xX]0*([0-9a-fA-F]{1,8})|0*([0-9]{1,10}));?`)
})

// neutralizeControlRefs replaces character references that decode to a
// control or bidirectional character (&#27; &#x1b; &#155; &#8238; ...) with
// a visible ⟪U+001B⟫ placeholder, so a Markdown or HTML renderer further on
// cannot turn text back into live control. Other references are kept.
func neutralizeControlRefs(s string) string {
	if !strings.Contains(s, "&") || !strings.Contains(s, "#") {
		return s
	}
	return controlRef().ReplaceAllStringFunc(s, func(m string) string {
		sub := controlRef().FindStringSubmatch(m)
		var v uint64
		var err error
		if sub[1] != "" {
			v, err = strconv.ParseUint(sub[1], 16, 32)
		} else {
			v, err = strconv.ParseUint(sub[2], 10, 32)
		}
		if err != nil || v > utf8.MaxRune {
			return m
		}
		r := rune(v)
		if r == '\n' || r == '\t' || !(dropRune(r) || r == '\r' || r == 0x2028 || r == 0x2029) {
			return m
		}
		return fmt.Sprintf("⟪U+%04X⟫", v)
	})
}
