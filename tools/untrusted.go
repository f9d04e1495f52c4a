package tools

// CleanText makes untrusted text from outside Guildhall (a web page, an
// MCP server's descriptions and output) safe to hand to the model, a log
// or a view: valid UTF-8, no terminal control, no bidirectional controls,
// no character reference that would decode to either (see cleanWebText).
func CleanText(s string) string { return cleanWebText(s) }

// CapText cuts s to n characters, appending a marker that says how many
// were left out; cut reports whether it did.
func CapText(s string, n int) (capped string, cut bool) { return capChars(s, n) }

// NewMarker draws a random marker for the BEGIN and END lines that frame
// untrusted text: the text cannot know it, so it cannot forge an END line.
func NewMarker() string { return "GH-" + randomHex(12) }
