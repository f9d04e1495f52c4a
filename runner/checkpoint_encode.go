package runner

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/guildhall/guildhall/runner/provider"
)

// checkpointEncoder encodes state.json, reusing each history message's JSON
// from the previous checkpoint while the message is unchanged. A history
// mostly grows by a message or two per turn, so encoding it whole at every
// turn made each checkpoint cost JSON work proportional to the history.
//
// The output is byte for byte json.Marshal(cp): the stack and each frame's
// history are encoded as null and the arrays spliced in their place.
type checkpointEncoder struct {
	frames map[*Frame][]encodedMessage
	// size is the last output's length: the next one is about as long, so
	// one allocation usually holds it.
	size int
}

type encodedMessage struct {
	msg  provider.Message
	json []byte
}

var (
	nullStack   = []byte(`"stack":null`)
	nullHistory = []byte(`"history":null`)
)

func (c *checkpointEncoder) encode(cp Checkpoint) ([]byte, error) {
	stack := cp.Stack
	cp.Stack = nil
	head, err := json.Marshal(cp)
	if err != nil {
		return nil, err
	}
	// Only numbers and a run id precede the key, so its first occurrence is
	// the key itself.
	at := bytes.Index(head, nullStack)
	if at < 0 {
		return nil, fmt.Errorf("checkpoint: no stack key in %.80s", head)
	}
	out := make([]byte, 0, max(len(head), c.size)+4096)
	out = append(out, head[:at]...)
	out = append(out, `"stack":`...)
	if stack == nil {
		out = append(out, "null"...)
	} else {
		out = append(out, '[')
		for i, f := range stack {
			if i > 0 {
				out = append(out, ',')
			}
			if out, err = c.appendFrame(out, f); err != nil {
				return nil, err
			}
		}
		out = append(out, ']')
	}
	out = append(out, head[at+len(nullStack):]...)
	c.forget(stack)
	c.size = len(out)
	return out, nil
}

// appendFrame appends f's JSON. Inside a JSON string every quote is
// escaped, so `"history":null` first occurs as the history key.
func (c *checkpointEncoder) appendFrame(out []byte, f *Frame) ([]byte, error) {
	bare := *f
	bare.History = nil
	b, err := json.Marshal(&bare)
	if err != nil {
		return nil, err
	}
	at := bytes.Index(b, nullHistory)
	if at < 0 {
		return nil, fmt.Errorf("checkpoint: no history key in frame %s", f.RoleID)
	}
	out = append(out, b[:at]...)
	out = append(out, `"history":`...)
	if f.History == nil {
		out = append(out, "null"...)
	} else {
		cached := c.frames[f]
		out = append(out, '[')
		for i, m := range f.History {
			if i > 0 {
				out = append(out, ',')
			}
			if i >= len(cached) || !sameMessage(cached[i].msg, m) {
				enc, err := json.Marshal(m)
				if err != nil {
					return nil, err
				}
				cached = append(cached[:i], encodedMessage{msg: m, json: enc})
			}
			out = append(out, cached[i].json...)
		}
		out = append(out, ']')
		if c.frames == nil {
			c.frames = map[*Frame][]encodedMessage{}
		}
		c.frames[f] = cached[:len(f.History)]
	}
	return append(out, b[at+len(nullHistory):]...), nil
}

// forget drops the cache of frames no longer on the stack.
func (c *checkpointEncoder) forget(stack []*Frame) {
	for f := range c.frames {
		live := false
		for _, s := range stack {
			live = live || s == f
		}
		if !live {
			delete(c.frames, f)
		}
	}
}

// sameMessage reports whether two messages are equal. Strings that share
// their bytes compare in constant time, which is the common case: the
// cached message is a copy of the one still in the history.
func sameMessage(a, b provider.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.Reasoning != b.Reasoning ||
		a.ToolCallID != b.ToolCallID || a.ToolName != b.ToolName || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		if a.ToolCalls[i] != b.ToolCalls[i] {
			return false
		}
	}
	return true
}
