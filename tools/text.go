package tools

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"github.com/guildhall/guildhall/internal/runetext"
)

// capChars cuts s to n characters and appends a truncation marker naming
// how many characters were left out.
func capChars(s string, n int) (string, bool) {
	head, cut := runetext.Cut(s, n)
	if !cut {
		return s, false
	}
	omitted := utf8.RuneCountInString(s) - n
	return head + fmt.Sprintf("\n[… truncated: %d more characters]", omitted), true
}

// looksBinary reports whether data looks like a binary file: a NUL byte in
// its first 8000 bytes, as git decides.
func looksBinary(data []byte) bool {
	if len(data) > 8000 {
		data = data[:8000]
	}
	return bytes.IndexByte(data, 0) >= 0
}

// randomHex returns 2n random hex digits.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// readLine reads one line (without its newline) from br, keeping at most max
// bytes of it and discarding the rest. It returns io.EOF only when nothing
// was read.
func readLine(br *bufio.Reader, max int) (line []byte, long bool, err error) {
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			if err == io.EOF && (len(line) > 0 || long) {
				return line, long, nil
			}
			return line, long, err
		}
		if room := max - len(line); room > 0 {
			if len(chunk) > room {
				line = append(line, chunk[:room]...)
				long = true
			} else {
				line = append(line, chunk...)
			}
		} else {
			long = true
		}
		if !isPrefix {
			return line, long, nil
		}
	}
}

// decodeArgs unmarshals tool arguments. The runner has already validated
// them against the manifest's schema; this is the defensive second check.
func decodeArgs(args json.RawMessage, v any) *Result {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		r := Fail(KindInvalidArguments, fmt.Sprintf("invalid arguments: %v", err))
		return &r
	}
	return nil
}

// intArg converts an optional numeric argument (JSON numbers may arrive as
// 10.0) to an int in [lo, hi], with def when absent.
func intArg(v *float64, def, lo, hi int, name string) (int, *Result) {
	if v == nil {
		return def, nil
	}
	f := *v
	if math.IsNaN(f) || f != math.Trunc(f) || f < float64(lo) {
		r := Fail(KindInvalidArguments, fmt.Sprintf("%s must be a whole number of at least %d", name, lo))
		return 0, &r
	}
	if f > float64(hi) {
		return hi, nil
	}
	return int(f), nil
}
