package shell

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/guildhall/guildhall/internal/runetext"
)

// Capture keeps the first and last limit bytes of a stream.
type Capture struct {
	mu    sync.Mutex
	limit int
	head  []byte
	tail  []byte
	total int64
}

// NewCapture returns a capture that keeps limit bytes at each end.
func NewCapture(limit int) *Capture { return &Capture{limit: limit} }

func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	rest := p
	if room := c.limit - len(c.head); room > 0 {
		n := min(room, len(rest))
		c.head = append(c.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		c.tail = append(c.tail, rest...)
		if len(c.tail) > 2*c.limit {
			c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.limit:]...)
		}
	}
	return len(p), nil
}

// Text renders the stream, keeping its start and end when it exceeds max
// characters, with a marker in between, and reports whether it cut.
func (c *Capture) Text(maxChars int) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := c.tail
	if len(tail) > c.limit {
		tail = tail[len(tail)-c.limit:]
	}
	dropped := c.total - int64(len(c.head)) - int64(len(tail))
	s := runetext.Decode(append(append([]byte{}, c.head...), tail...))
	n := utf8.RuneCountInString(s)
	if n <= maxChars && dropped == 0 {
		return s, false
	}
	half := maxChars / 2
	head, _ := runetext.Cut(s, half)
	rs := []rune(s)
	end := string(rs[max(len(rs)-half, 0):])
	return fmt.Sprintf("%s\n[… output truncated: %d bytes in all, only the first and last %d characters are shown …]\n%s",
		head, c.total, half, end), true
}
