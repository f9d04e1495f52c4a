package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	osc52 "github.com/aymanbagabas/go-osc52/v2"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render"
)

// Copying: y copies what has the focus (the result summary, the plan, a
// message, a tool result, a transcript, a diff). The program writes OSC 52
// to its own terminal on the operator's key only, which works over SSH and
// through tmux (set-clipboard on: under tmux the copy asks tmux first,
// and when tmux would drop the sequence, says so and writes the file);
// the text is base64 inside the sequence,
// so nothing in it can act on the terminal. When OSC 52 cannot carry the
// text (no terminal, a terminal known not to take it, a text over
// osc52Max, a failed write, or the operator's choice), it is written to
// the clipboard file instead and the notice names the file.

// Clipboard modes (Options.Clipboard).
const (
	ClipboardOSC52 = "osc52" // OSC 52, the file only when OSC 52 cannot carry it (default)
	ClipboardFile  = "file"  // always the file
	ClipboardBoth  = "both"  // OSC 52 and the file
)

// osc52Max is the largest text sent with OSC 52; terminals cap the
// sequence (hterm near 100 kB, others silently), so larger texts go to the
// file.
const osc52Max = 256 << 10

type copiedMsg struct{ note string }

// copyText copies text, described by what, in a command: the text as the
// operator sees it, through the terminal sanitizer (render.Sanitize), so a
// sequence hidden in a tool's output (an OSC string, a bracketed-paste
// end) never reaches the clipboard, and with it a shell the operator
// pastes into.
func (m *Model) copyText(what, text string) tea.Cmd {
	return m.copyAs(what, render.Sanitize(text))
}

// copyRawText copies text as it was recorded, for the operator who asked
// for it (Y), with C0 and C1 controls other than tab and newline removed
// even so: the bodies of hidden sequences stay, as visible text, but no
// byte of the copy can act on a terminal or end a bracketed paste.
func (m *Model) copyRawText(what, text string) tea.Cmd {
	return m.copyAs(what+", raw (as recorded, controls removed)", stripControls(text))
}

func (m *Model) copyAs(what, text string) tea.Cmd {
	if text == "" {
		m.flashNote("Nothing to copy: " + what + " is empty.")
		return nil
	}
	dst := copyTarget{out: m.opts.Output, mode: m.opts.Clipboard, file: m.opts.ClipboardFile, osc: !m.opts.NoOSC52, tmux: m.opts.TmuxClipboard}
	ctx := m.ctx
	return func() tea.Msg {
		return copiedMsg{note: deliverCopy(ctx, dst, what, text)}
	}
}

// stripControls removes C0 controls other than tab and newline, DEL and
// C1 controls; invalid UTF-8 bytes become U+FFFD, so a lone 8-bit CSI
// cannot act either.
func stripControls(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return -1
		}
		return r
	}, s)
}

// copyTarget is where a copy goes.
type copyTarget struct {
	out  io.Writer // the terminal, for OSC 52
	mode string    // ClipboardOSC52, ClipboardFile or ClipboardBoth
	file string    // the clipboard file, "" for none
	osc  bool      // the terminal takes OSC 52
	// tmux, under tmux, reads its set-clipboard option.
	tmux func(context.Context) (string, error)
}

// tmuxBlocks says why tmux keeps an application's OSC 52 from the
// clipboard, or "" when it does not (or is not there, or cannot say).
// With set-clipboard external (tmux's default) or off, tmux drops the
// sequences applications write.
func tmuxBlocks(ctx context.Context, tmux func(context.Context) (string, error)) string {
	if tmux == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	v, err := tmux(ctx)
	if err != nil {
		return ""
	}
	switch v = strings.TrimSpace(v); v {
	case "external", "off":
		return "tmux's set-clipboard is " + v + ": the copy cannot reach your clipboard; set -g set-clipboard on, see docs/ssh.md"
	}
	return ""
}

// deliverCopy does the copy and says what happened.
func deliverCopy(ctx context.Context, dst copyTarget, what, text string) string {
	size := byteSize(len(text))
	why := ""
	switch {
	case dst.mode == ClipboardFile:
		why = "as set"
	case !dst.osc:
		why = "this terminal does not take OSC 52"
	case len(text) > osc52Max:
		why = "it is too large for OSC 52"
	default:
		if blocked := tmuxBlocks(ctx, dst.tmux); blocked != "" {
			if dst.file == "" {
				return fmt.Sprintf("Could not copy %s: %s; and there is no clipboard file.", what, blocked)
			}
			if err := writeClipboardFile(dst.file, text); err != nil {
				return fmt.Sprintf("Could not copy %s: %s; and %v.", what, blocked, err)
			}
			return fmt.Sprintf("%s; copied %s (%s) to %s instead.", capitalizeFirst(blocked), what, size, dst.file)
		}
		if _, err := osc52.New(text).WriteTo(dst.out); err != nil {
			why = "the terminal write failed"
		} else if dst.mode != ClipboardBoth {
			return fmt.Sprintf("Copied %s (%s) to the clipboard with OSC 52.", what, size)
		}
	}
	if dst.file == "" {
		return fmt.Sprintf("Could not copy %s: %s, and there is no clipboard file.", what, why)
	}
	if err := writeClipboardFile(dst.file, text); err != nil {
		return fmt.Sprintf("Could not copy %s: %s, and %v.", what, why, err)
	}
	if why == "" {
		return fmt.Sprintf("Copied %s (%s) with OSC 52 and to %s.", what, size, dst.file)
	}
	return fmt.Sprintf("Saved %s (%s) to %s: %s.", what, size, dst.file, why)
}

// capitalizeFirst starts s with a capital letter (ASCII).
func capitalizeFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// tmuxClipboardOption asks the tmux server this process runs under for
// its set-clipboard option ($TMUX names the server).
func tmuxClipboardOption(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "tmux", "show-options", "-gv", "set-clipboard").Output()
	if err != nil {
		return "", fmt.Errorf("tmux show-options -gv set-clipboard: %w", err)
	}
	return string(out), nil
}

// writeClipboardFile replaces the clipboard file, readable by the
// operator only.
func writeClipboardFile(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("the clipboard file's folder cannot be made: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".clipboard-*")
	if err != nil {
		return fmt.Errorf("the clipboard file cannot be written: %w", err)
	}
	_, werr := tmp.WriteString(text)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("the clipboard file cannot be written: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("the clipboard file cannot be written: %w", err)
	}
	return nil
}

func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// noOSC52Terms are TERM values of terminals that do not take OSC 52.
func noOSC52Term(term string) bool {
	switch term {
	case "", "dumb", "linux", "vt100", "vt102", "vt220", "cons25":
		return true
	}
	return false
}

// defaultClipboardFile is where copies go when OSC 52 cannot carry them:
// the operator's state folder, never the workspace.
func defaultClipboardFile(getenv func(string) string) string {
	dir := getenv("XDG_STATE_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "guildhall", "clipboard.txt")
}
