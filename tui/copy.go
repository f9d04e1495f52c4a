package tui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	osc52 "github.com/aymanbagabas/go-osc52/v2"
	tea "github.com/charmbracelet/bubbletea"
)

// Copying: y copies what has the focus (the result summary, the plan, a
// message, a tool result, a transcript, a diff). The program writes OSC 52
// to its own terminal on the operator's key only, which works over SSH and
// through tmux (set-clipboard on); the text is base64 inside the sequence,
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

// copyText copies text, described by what, in a command.
func (m *Model) copyText(what, text string) tea.Cmd {
	if text == "" {
		m.flashNote("Nothing to copy: " + what + " is empty.")
		return nil
	}
	out, mode, file, osc := m.opts.Output, m.opts.Clipboard, m.opts.ClipboardFile, !m.opts.NoOSC52
	return func() tea.Msg {
		return copiedMsg{note: deliverCopy(out, mode, file, osc, what, text)}
	}
}

// deliverCopy does the copy and says what happened.
func deliverCopy(out io.Writer, mode, file string, osc bool, what, text string) string {
	size := byteSize(len(text))
	why := ""
	switch {
	case mode == ClipboardFile:
		why = "as set"
	case !osc:
		why = "this terminal does not take OSC 52"
	case len(text) > osc52Max:
		why = "it is too large for OSC 52"
	default:
		if _, err := osc52.New(text).WriteTo(out); err != nil {
			why = "the terminal write failed"
		} else if mode != ClipboardBoth {
			return fmt.Sprintf("Copied %s (%s) to the clipboard with OSC 52.", what, size)
		}
	}
	if file == "" {
		return fmt.Sprintf("Could not copy %s: %s, and there is no clipboard file.", what, why)
	}
	if err := writeClipboardFile(file, text); err != nil {
		return fmt.Sprintf("Could not copy %s: %s, and %v.", what, why, err)
	}
	if why == "" {
		return fmt.Sprintf("Copied %s (%s) with OSC 52 and to %s.", what, size, file)
	}
	return fmt.Sprintf("Saved %s (%s) to %s: %s.", what, size, file, why)
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
