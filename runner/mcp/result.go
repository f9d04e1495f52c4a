package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guildhall/guildhall/tools"
)

// convert turns a server's tools/call result into the tool result the
// model reads: the text of every content block (a placeholder for
// images, audio and binary resources, which a text model cannot read),
// or the structured content as JSON when there is no text, cleaned,
// capped and framed as the server's data. A result the server marks as an
// error is an error result carrying the same framed text.
func convert(server, tool string, res *sdk.CallToolResult) tools.Result {
	if res == nil {
		return tools.Fail(tools.KindError, fmt.Sprintf("MCP server %q sent no result for %s", server, tool))
	}
	var parts []string
	for _, c := range res.Content {
		if s := contentText(c); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := frame(server, tool, strings.Join(parts, "\n\n"))
	if res.IsError {
		return tools.Fail(tools.KindError, fmt.Sprintf("the MCP tool %s.%s reported an error:\n%s", server, tool, text))
	}
	return tools.OK(text)
}

// contentText is one content block as text.
func contentText(c sdk.Content) string {
	switch x := c.(type) {
	case *sdk.TextContent:
		return x.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[an image (%s, %d bytes) was left out: it cannot be shown as text]", cleanLine(x.MIMEType, 60), len(x.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio (%s, %d bytes) was left out: it cannot be shown as text]", cleanLine(x.MIMEType, 60), len(x.Data))
	case *sdk.ResourceLink:
		return fmt.Sprintf("[resource link: %s %s]", cleanLine(x.URI, 500), cleanLine(x.Name, 200))
	case *sdk.EmbeddedResource:
		if x.Resource == nil {
			return ""
		}
		if x.Resource.Text != "" {
			return fmt.Sprintf("[resource %s]\n%s", cleanLine(x.Resource.URI, 500), x.Resource.Text)
		}
		return fmt.Sprintf("[resource %s (%s, %d bytes) was left out: it is binary]", cleanLine(x.Resource.URI, 500), cleanLine(x.Resource.MIMEType, 60), len(x.Resource.Blob))
	}
	return ""
}
