package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/guildhall/guildhall/internal/editdist"
)

// ConfigError is a problem in a guild or deployment file, located at
// file:line:col, with a sentence saying what to do.
type ConfigError struct {
	File string
	Line int
	Col  int
	Msg  string
}

func (e *ConfigError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// ConfigErrors collects every problem found in one validation pass, so the
// user fixes them all at once rather than one per run.
type ConfigErrors []*ConfigError

func (es ConfigErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// jnode is a JSON value with the byte offset where it starts, so validation
// errors can point at file:line:col.
type jnode struct {
	offset int64
	kind   byte // '{', '[', 's', 'n', 'b', '0' (null)
	keys   []jfield
	items  []*jnode
	str    string
	raw    json.RawMessage
}

type jfield struct {
	key    string
	offset int64
	value  *jnode
}

func (n *jnode) field(key string) *jnode {
	if n == nil {
		return nil
	}
	for _, f := range n.keys {
		if f.key == key {
			return f.value
		}
	}
	return nil
}

// keyOffset is where key is written in object n (its value's offset when
// absent).
func (n *jnode) keyOffset(key string) int64 {
	for _, f := range n.keys {
		if f.key == key {
			return f.offset
		}
	}
	return n.offset
}

// parsePositioned parses data into a jnode tree. Duplicate keys are errors:
// in a config file they are always a mistake.
func parsePositioned(file string, data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(file, data, dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, posError(file, data, dec.InputOffset(), "unexpected content after the top-level JSON value; a file holds exactly one object")
	}
	return n, nil
}

func parseValue(file string, data []byte, dec *json.Decoder) (*jnode, error) {
	start := skipSpace(data, dec.InputOffset())
	if start < int64(len(data)) && data[start] == ',' {
		start = skipSpace(data, start+1) // a later array item
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(file, data, dec, err)
	}
	n := &jnode{offset: start}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.kind = '{'
			for dec.More() {
				koff := skipSpace(data, dec.InputOffset())
				if data[koff] == ',' {
					koff = skipSpace(data, koff+1)
				}
				kt, err := dec.Token()
				if err != nil {
					return nil, syntaxError(file, data, dec, err)
				}
				key, _ := kt.(string)
				for _, f := range n.keys {
					if f.key == key {
						return nil, posError(file, data, koff, fmt.Sprintf("duplicate key %q; keep one of them", key))
					}
				}
				v, err := parseValue(file, data, dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, jfield{key: key, offset: koff, value: v})
			}
		case '[':
			n.kind = '['
			for dec.More() {
				v, err := parseValue(file, data, dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, syntaxError(file, data, dec, err)
		}
	case string:
		n.kind, n.str = 's', t
	case json.Number:
		n.kind, n.str = 'n', t.String()
	case bool:
		n.kind = 'b'
		if t {
			n.str = "true"
		}
	case nil:
		n.kind = '0'
	}
	end := dec.InputOffset()
	n.raw = json.RawMessage(bytes.TrimLeft(data[start:end], " \t\r\n,:"))
	return n, nil
}

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ':':
			off++
		default:
			return off
		}
	}
	return off
}

func syntaxError(file string, data []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	off := dec.InputOffset()
	if errors.As(err, &se) {
		off = se.Offset
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return posError(file, data, int64(len(data)), "the JSON ends early; check for a missing closing brace or bracket")
	}
	return posError(file, data, off, fmt.Sprintf("invalid JSON: %v", err))
}

func posError(file string, data []byte, off int64, msg string) *ConfigError {
	line, col := lineCol(data, off)
	return &ConfigError{File: file, Line: line, Col: col, Msg: msg}
}

func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// shape describes the keys an object may hold. A nil sub-shape accepts any
// value; the special key "*" describes the values of a free-form map, and
// lenientKey marks a shape whose unknown keys are warnings.
type shape map[string]shape

// lenientKey, present in a shape, makes an unknown key there a warning
// rather than an error (unless it is close to a known key).
const lenientKey = "?"

// checker validates a jnode tree against shapes and records errors and
// warnings.
type checker struct {
	file  string
	data  []byte
	errs  ConfigErrors
	warns ConfigErrors
}

