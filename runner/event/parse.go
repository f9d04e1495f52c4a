package event

import (
	"bytes"
	"encoding/json"
	"time"
)

// ParseLine decodes one log line, which must be valid JSON (as
// store.ScanLog hands it over), into an event, as json.Unmarshal would.
//
// A line in the layout AppendJSON writes, {"timestamp":"…","type":"…",
// "payload":…}, is split without decoding its payload: replaying a log of
// 100 MB decoded every payload once to validate it and again to find its
// end. Any other layout, and any line the split is unsure of, goes through
// json.Unmarshal. The payload aliases line.
func ParseLine(line []byte) (Event, error) {
	if e, ok := splitLine(line); ok {
		return e, nil
	}
	var e Event
	err := json.Unmarshal(line, &e)
	return e, err
}

func splitLine(line []byte) (Event, bool) {
	const (
		tsKey   = `{"timestamp":"`
		typeKey = `","type":"`
		payKey  = `","payload":`
	)
	rest, ok := bytes.CutPrefix(line, []byte(tsKey))
	if !ok {
		return Event{}, false
	}
	ts, rest, ok := bytes.Cut(rest, []byte(typeKey))
	if !ok || bytes.ContainsAny(ts, "\"\\") {
		return Event{}, false
	}
	typ, rest, ok := bytes.Cut(rest, []byte(payKey))
	if !ok || bytes.ContainsAny(typ, "\"\\") {
		return Event{}, false
	}
	end, ok := skipValue(rest)
	if !ok || string(bytes.TrimSpace(rest[end:])) != "}" {
		return Event{}, false
	}
	var t time.Time
	if t.UnmarshalJSON(line[len(tsKey)-1:len(tsKey)+len(ts)+1]) != nil {
		return Event{}, false
	}
	return Event{Timestamp: t, Type: Type(typ), Payload: rest[:end:end]}, true
}

// skipValue returns the end of the JSON value at the start of b. It is
// exact for valid JSON, never reads past b, and reports false for input it
// cannot follow (then the caller decodes the line in full).
func skipValue(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	switch b[0] {
	case '"':
		return skipString(b, 0)
	case '{', '[':
		var open []byte // the closers expected, innermost last
		for i := 0; i < len(b); i++ {
			switch c := b[i]; c {
			case '"':
				j, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = j - 1
			case '{':
				open = append(open, '}')
			case '[':
				open = append(open, ']')
			case '}', ']':
				if len(open) == 0 || open[len(open)-1] != c {
					return 0, false
				}
				open = open[:len(open)-1]
				if len(open) == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	}
	i := 0
	for i < len(b) && isLiteralByte(b[i]) {
		i++
	}
	return i, i > 0
}

// skipString returns the index after the string that starts at b[i]. A
// quote ends the string unless an odd run of backslashes precedes it; the
// search for quotes is bytes.IndexByte's, since strings are most of a log.
func skipString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
	return 0, false
}

// isLiteralByte reports bytes of numbers, true, false and null.
func isLiteralByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E'
}
