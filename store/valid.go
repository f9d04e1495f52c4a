package store

import "encoding/binary"

// validJSON reports whether b is one valid JSON value, exactly as
// encoding/json.Valid does (a fuzz target checks that they agree).
//
// It exists because ScanLog validates every line of a log before handing
// it over, and json.Valid, a state machine called per byte, took half of
// the CPU of resuming a run whose log is 100 MB. Most of a log's bytes
// are inside strings (tool results, model replies); here a string's
// ordinary bytes cost three comparisons each.
func validJSON(b []byte) bool {
	i := skipSpace(b, 0)
	i, ok := validValue(b, i, 0)
	return ok && skipSpace(b, i) == len(b)
}

// maxDepth bounds nesting as encoding/json does (10000), so a line of
// brackets cannot exhaust the stack.
const maxDepth = 10000

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// validValue checks the value at b[i:] and returns the index after it.
func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return validString(b, i)
	case c == '{':
		return validObject(b, i, depth+1)
	case c == '[':
		return validArray(b, i, depth+1)
	case c == 't':
		return validLiteral(b, i, "true")
	case c == 'f':
		return validLiteral(b, i, "false")
	case c == 'n':
		return validLiteral(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return validNumber(b, i)
	}
	return i, false
}

func validLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// validObject checks the object at b[i:]; validArray the array.
func validObject(b []byte, i, depth int) (int, bool) { return validContainer(b, i, depth, '}') }
func validArray(b []byte, i, depth int) (int, bool)  { return validContainer(b, i, depth, ']') }

// validContainer checks an object (close is '}': each member is a key, a
// colon and a value) or an array (close is ']': each member is a value).
func validContainer(b []byte, i, depth int, close byte) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == close {
		return i + 1, true
	}
	for {
		var ok bool
		if close == '}' {
			if i, ok = validKey(b, i); !ok {
				return i, false
			}
		}
		if i, ok = validValue(b, i, depth); !ok {
			return i, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case close:
			return i + 1, true
		default:
			return i, false
		}
	}
}

// validKey checks an object member's key and colon at b[i:] and returns
// the index of its value.
func validKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	i, ok := validString(b, i)
	if !ok {
		return i, false
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, false
	}
	return skipSpace(b, i+1), true
}

// plain reports the bytes a string may hold unescaped that need no
// further look: not a quote, a backslash, or a control character. Bytes
// from 0x80 are plain: like encoding/json, invalid UTF-8 is accepted here.
func plain(c byte) bool { return c >= 0x20 && c != '"' && c != '\\' }

// plainWord reports whether all eight bytes of w are plain, with the
// exact word-at-a-time tests for a zero byte (after xor with the quote or
// the backslash) and for a byte below 0x20.
func plainWord(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(x uint64) uint64 { return (x - ones) &^ x & highs }
	less := (w - ones*0x20) &^ w & highs
	return zero(w^(ones*'"'))|zero(w^(ones*'\\'))|less == 0
}

func validString(b []byte, i int) (int, bool) {
	i++ // the opening quote
	for i < len(b) {
		// Eight plain bytes at a time while there are.
		for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if plain(c) {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		}
		// A backslash.
		if i+1 >= len(b) {
			return i, false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
				return i, false
			}
			i += 6
		default:
			return i, false
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// validNumber checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