func (c *checker) errorf(off int64, format string, args ...any) {
	c.errs = append(c.errs, posError(c.file, c.data, off, fmt.Sprintf(format, args...)))
}

func (c *checker) warnf(off int64, format string, args ...any) {
	c.warns = append(c.warns, posError(c.file, c.data, off, fmt.Sprintf(format, args...)))
}

func (c *checker) checkShape(n *jnode, s shape, where string) {
	if n == nil || s == nil {
		return
	}
	if n.kind != '{' {
		c.errorf(n.offset, "%s must be a JSON object", where)
		return
	}
	if any, ok := s["*"]; ok && len(s) == 1 {
		for _, f := range n.keys {
			c.checkShape(f.value, any, keyPath(where, f.key))
		}
		return
	}
	for _, f := range n.keys {
		sub, ok := s[f.key]
		if !ok || f.key == lenientKey {
			c.unknownKey(f, s, where)
			continue
		}
		c.checkShape(f.value, sub, keyPath(where, f.key))
	}
}

// unknownKey reports a key s does not know: an error when it looks like a
// misspelling of a known key or s is strict, else a warning.
func (c *checker) unknownKey(f jfield, s shape, where string) {
	if near := nearestKey(f.key, s); near != "" {
		c.errorf(f.offset, "unknown key %q in %s; did you mean %q? (allowed keys are %s)", f.key, where, near, keyList(s))
		return
	}
	if _, lenient := s[lenientKey]; lenient {
		c.warnf(f.offset, "unknown key %q in %s is ignored, as the original system ignores it; known keys are %s", f.key, where, keyList(s))
		return
	}
	c.errorf(f.offset, "unknown key %q in %s; allowed keys are %s", f.key, where, keyList(s))
}

// nearestKey is the known key of s that key most likely misspells: the
// same but for case, or within two edits of a key at least three times as
// long as the distance. "" when none is that close.
func nearestKey(key string, s shape) string {
	best, bestD := "", 3
	lk := strings.ToLower(key)
	for _, k := range sortedKeys(s) {
		d := editdist.Levenshtein([]byte(lk), []byte(strings.ToLower(k)))
		if d < bestD && d*3 <= len(k) {
			best, bestD = k, d
		}
	}
	return best
}

// keyPath names the member key of where in a message: where.key for a
// plain name, where["key"] (Go-quoted) for any other. Keys are the guild's
// (role names), and a guild from the workspace may put terminal control or
// line breaks in them; quoted, they cannot break or fake a line of the
// message.
func keyPath(where, key string) string {
	if plainName(key) {
		return where + "." + key
	}
	return fmt.Sprintf("%s[%q]", where, key)
}

// quotedNames lists names for a message, each as keyPath would show it.
func quotedNames(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if !plainName(n) {
			out[i] = strconv.Quote(n)
		}
	}
	return strings.Join(out, ", ")
}

func plainName(s string) bool {
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

func keyList(s shape) string { return strings.Join(sortedKeys(s), ", ") }

// sortedKeys are the keys s knows, sorted, without the markers.
func sortedKeys(s shape) []string {
	keys := make([]string, 0, len(s))
	for k := range s {
		if k != lenientKey && k != "*" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// decodeInto unmarshals a node's raw JSON into v, reporting type errors at
// the node's position.
func (c *checker) decodeInto(n *jnode, v any, where string) bool {
	if n == nil {
		return true
	}
	if err := json.Unmarshal(n.raw, v); err != nil {
		var te *json.UnmarshalTypeError
		off := n.offset
		msg := err.Error()
		if errors.As(err, &te) {
			off = n.offset + te.Offset - 1
			if te.Field != "" {
				msg = fmt.Sprintf("%s.%s must be a %s, not a JSON %s", where, te.Field, te.Type.String(), te.Value)
			} else {
				msg = fmt.Sprintf("%s must be a %s, not a JSON %s", where, te.Type.String(), te.Value)
			}
		}
		c.errorf(off, "%s", msg)
		return false
	}
	return true
}
