package runner

import (
	"fmt"
	"unicode/utf8"

	"github.com/guildhall/guildhall/runner/provider"
)

// charsPerToken is the fallback estimate when the endpoint reported no
// prompt size to calibrate against.
const charsPerToken = 4.0

// compactTargetFraction is the backstop's target, as a fraction of the
// window: headroom for estimator error and the completion reservation.
const compactTargetFraction = 0.7

// messageChars is what a message costs in characters: content, reasoning
// and tool-call names and arguments.
func messageChars(m provider.Message) int {
	n := utf8.RuneCountInString(m.Content) + utf8.RuneCountInString(m.Reasoning)
	for _, tc := range m.ToolCalls {
		n += len(tc.Name) + utf8.RuneCountInString(tc.Arguments) + 16
	}
	return n + 8 // role and framing
}

func historyChars(msgs []provider.Message) int {
	n := 0
	for _, m := range msgs {
		n += messageChars(m)
	}
	return n
}

// tokenRatio is tokens per character: calibrated from a reported prompt
// size when there is one, else the ~4 characters a token rule.
func tokenRatio(reportedTokens int, msgs []provider.Message) float64 {
	if reportedTokens > 0 {
		if c := historyChars(msgs); c > 0 {
			return float64(reportedTokens) / float64(c)
		}
	}
	return 1 / charsPerToken
}

func estimateTokens(msgs []provider.Message, ratio float64) int {
	return int(float64(historyChars(msgs))*ratio + 0.5)
}

// CompactStats describes what the backstop removed.
type CompactStats struct {
	Dropped           int
	TruncatedTool     int
	StrippedReasoning int
	Estimated         int
}

// compactHistory is the built-in backstop. It strips reasoning, drops the
// oldest turns after keep (the system prompt and task, messages
// 0..keep) while keeping the last turn and never separating an assistant
// tool call from its results, then truncates oversized tool results until
// the estimate is at most target tokens. fits is false when even the
// protected remainder cannot be brought under target.
func compactHistory(msgs []provider.Message, keep, target int, ratio float64) (out []provider.Message, st CompactStats, fits bool) {
	if keep >= len(msgs) {
		keep = len(msgs) - 1
	}
	// Sizes are computed once and the total kept up to date, so the cost
	// is linear in the conversation, not quadratic.
	limit := float64(target) / ratio
	sizes := make([]int, len(msgs))
	total := 0
	for i, m := range msgs {
		if m.Reasoning != "" {
			st.StrippedReasoning++
		}
		m.Reasoning = ""
		sizes[i] = messageChars(m)
		total += sizes[i]
	}
	units := turnUnits(msgs, keep+1)
	dropped := 0 // units dropped, oldest first; the last unit is kept
	for dropped < len(units)-1 && float64(total) > limit {
		u := units[dropped]
		for i := u[0]; i < u[1]; i++ {
			total -= sizes[i]
		}
		st.Dropped += u[1] - u[0]
		dropped++
	}
	out = make([]provider.Message, 0, len(msgs)-st.Dropped)
	out = append(out, msgs[:keep+1]...)
	outSizes := append([]int(nil), sizes[:keep+1]...)
	from := keep + 1
	if dropped > 0 {
		from = units[dropped-1][1]
	}
	out = append(out, msgs[from:]...)
	outSizes = append(outSizes, sizes[from:]...)
	for i := range out {
		out[i].Reasoning = ""
	}
	// Truncate the largest tool results until it fits.
	for float64(total) > limit {
		big, size := -1, 0
		for i := keep + 1; i < len(out); i++ {
			if out[i].Role == "tool" {
				if c := utf8.RuneCountInString(out[i].Content); c > size {
					big, size = i, c
				}
			}
		}
		if big < 0 || size <= 400 {
			break
		}
		keepChars := size / 2
		r := []rune(out[big].Content)
		out[big].Content = string(r[:keepChars]) + fmt.Sprintf("\n[truncated by the platform: %d of %d characters kept]", keepChars, size)
		st.TruncatedTool++
		n := messageChars(out[big])
		total += n - outSizes[big]
		outSizes[big] = n
	}
	st.Estimated = int(float64(total)*ratio + 0.5)
	return out, st, st.Estimated <= target
}

// turnUnits splits msgs[from:] into droppable units: an assistant message
// with the tool results that follow it, or a single other message. Each
// unit is a half-open [start, end) range of indexes into msgs.
func turnUnits(msgs []provider.Message, from int) [][2]int {
	var units [][2]int
	for i := from; i < len(msgs); {
		j := i + 1
		if msgs[i].Role == "assistant" {
			for j < len(msgs) && msgs[j].Role == "tool" {
				j++
			}
		}
		units = append(units, [2]int{i, j})
		i = j
	}
	return units
}
