// Command server is the MCP test server as a stdio program (see
// internal/mcptest).
package main

import "github.com/guildhall/guildhall/internal/mcptest"

func main() { mcptest.Main() }
