package runner

import (
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
)

// Frame is one live role invocation on the depth-first stack. It holds the
// role's complete state, so the whole stack can be checkpointed and a run
// resumed from it.
type Frame struct {
	Role     string `json:"role"`
	RoleID   string `json:"roleId"`
	Depth    int    `json:"depth"`
	Task     string `json:"task"`
	Parent   string `json:"parent,omitempty"`
	ParentID string `json:"parentId,omitempty"`
	Effort   string `json:"effort,omitempty"`

	History []provider.Message `json:"history"`
	// TaskIndex is the index of the message holding this invocation's task
	// (1, or later for a continuation): compaction never drops it.
	TaskIndex int `json:"taskIndex"`
	// SentCount is how many history messages earlier llm_call events have
	// already logged, so each call logs only the delta.
	SentCount int `json:"sentCount"`

	ToolCalls        int `json:"toolCalls"`
	CompletionTokens int `json:"completionTokens"`
	PromptTokens     int `json:"promptTokens"`
	// PromptChars is the size in characters of the request PromptTokens
	// was reported for: the calibration for estimates after edits.
	PromptChars int `json:"promptChars,omitempty"`

	// Context management state.
	PressureFired      bool `json:"pressureFired,omitempty"`
	PressurePending    bool `json:"pressurePending,omitempty"`
	RejectedPending    int  `json:"rejectedPending,omitempty"` // prompt tokens of a parked rejection (-1: unknown)
	Rejections         int  `json:"rejections,omitempty"`
	CompactionAttempts int  `json:"compactionAttempts,omitempty"`
	LastEditTokens     int  `json:"lastEditTokens,omitempty"`

	// Loop-check watermarks.
	CheckedToolCalls int `json:"checkedToolCalls,omitempty"`
	CheckedTokens    int `json:"checkedTokens,omitempty"`
	// RepeatKey identifies the latest reply (its tool calls with their
	// arguments, or its text) and RepeatCount how many replies in a row
	// were the same (loopcheck.go).
	RepeatKey   string `json:"repeatKey,omitempty"`
	RepeatCount int    `json:"repeatCount,omitempty"`
	// TextCallCorrections counts the replies that wrote tool calls as text
	// that could not be run, each answered with a reminder (textturn.go).
	TextCallCorrections int `json:"textCallCorrections,omitempty"`
	// TextCallUnheeded is set by a reminder and cleared by the next turn
	// that makes tool calls: a reply in words while it is set is not a
	// success, as the calls it described were never run.
	TextCallUnheeded bool `json:"textCallUnheeded,omitempty"`

	// Pending is the turn in progress: the tool calls of the last reply
	// and how far dispatch has got.
	Pending *PendingTurn `json:"pending,omitempty"`
	// Marks set by an earlier routing, drained at the next safe point.
	Marks []Mark `json:"marks,omitempty"`
}

// ratio is the frame's tokens-per-character calibration.
func (f *Frame) ratio() float64 {
	if f.PromptTokens > 0 && f.PromptChars > 0 {
		return float64(f.PromptTokens) / float64(f.PromptChars)
	}
	return 1 / charsPerToken
}

// PendingTurn is a reply whose tool calls are being dispatched.
type PendingTurn struct {
	Calls         []provider.ToolCall `json:"calls"`
	Next          int                 `json:"next"`
	AssistantText string              `json:"assistantText,omitempty"`
	// Started is set while the call at Next, one that changes something,
	// runs: a resume that finds it set does not run the call again
	// (checkpoint_dispatch.go).
	Started bool `json:"started,omitempty"`
	// AsText is set when the model wrote the calls as text: their format.
	AsText string `json:"asText,omitempty"`
	// ChildCard is the card of the agent call at Next once its child has
	// finished, so a resume delivers it instead of re-running the child.
	ChildCard *event.Card `json:"childCard,omitempty"`
	// Child names the instance the agent call at Next started.
	Child *ChildRef `json:"child,omitempty"`
}

// ChildRef identifies a child instance.
type ChildRef struct {
	Role   string `json:"role"`
	RoleID string `json:"roleId"`
	Depth  int    `json:"depth"`
}

// Mark is a pending routing effect on a frame, applied at its safe point.
type Mark struct {
	// Kind is "abort" (finish with Error) or "message" (append a user
	// message).
	Kind    string           `json:"kind"`
	Message string           `json:"message,omitempty"`
	Error   *event.ErrorInfo `json:"error,omitempty"`
}
