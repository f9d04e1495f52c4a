package runetext

import "testing"

func TestDecode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"caf\xc3\xa9", "café"},
		{"a\xffb", "a\uFFFDb"},
		{"\xe2\x82", "\uFFFD\uFFFD"}, // a sequence cut short is one mark per byte
	} {
		if got := Decode([]byte(tc.in)); got != tc.want {
			t.Errorf("Decode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
		cut  bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 2, "he", true},
		{"ééé", 2, "éé", true}, // characters, not bytes
		{"ééé", 3, "ééé", false},
		{"", 0, "", false},
	} {
		got, cut := Cut(tc.in, tc.n)
		if got != tc.want || cut != tc.cut {
			t.Errorf("Cut(%q, %d) = %q, %v; want %q, %v", tc.in, tc.n, got, cut, tc.want, tc.cut)
		}
	}
}
