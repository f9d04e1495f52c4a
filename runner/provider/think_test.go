package provider

import (
	"strings"
	"testing"
)

func TestThinkSplitter(t *testing.T) {
	cases := []struct {
		name               string
		deltas             []string
		fieldReasoning     bool
		content, reasoning string
	}{
		{"block then reply", []string{"<think>Plan it.</think>\n\nDone."}, false, "Done.", "Plan it."},
		{"tags split across deltas", []string{"<th", "ink>a", "b</th", "ink>", "\n", "\nHel", "lo"}, false, "Hello", "ab"},
		{"leading blanks", []string{"\n", " <think>x</think>y"}, false, "y", "x"},
		{"newlines inside the reply stay", []string{"<think>x</think>", "\n\nline 1", "\n", "line 2"}, false, "line 1\nline 2", "x"},
		{"no block", []string{"I <think> this tag is ", "fine."}, false, "I <think> this tag is fine.", ""},
		{"a tag-like start that is not one", []string{"<thi", "s is html>"}, false, "<this is html>", ""},
		{"unclosed block is reasoning", []string{"<think>still thinking", " about it </thi"}, false, "", "still thinking about it </thi"},
		{"reasoning in a field", []string{"<think>x</think>y"}, true, "<think>x</think>y", ""},
		{"only blanks", []string{"\n\n"}, false, "", ""},
		{"a close tag later in the reply stays", []string{"<think>a</think>b</think>c"}, false, "b</think>c", "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s thinkSplitter
			if c.fieldReasoning {
				s.disable()
			}
			var content, reasoning strings.Builder
			for _, d := range c.deltas {
				ct, r := s.feed(d)
				content.WriteString(ct)
				reasoning.WriteString(r)
			}
			ct, r := s.flush()
			content.WriteString(ct)
			reasoning.WriteString(r)
			if content.String() != c.content || reasoning.String() != c.reasoning {
				t.Errorf("content %q reasoning %q, want %q and %q", content.String(), reasoning.String(), c.content, c.reasoning)
			}
		})
	}
}
