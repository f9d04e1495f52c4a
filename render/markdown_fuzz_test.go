package render

import "testing"

func FuzzRenderMarkdown(f *testing.F) {
	for _, tc := range hostileCorpus() {
		f.Add(tc.in, uint16(40))
	}
	f.Add(twoKBMessage(), uint16(80))
	f.Add("- [ ] task\n\n| a | b |\n|---|---|\n| `&#27;[2J` | <b>&#x1b;]0;t&#7;</b> |", uint16(3))
	// One renderer for the whole run, as the TUI uses it: a render must
	// not be able to poison later ones through the caches.
	r := NewMarkdownRenderer("dark")
	f.Fuzz(func(t *testing.T, text string, width uint16) {
		out := r.Render(text, int(width%200))
		if err := onlySGR(out); err != nil {
			t.Fatalf("Render(%q, %d): %v in %q", text, width%200, err, out)
		}
	})
}
