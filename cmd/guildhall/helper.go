package main

import (
	"github.com/guildhall/guildhall/tools/sandbox"
	"github.com/guildhall/guildhall/tools/shell"
)

// beforeCLI runs before any command-line parsing. Started by the sandbox
// as its helper (sandbox.HelperCommand), the binary serves commands inside
// the sandbox and exits. Otherwise it makes this process a child
// subreaper, so that a process a tool call started and that escaped its
// session (setsid -f, a double fork) is reparented here, where the end of
// the call kills it, rather than to init. Only the real binary does this;
// library code and tests never change the process like that.
func beforeCLI() {
	sandbox.RunHelperIfAsked()
	_ = shell.EnableSubreaper()
}
