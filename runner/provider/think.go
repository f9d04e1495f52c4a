package provider

import "strings"

// thinkSplitter moves a reply's leading <think>…</think> block from the
// content to the reasoning, across streamed deltas. Reasoning models served
// without a reasoning parser (llama.cpp with --reasoning-format none, vLLM
// without --reasoning-parser, some LM Studio setups) stream their thinking
// inline as content, wrapped in these tags; left there it would be shown
// as the reply and sent back as history every turn.
//
// Only a block that opens the reply counts, so a model that merely writes
// about a <think> tag keeps its text. A block that never closes (the reply
// was cut at max_tokens) is all reasoning. A reply whose reasoning already
// arrives in a field is left alone.
type thinkSplitter struct {
	state   thinkState
	pending string // held back: it may be the start of a tag
}

type thinkState uint8

const (
	thinkUndecided thinkState = iota // no non-blank content yet
	thinkInside                      // inside the opening block
	thinkAfter                       // just after the block: blanks are dropped
	thinkOff                         // content: passed through
)

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// disable stops splitting: the reply's reasoning arrives in a field.
func (s *thinkSplitter) disable() {
	if s.state == thinkUndecided {
		s.state = thinkOff
	}
}

// feed takes the next content delta and returns what of it is content and
// what is reasoning. Text that may be the start of a tag is held until the
// next delta or flush.
func (s *thinkSplitter) feed(delta string) (content, reasoning string) {
	text := s.pending + delta
	s.pending = ""
	for text != "" {
		switch s.state {
		case thinkOff:
			return content + text, reasoning
		case thinkUndecided:
			trimmed := strings.TrimLeft(text, " \t\r\n")
			switch {
			case trimmed == "":
				s.pending = text // blanks: wait for what follows
				return content, reasoning
			case strings.HasPrefix(trimmed, thinkOpen):
				s.state, text = thinkInside, trimmed[len(thinkOpen):]
			case strings.HasPrefix(thinkOpen, trimmed):
				s.pending = text // "<thi": wait for the rest
				return content, reasoning
			default:
				s.state = thinkOff
			}
		case thinkInside:
			if i := strings.Index(text, thinkClose); i >= 0 {
				reasoning += text[:i]
				s.state, text = thinkAfter, text[i+len(thinkClose):]
				continue
			}
			keep := partialSuffix(text, thinkClose)
			reasoning += text[:len(text)-keep]
			s.pending = text[len(text)-keep:]
			return content, reasoning
		case thinkAfter:
			// The blank lines between the block and the reply.
			if text = strings.TrimLeft(text, " \t\r\n"); text != "" {
				s.state = thinkOff
			}
		}
	}
	return content, reasoning
}

// flush returns what was held back when the reply ends.
func (s *thinkSplitter) flush() (content, reasoning string) {
	p := s.pending
	s.pending = ""
	switch s.state {
	case thinkInside:
		return "", p
	case thinkUndecided, thinkAfter:
		return strings.TrimLeft(p, " \t\r\n"), ""
	}
	return p, ""
}

// partialSuffix is the length of the longest suffix of text that is a
// proper prefix of tag.
func partialSuffix(text, tag string) int {
	for n := min(len(tag)-1, len(text)); n > 0; n-- {
		if strings.HasSuffix(text, tag[:n]) {
			return n
		}
	}
	return 0
}
