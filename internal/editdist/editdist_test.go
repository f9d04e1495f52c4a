package editdist

import "testing"

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{"systemPrompt", "sytemPrompt", 1},
		{"ab", "ba", 2}, // no transpositions
		{"same", "same", 0},
	}
	for _, tc := range tests {
		if got := Levenshtein([]byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	// Runes count a letter once; bytes count its encoding.
	if got := Levenshtein([]rune("café"), []rune("cafe")); got != 1 {
		t.Errorf("runes: café → cafe = %d, want 1", got)
	}
	if got := Levenshtein([]byte("café"), []byte("cafe")); got != 2 {
		t.Errorf("bytes: café → cafe = %d, want 2", got)
	}
}
