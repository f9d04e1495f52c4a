// Package provider speaks to language-model endpoints. A Provider turns one
// conversation into one streamed model reply; the runner owns everything else
// (history, retries policy decisions, context management).
//
// Implementations: OpenAI Chat Completions and the Responses API (any
// OpenAI-compatible server: llama.cpp, Ollama, vLLM, LM Studio, OpenRouter),
// Anthropic Messages, and the scripted model that drives the offline demo.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Message is one conversation message in the runner's neutral form.
type Message struct {
	Role       string     `json:"role"` // system | user | assistant | tool
	Content    string     `json:"content"`
	Reasoning  string     `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	// ToolName is set on tool messages (Anthropic and Responses need it only
	// indirectly, but transcripts read better with it).
	ToolName string `json:"toolName,omitempty"`
}

// ToolCall is a call the model asked for. Arguments is the raw JSON string.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec is a tool offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call.
type Request struct {
	Model       string
	Messages    []Message
	Tools       []ToolSpec
	Temperature *float64
	MaxTokens   int
	// IncludeReasoning sends assistant reasoning back (the role's
	// includeReasoning flag). When false, Reasoning fields are not sent.
	IncludeReasoning bool
	// Role and RoleID identify the caller. Network providers ignore them;
	// the scripted model uses them to pick its next reply.
	Role   string
	RoleID string
}

// LastUserContent is the content of the request's last user message, ""
// when it has none. Stand-in summarisers (the scripted model's, the
// Foundry's) answer from it.
func (r Request) LastUserContent() string {
	last := ""
	for _, m := range r.Messages {
		if m.Role == "user" {
			last = m.Content
		}
	}
	return last
}

// Usage is the endpoint-reported token usage.
type Usage struct {
	PromptTokens       int
	CompletionTokens   int
	TotalTokens        int
	CachedPromptTokens int
	// EvaluatedPromptTokens is the part of the prompt the server computed
	// afresh (llama.cpp's timings.prompt_n; for OpenAI and Anthropic the
	// prompt less its cached part), and PromptCacheReported says the
	// endpoint reported the split at all: without it neither count is
	// known, and both are 0.
	EvaluatedPromptTokens int
	PromptCacheReported   bool
	// TokensPerSecond is the reply's generation speed as the server
	// measured it (llama.cpp's timings.predicted_per_second); 0 when it
	// did not say.
	TokensPerSecond float64
}

// Response is the assembled reply of one call.
type Response struct {
	Content      string
	Reasoning    string
	ToolCalls    []ToolCall
	Usage        Usage
	FinishReason string // stop, length, tool_calls, content_filter, or "" when absent
	Model        string
}

// Delta is a streamed fragment of the reply.
type Delta struct {
	Content   string
	Reasoning string
}

// Provider makes streamed model calls.
type Provider interface {
	// Complete sends req and returns the assembled reply. onDelta, when not
	// nil, is called with each streamed fragment as it arrives.
	Complete(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error)
	// Name is a short identifier for logs ("openai", "anthropic", ...).
	Name() string
}

// ModelInfo is what a server reports about a model.
type ModelInfo struct {
	ID            string
	ContextWindow int // 0 when the server does not say
}

// Prober is implemented by providers that can list models (GET /models).
type Prober interface {
	Probe(ctx context.Context) ([]ModelInfo, error)
}

// Category classifies a failed call for retries, health and suspension.
type Category string

const (
	CategoryAuth          Category = "auth"
	CategoryRateLimit     Category = "rate_limit"
	CategoryServer        Category = "server"
	CategoryTimeout       Category = "timeout"
	CategoryCutStream     Category = "cut_stream"
	CategoryMalformed     Category = "malformed"
	CategoryContextLength Category = "context_length"
	CategoryNetwork       Category = "network"
	CategoryBadRequest    Category = "bad_request"
)

// Error is a classified provider failure. Body is a bounded copy of the
// provider's response body (at most MaxBodyBytes): diagnostic data only.
type Error struct {
	Category   Category
	StatusCode int
	Body       string
	// RetryAfterSeconds is the server's Retry-After, when given.
	RetryAfterSeconds float64
	// PromptTokens is the prompt size a context-length rejection reported
	// (0 when the server did not say).
	PromptTokens int
	Err          error
}

// MaxBodyBytes bounds the copy of a provider body kept on an Error.
const MaxBodyBytes = 2048

func (e *Error) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("provider %s (HTTP %d): %v", e.Category, e.StatusCode, e.Err)
	}
	return fmt.Sprintf("provider %s: %v", e.Category, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether retrying the same request can help.
func (e *Error) Retryable() bool {
	switch e.Category {
	case CategoryRateLimit, CategoryServer, CategoryTimeout, CategoryCutStream, CategoryMalformed, CategoryNetwork:
		return true
	}
	return false
}

// AsError returns err as a classified *Error, or nil.
func AsError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}
