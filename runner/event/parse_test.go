package event

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// ParseLine must agree with json.Unmarshal on every valid line, whether or
// not it takes the fast split: a payload cut one byte short or long would
// reach the bus, the browser and the TUI as broken JSON.
func TestParseLineAgreesWithUnmarshal(t *testing.T) {
	ts := `"2026-01-02T03:04:05.123456789Z"`
	lines := []string{
		`{"timestamp":` + ts + `,"type":"tool_result","payload":{"a":"b","n":[1,2,{"c":null}]}}`,
		`{"timestamp":` + ts + `,"type":"x","payload":null}`,
		`{"timestamp":` + ts + `,"type":"x","payload":"a string with \" and \\ and } ] {"}`,
		`{"timestamp":` + ts + `,"type":"x","payload":{"k":"\\"}}`,
		`{"timestamp":` + ts + `,"type":"x","payload":{"k":"\\\""}}`,
		`{"timestamp":` + ts + `,"type":"x","payload":-1.5e+10}`,
		`{"timestamp":` + ts + `,"type":"x","payload":true}`,
		`{"timestamp":` + ts + `,"type":"x","payload":[]}`,
		`{"timestamp":` + ts + `,"type":"x","payload":{}  }`,
		`{"timestamp":` + ts + `,"type":"x","payload": {"a":1}}`,
		`{"timestamp":` + ts + `,"type":"x","payload":{"a":1}, "type":"y"}`,       // a later key wins
		`{"timestamp":` + ts + `,"type":"x","payload":{"a":1},"payload":{"b":2}}`, // a second payload wins
		`{"timestamp":` + ts + `,"type":"x","payload":{"a":"}"},"extra":"}"}`,     // an extra key after the payload
		`{"timestamp":` + ts + `,"type":"t\u0041","payload":1}`,                   // an escaped type
		`{"timestamp":"2026-01-02T03:04:05+02:00","type":"x","payload":1}`,        // an offset
		`{"type":"x","timestamp":` + ts + `,"payload":1}`,                         // another order
		`{"timestamp":` + ts + `,"payload":1,"type":"x"}`,
		`{"timestamp":` + ts + `,"type":"x"}`, // no payload
		`{"timestamp":` + ts + `,"type":"x","payload":{"a":"` + strings.Repeat("é\\n", 2000) + `"}}`,
		`{"timestamp":` + ts + `,"type":"x","payload":{"a":"\u2028\u0000"}}`,
		`{"timestamp":` + ts + `,"type":"x","payload":{"a":[[[["deep"]]]],"b":{"c":{"d":[]}}}}`,
	}
	for _, line := range lines {
		if !json.Valid([]byte(line)) {
			t.Fatalf("test line is not valid JSON: %s", line)
		}
		var want Event
		werr := json.Unmarshal([]byte(line), &want)
		got, gerr := ParseLine([]byte(line))
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: error %v, json.Unmarshal %v", line, gerr, werr)
			continue
		}
		if !got.Timestamp.Equal(want.Timestamp) || got.Type != want.Type || !bytes.Equal(got.Payload, want.Payload) {
			t.Errorf("%.120s:\n got  %v %q %.80s\n want %v %q %.80s", line, got.Timestamp, got.Type, got.Payload, want.Timestamp, want.Type, want.Payload)
		}
	}
}

// Lines AppendJSON writes take the split, which does not copy the payload.
func TestParseLineSplitsWhatAppendJSONWrites(t *testing.T) {
	e, err := New(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), ToolResult, ToolResultPayload{Tool: "read_file", Result: json.RawMessage(`{"kind":"success","data":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	line := e.AppendJSON(nil)
	if _, ok := splitLine(line); !ok {
		t.Fatalf("the split refused a line AppendJSON wrote: %s", line)
	}
	got, err := ParseLine(line)
	if err != nil || !bytes.Equal(got.Payload, e.Payload) || got.Type != e.Type || !got.Timestamp.Equal(e.Timestamp) {
		t.Fatalf("ParseLine = %+v %v, want %+v", got, err, e)
	}
}

// skipValue never reads past its input nor accepts a cut or mismatched
// value (ParseLine's contract is valid JSON, but a reader's bug must not
// become a panic).
func TestSkipValueOnBrokenInput(t *testing.T) {
	for _, in := range []string{``, `"`, `"abc`, `"abc\"`, `{`, `{"a":[}`, `[1,2`, `{"a":"}"`, `]`, `}`, `,`, `"\`} {
		if n, ok := skipValue([]byte(in)); ok {
			t.Errorf("skipValue(%q) = %d, true", in, n)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add(`{"timestamp":"2026-01-02T03:04:05Z","type":"x","payload":{"a":"b"}}`)
	f.Add(`{"timestamp":"2026-01-02T03:04:05Z","type":"x","payload":"\\"}`)
	f.Fuzz(func(t *testing.T, line string) {
		if !json.Valid([]byte(line)) {
			return
		}
		var want Event
		werr := json.Unmarshal([]byte(line), &want)
		got, gerr := ParseLine([]byte(line))
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: error %v, json.Unmarshal %v", line, gerr, werr)
		}
		if werr == nil && (!got.Timestamp.Equal(want.Timestamp) || got.Type != want.Type || !bytes.Equal(got.Payload, want.Payload)) {
			t.Fatalf("%q: got %+v, want %+v", line, got, want)
		}
	})
}
