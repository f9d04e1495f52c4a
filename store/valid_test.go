package store

import (
	"encoding/json"
	"strings"
	"testing"
)

// validJSON guards what ScanLog hands to readers that split lines without
// decoding them: it must accept exactly what encoding/json accepts.
func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	deep := func(n int, open, close string) string { return strings.Repeat(open, n) + strings.Repeat(close, n) }
	for _, in := range []string{
		``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `01`, `-`, `1.`, `.5`, `1.5e`, `1e+5`, `1E-05`, `-12.340e3`, `1e`, `+1`,
		`true`, `tru`, `truex`, `null`, `nul`, `false`, `fals`, `NaN`, `Infinity`,
		`{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":1}}`, `{"a":[1,2,]}`, `[1 2]`, `[,1]`, `[`, `]`,
		`"\u00e9"`, `"\u00g9"`, `"\u00e"`, `"\x"`, `"\/\b\f\n\r\t\"\\"`, `"` + "\x01" + `"`, `"` + "\x7f" + `"`, `"` + "\xff\xfe" + `"`,
		`"tab` + "\t" + `"`, `"nl` + "\n" + `"`, `"abc`, `"abc\"`, `"abc\\"`,
		" \t\r\n{ \"a\" : [ 1 , { } ] } \n", `{"a":1} x`, `{} {}`, `1 2`,
		deep(10000, "[", "]"), deep(10001, "[", "]"), deep(10000, `{"a":`, "}"), deep(10001, `{"a":`, "}"), deep(3, "[", "]]"),
	} {
		if got, want := validJSON([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("validJSON(%.60q) = %v, json.Valid says %v", in, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b",{"c":null}],"d":-1.5e3}`, `"\u12ab\n"`, `[true,false]`, `{"a":"` + "\x80" + `"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

// BenchmarkValidJSONLogLine compares the validator with json.Valid on a
// line of the kind that fills a long log: a tool result of 4 KiB.
func BenchmarkValidJSONLogLine(b *testing.B) {
	line := []byte(`{"timestamp":"2026-01-01T00:00:00Z","type":"tool_result","payload":{"role":"orchestrator","tool":"read_file","result":{"kind":"success","data":"` +
		strings.Repeat("lorem ipsum dolor sit amet ", 150) + `"},"elapsedMs":1}}`)
	b.Run("validJSON", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if !validJSON(line) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if !json.Valid(line) {
				b.Fatal("invalid")
			}
		}
	})
}

// The word-at-a-time scan must see a quote, a backslash or a control byte
// at any offset of a word.
func TestValidJSONSeesEveryByteOfAWord(t *testing.T) {
	for _, c := range []byte{'"', '\\', 0x00, 0x01, 0x1f, 0x20, 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0x9f, 0xff} {
		for pos := 0; pos < 24; pos++ {
			body := []byte(strings.Repeat("a", 24))
			body[pos] = c
			for _, in := range [][]byte{
				append(append([]byte(`"`), body...), '"'),
				append(append([]byte(`{"k":"`), body...), `"}`...),
				append(append([]byte(`"`), body...), `\n"`...),
			} {
				if got, want := validJSON(in), json.Valid(in); got != want {
					t.Errorf("validJSON(%q) = %v, json.Valid says %v", in, got, want)
				}
			}
		}
	}
}
