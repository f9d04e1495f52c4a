package tui

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
)

// The live pane shows the active role's reply as it streams, rendered as
// the Markdown it is, through the same safe path as all model prose
// (render.MarkdownRenderer). It is incremental: the reply is cut into
// finished blocks (ended by a blank line outside a fenced code block) and
// an unfinished tail. A finished block is rendered once per width; a delta
// re-renders the tail only, which is bounded by maxTail. Only the blocks
// the pane's few rows need are rendered at all, so a frame costs the
// same after ten bytes or ten megabytes.

const (
	maxTail   = 8 << 10 // the tail is cut (at a line, else a rune) beyond this
	maxBlocks = 64      // finished blocks kept: far more than a pane shows
	keepRaw   = 1 << 20 // the reply's latest bytes kept for y
)

// stream is the active role's reply as it streams in.
type stream struct {
	roleID string
	// raw is the reply's latest keepRaw bytes, for copying.
	raw []byte
	// blocks are the finished blocks, oldest first (the oldest dropped
	// past maxBlocks); tail is the text after them.
	blocks []string
	tail   []byte
	// scan is how far the tail has been scanned for block ends; fence is
	// the fence open at scan ("" outside one), lineStart where the line
	// being scanned starts.
	scan, lineStart int
	fence           string
	// open is the fence the tail starts inside of, when a long code block
	// was cut: the tail is rendered with it reopened.
	open string
	// keepAll keeps every finished block (splitting a whole message)
	// rather than the latest maxBlocks.
	keepAll bool

	// The rendered pane, made in Update by prepare.
	width, height int
	rendered      map[int][]string // block index (since the start) → lines, at width
	first         int              // index of blocks[0] since the start
	tailLen       int              // tail length the tail lines were rendered for
	tailLines     []string
	lines         []string // the pane's rows
}

// add appends streamed text.
func (s *stream) add(text string) {
	s.raw = append(s.raw, text...)
	if n := len(s.raw); n > 2*keepRaw {
		s.raw = append([]byte(nil), s.raw[n-keepRaw:]...)
	}
	s.tail = append(s.tail, text...)
	s.cut()
}

// cut moves finished blocks out of the tail.
func (s *stream) cut() {
	for s.scan < len(s.tail) {
		i := bytes.IndexByte(s.tail[s.scan:], '\n')
		if i < 0 {
			s.scan = len(s.tail)
			break
		}
		end := s.scan + i // the newline ending the line [lineStart, end)
		line := string(s.tail[s.lineStart:end])
		s.scan, s.lineStart = end+1, end+1
		if f := fenceOf(line); f != "" {
			switch {
			case s.fence == "":
				s.fence = f
			case closes(line, s.fence):
				s.fence = ""
			}
			continue
		}
		if s.fence == "" && strings.TrimSpace(line) == "" && len(bytes.TrimSpace(s.tail[:end])) > 0 {
			s.finish(end + 1)
		}
	}
	if len(s.tail) > maxTail {
		s.force()
	}
}

// finish makes tail[:n] a finished block.
func (s *stream) finish(n int) {
	block := string(s.tail[:n])
	if s.open != "" {
		block = s.open + "\n" + block
		s.open = ""
	}
	s.blocks = append(s.blocks, block)
	if len(s.blocks) > maxBlocks && !s.keepAll {
		drop := len(s.blocks) - maxBlocks
		s.blocks = append([]string(nil), s.blocks[drop:]...)
		s.first += drop
	}
	s.tail = append([]byte(nil), s.tail[n:]...)
	s.scan -= n
	s.lineStart -= n
}

// force cuts an over-long tail: at its last line break, else at a rune.
// Inside a fenced block, the cut closes the fence in the finished part and
// reopens it in the tail.
func (s *stream) force() {
	n := bytes.LastIndexByte(s.tail[:maxTail], '\n') + 1
	if n <= 0 {
		n = maxTail
		for n > 0 && !utf8.RuneStart(s.tail[n]) {
			n--
		}
	}
	fence := s.fenceAt(n)
	s.finish(n)
	if fence != "" {
		s.blocks[len(s.blocks)-1] += "\n" + fence + "\n"
		s.open = fence
	}
}

