package fakellm

// Replies that write their tool calls as text in the content, as small
// models and servers without a tool-aware chat template do: what the
// runner must either run or correct, and tell the operator about.

import (
	"encoding/json"
	"fmt"
)

// Text-call formats.
const (
	// Hermes is Hermes' and Qwen's <tool_call>{"name", "arguments"}</tool_call>.
	Hermes = "hermes"
	// Mistral is [TOOL_CALLS] [{"name", "arguments"}].
	Mistral = "mistral"
	// LlamaTag is Llama 3's <|python_tag|>{"name", "parameters"}<|eom_id|>.
	LlamaTag = "llama"
	// LlamaJSON is Llama 3's bare {"name", "parameters"} object.
	LlamaJSON = "llama_json"
	// FencedJSON is a lone ```json {"name", "arguments"} ``` block.
	FencedJSON = "json"
)

// TextFormats lists every format TextCall writes.
func TextFormats() []string { return []string{Hermes, Mistral, LlamaTag, LlamaJSON, FencedJSON} }

// TextCall is a reply whose content writes one call to name with args in
// format (one of TextFormats), and no tool call through the API.
func TextCall(format, name string, args any) Reply {
	a, _ := json.Marshal(args)
	call := func(key string) string {
		b, _ := json.Marshal(map[string]json.RawMessage{"name": json.RawMessage(fmt.Sprintf("%q", name)), key: a})
		return string(b)
	}
	var content string
	switch format {
	case Hermes:
		content = "I'll do that now.\n<tool_call>\n" + call("arguments") + "\n</tool_call>"
	case Mistral:
		content = "[TOOL_CALLS] [" + call("arguments") + "]"
	case LlamaTag:
		content = "<|python_tag|>" + call("parameters") + "<|eom_id|>"
	case LlamaJSON:
		content = call("parameters")
	case FencedJSON:
		content = "```json\n" + call("arguments") + "\n```"
	default:
		content = "unknown text-call format " + format
	}
	return Reply{Content: content}
}

// MarkupOnly is a reply made only of the stray tokens a tool-call model
// writes when the server gave it no tool-aware template: no words, no
// call.
func MarkupOnly() Reply { return Reply{Content: `""""<tool_call>"<tool_call><tool_call>" ""`} }
