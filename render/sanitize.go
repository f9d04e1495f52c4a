package render

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Terminal text safety.
//
// Everything that did not come from this program (model prose, tool output,
// file names, task text, error messages, provider bodies) passes through
// Sanitize before it reaches a terminal. The guarantee is about the output
// alphabet, not about recognising attacks: the result holds no ESC, no C1
// control, no DEL and no C0 control other than newline and tab, so no byte
// of it can start a terminal sequence. Recognising whole sequences only
// decides how much of a hostile string the operator gets to see: a
// sequence's body is removed with its introducer instead of being printed as
// junk.
//
// Choices a reader may want to know about:
//   - CR LF becomes LF, and a lone CR becomes LF too. Carriage returns are how
//     a line hides behind an overwrite ("safe\rrm -rf /"); as a newline, both
//     halves stay visible, and progress-bar output reads as a list.
//   - Bidirectional embedding, override, isolate and mark characters are
//     replaced by a visible placeholder such as ⟪U+202E⟫. Obeying them lets
//     text display in a different order from the one it is stored in.
//   - An unterminated control sequence (CSI) is removed to the end of the
//     input, as a terminal would swallow it. An unterminated string (OSC,
//     DCS, SOS, PM, APC) loses only its introducer and its body is shown as
//     text: one stray ESC must not hide the rest of a message (skipControl).
//   - Invalid UTF-8 bytes become U+FFFD, so a lone 8-bit 0x9B cannot act as a
//     CSI on a terminal that reads bytes.

const (
	esc = 0x1b
	bel = 0x07
	can = 0x18 // CAN and SUB abort a sequence in progress, as in a terminal.
	sub = 0x1a
	del = 0x7f
	st8 = 0x9c // 8-bit String Terminator
)

// Sanitize strips terminal control from untrusted text. It keeps printable
// text, newlines and tabs; see the package notes above for the rest.
// Sanitize is idempotent. It is not tools' cleanWebText, whose loop looks
// alike: that filter, at the web source, drops bidi controls and an
// unterminated string's body, where the operator is shown a placeholder
// and the body.
func Sanitize(s string) string {
	if isPlain(s, true) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == esc || isC1(r):
			i = skipControl(s, i)
			continue
		case r == '\r':
			b.WriteByte('\n')
			if i+1 < len(s) && s[i+1] == '\n' {
				n++
			}
		case r == '\n' || r == '\t':
			b.WriteByte(byte(r))
		default:
			writeText(&b, r, s[i:i+n])
		}
		i += n
	}
	return b.String()
}

// SanitizeLine is Sanitize for machine fields shown on one line (tool names,
// paths, ids, one-line summaries): newlines and tabs become single spaces.
func SanitizeLine(s string) string {
	if isPlain(s, false) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, Sanitize(s))
}

// writeText writes one decoded rune (raw holds its source bytes) outside any
// sequence: C0 and DEL vanish, invalid bytes become U+FFFD, bidi controls
// become a visible placeholder.
func writeText(b *strings.Builder, r rune, raw string) {
	switch {
	case r < 0x20 || r == del:
	case r == utf8.RuneError && len(raw) == 1:
		b.WriteRune(utf8.RuneError)
	case isBidi(r):
		fmt.Fprintf(b, "⟪U+%04X⟫", r)
	default:
		b.WriteString(raw)
	}
}

// States of skipControl, named after ECMA-48.
const (
	stEscape = iota // after ESC
	stInter         // ESC followed by intermediate bytes (nF escapes such as ESC ( B)
	stCSI           // control sequence: parameters and intermediates until a final byte
	stOSC           // operating system command: a string ended by ST or BEL
	stString        // DCS, SOS, PM, APC: a string ended by ST
)

// skipControl returns the index just past the control sequence that starts
// at s[i], which must be ESC or a C1 rune. It always consumes at least the
// introducer. A sequence interrupted by ESC or a C1 control ends just before
// it, so the caller starts the next sequence there, as a terminal does; a
// sequence cut off by a rune that cannot belong to it ends before that rune,
// which the caller then shows as text. A string (OSC, DCS, SOS, PM, APC)
// that never ends loses only its introducer's first byte: its body is
// whatever text follows, and a terminal that never sees a terminator
// would hide it all, so dropping it would let one stray ESC hide the rest
// of a message from the operator.
func skipControl(s string, i int) int {
	start := i
	r, n := utf8.DecodeRuneInString(s[i:])
	st := stEscape
	switch r {
	case esc:
	case 0x9b:
		st = stCSI
	case 0x9d:
		st = stOSC
	case 0x90, 0x98, 0x9e, 0x9f:
		st = stString
	default:
		return i + n // any other C1 control stands alone
	}
	for i += n; i < len(s); i += n {
		r, n = utf8.DecodeRuneInString(s[i:])
		inString := st == stOSC || st == stString
		switch {
		case r == can || r == sub:
			return i + n
		case r == esc:
			if inString && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2 // ST
			}
			return i
		case r == st8 && inString:
			return i + n
		case isC1(r):
			return i
		case inString:
			if r == bel && st == stOSC {
				return i + n
			}
			continue // the string's body, whatever it holds
		case r < 0x20 || r == del:
			continue // a terminal would execute or ignore these mid-sequence
		}
		switch st {
		case stEscape:
			switch {
			case r == '[':
				st = stCSI
			case r == ']':
				st = stOSC
			case r == 'P' || r == 'X' || r == '^' || r == '_':
				st = stString
			case r >= 0x20 && r <= 0x2f:
				st = stInter
			case r >= 0x30 && r <= 0x7e:
				return i + n // two-character escape such as ESC c or ESC 7
			default:
				return i
			}
		case stInter:
			switch {
			case r >= 0x20 && r <= 0x2f:
			case r >= 0x30 && r <= 0x7e:
				return i + n
			default:
				return i
			}
		case stCSI:
			switch {
			case r >= 0x20 && r <= 0x3f:
			case r >= 0x40 && r <= 0x7e:
				return i + n
			default:
				return i
			}
		}
	}
	if st == stOSC || st == stString {
		_, n = utf8.DecodeRuneInString(s[start:])
		return start + n
	}
	return len(s)
}

// isC1 reports whether r is an 8-bit control, U+0080 to U+009F.
func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// isBidi reports whether r reorders or marks text direction: the embeddings
// and overrides U+202A–U+202E, the isolates U+2066–U+2069, and the marks
// LRM, RLM and ALM.
func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
		r == 0x200e || r == 0x200f || r == 0x061c
}

// isPlain reports whether s is printable ASCII, plus newline and tab when
// multiline: the common case, which needs no copy.
func isPlain(s string, multiline bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 || c >= del) && !(multiline && (c == '\n' || c == '\t')) {
			return false
		}
	}
	return true
}