// fenceAt is the fence open at byte n of the tail ("" for none).
func (s *stream) fenceAt(n int) string {
	open := s.open
	for _, line := range strings.Split(string(s.tail[:n]), "\n") {
		if f := fenceOf(line); f != "" {
			if open == "" {
				open = f
			} else if closes(line, open) {
				open = ""
			}
		}
	}
	return open
}

// fenceOf is the fence a line opens or closes (``` or ~~~, three or more,
// indented at most three spaces), or "".
func fenceOf(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 {
		return ""
	}
	c := t[0]
	if c != '`' && c != '~' {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == c {
		n++
	}
	if n < 3 {
		return ""
	}
	return t[:n]
}

// splitMarkdown cuts a long Markdown text into pieces of about max bytes
// at block boundaries (a blank line outside a fence; a long fenced block
// closed and reopened), each of which renders on its own as the part of
// the whole it is.
func splitMarkdown(text string, max int) []string {
	s := stream{keepAll: true}
	s.add(text)
	blocks := append(s.blocks, "")
	if len(s.tail) > 0 {
		tail := string(s.tail)
		if s.open != "" {
			tail = s.open + "\n" + tail
		}
		blocks[len(blocks)-1] = tail
	} else {
		blocks = blocks[:len(blocks)-1]
	}
	var out []string
	var cur strings.Builder
	for _, b := range blocks {
		if cur.Len() > 0 && cur.Len()+len(b) > max {
			out = append(out, cur.String())
			cur.Reset()
		}
		cur.WriteString(b)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// splitPlain cuts a long plain text into pieces of about max bytes at
// line breaks (at a rune inside a line longer than that).
func splitPlain(text string, max int) []string {
	var out []string
	for len(text) > max {
		n := strings.LastIndexByte(text[:max], '\n') + 1
		if n <= 0 {
			n = max
			for n > 0 && !utf8.RuneStart(text[n]) {
				n--
			}
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return append(out, text)
}

// closes reports whether a line closes the fence open: the same
// character, at least as many, and nothing else.
func closes(line, open string) bool {
	t := strings.TrimSpace(line)
	f := fenceOf(line)
	return f != "" && f[0] == open[0] && len(f) >= len(open) && len(f) == len(t)
}

// prepare renders the pane's rows for width × height: the tail, and the
// finished blocks before it as far as the rows reach. It runs in Update.
func (s *stream) prepare(md *render.MarkdownRenderer, width, height int) {
	if width != s.width || s.rendered == nil {
		s.width, s.rendered, s.tailLen, s.tailLines = width, map[int][]string{}, -1, nil
	}
	s.height = height
	if s.tailLen != len(s.tail) {
		s.tailLen = len(s.tail)
		s.tailLines = nil
		if t := string(s.tail); strings.TrimSpace(t) != "" {
			if s.open != "" {
				t = s.open + "\n" + t
			}
			s.tailLines = mdLines(md, t, width)
		}
	}
	lines := s.tailLines
	for i := len(s.blocks) - 1; i >= 0 && len(lines) < height; i-- {
		idx := s.first + i
		bl, ok := s.rendered[idx]
		if !ok {
			bl = mdLines(md, s.blocks[i], width)
			s.rendered[idx] = bl
		}
		lines = append(append([]string(nil), bl...), lines...)
	}
	if len(lines) > height {
		lines = lines[len(lines)-height:]
	}
	s.lines = lines
	// Blocks scrolled out of the pane are not kept rendered.
	for idx := range s.rendered {
		if idx < s.first {
			delete(s.rendered, idx)
		}
	}
}

// mdLines renders Markdown to lines, blank lines at the ends dropped.
func mdLines(md *render.MarkdownRenderer, text string, width int) []string {
	out := strings.Split(strings.Trim(md.Render(text, width), "\n"), "\n")
	for len(out) > 0 && strings.TrimSpace(ansi.Strip(out[0])) == "" {
		out = out[1:]
	}
	for len(out) > 0 && strings.TrimSpace(ansi.Strip(out[len(out)-1])) == "" {
		out = out[:len(out)-1]
	}
	return out
}
