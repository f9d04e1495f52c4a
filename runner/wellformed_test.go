package runner

import (
	"fmt"

	"github.com/guildhall/guildhall/runner/provider"
)

// wellFormed reports whether every tool message answers a tool call of the
// assistant message its unit starts with, and every such call is answered.
// It checks what strict OpenAI-compatible endpoints check.
func wellFormed(msgs []provider.Message) error {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == "tool" {
			return fmt.Errorf("message %d is a tool result with no tool call before it", i)
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		want := map[string]bool{}
		for _, tc := range m.ToolCalls {
			want[tc.ID] = true
		}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == "tool"; j++ {
			if !want[msgs[j].ToolCallID] {
				return fmt.Errorf("message %d answers call %q, which message %d did not make", j, msgs[j].ToolCallID, i)
			}
			delete(want, msgs[j].ToolCallID)
		}
		if len(want) > 0 && j < len(msgs) {
			return fmt.Errorf("message %d has tool calls without results", i)
		}
		i = j - 1
	}
	return nil
}
