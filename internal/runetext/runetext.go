// Package runetext cuts and decodes text by characters rather than bytes,
// for the tools and the shell, which cap what they return to the model in
// characters and must never split a UTF-8 sequence.
package runetext

import (
	"strings"
	"unicode/utf8"
)

// Decode decodes b as UTF-8, replacing each malformed byte with U+FFFD.
func Decode(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			sb.WriteRune(utf8.RuneError)
			b = b[1:]
			continue
		}
		sb.Write(b[:n])
		b = b[n:]
	}
	return sb.String()
}

// Cut returns the first n characters of s and whether it cut.
func Cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos], true
		}
		i++
	}
	return s, false
}
