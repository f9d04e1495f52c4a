package tui

import (
	"io"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// Alerts: when a question opens, a run ends or a run is suspended while
// the console is open (runner.AlertOf), the console rings the terminal
// (BEL: tmux and screen turn it into the window's bell flag, a terminal
// into its bell or an urgent hint) and, where Alerts.Desktop says so,
// sends a desktop notification, OSC 9 (iTerm2) or OSC 777 (WezTerm,
// Ghostty, foot). The notification's text is fixed copy and the run id,
// never anything the run wrote.
//
// The sequence is written from a command, like OSC 52 copies, to the
// terminal the program draws on: Bubble Tea writes each frame, and each
// control sequence, in one Write, and an *os.File serialises its writers,
// so the few bytes land between two writes of the renderer, never inside
// one. An alert adds nothing to the frame.

// Alerts says how the console tells of an alert.
type Alerts struct {
	// Bell rings the terminal.
	Bell bool
	// Desktop is runner.DesktopOSC9, runner.DesktopOSC777, or "" for none.
	Desktop string
}

// DesktopFor resolves the notify.desktop setting for the terminal the
// environment describes: auto picks OSC 9 or OSC 777 only on terminals
// known to show them (a terminal that does not know a sequence may print
// it), and nothing under tmux or screen, which keep them from the
// terminal outside.
func DesktopFor(setting string, getenv func(string) string) string {
	switch setting {
	case runner.DesktopOSC9, runner.DesktopOSC777:
		return setting
	case runner.DesktopOff:
		return ""
	}
	term, prog := getenv("TERM"), getenv("TERM_PROGRAM")
	switch {
	case getenv("TMUX") != "" || getenv("STY") != "" || strings.HasPrefix(term, "screen") || strings.HasPrefix(term, "tmux"):
		return ""
	case prog == "iTerm.app" || getenv("LC_TERMINAL") == "iTerm2":
		// LC_TERMINAL is how iTerm2 names itself over SSH (ssh sends
		// LC_* by default).
		return runner.DesktopOSC9
	case prog == "WezTerm" || term == "wezterm",
		prog == "ghostty" || term == "xterm-ghostty",
		term == "foot" || strings.HasPrefix(term, "foot-"):
		return runner.DesktopOSC777
	}
	return ""
}

// alertCmd rings for an event of the live run that calls for it. The
// backlog the console opened on is history, not news.
func (m *Model) alertCmd(e event.Event) tea.Cmd {
	a := m.opts.Alerts
	if !m.started || m.live == nil || (!a.Bell && a.Desktop == "") {
		return nil
	}
	alert, ok := runner.AlertOf(m.live.id, e)
	if !ok {
		return nil
	}
	seq := alertSequence(a, alert)
	out := m.opts.Output
	return func() tea.Msg {
		_, _ = io.WriteString(out, seq)
		return nil
	}
}

// alertSequence is what an alert writes to the terminal.
func alertSequence(a Alerts, alert runner.Alert) string {
	var b strings.Builder
	if a.Bell {
		b.WriteByte('\a')
	}
	body := alertText(alert)
	switch a.Desktop {
	case runner.DesktopOSC9:
		b.WriteString("\x1b]9;" + body + "\x1b\\")
	case runner.DesktopOSC777:
		b.WriteString("\x1b]777;notify;Guildhall;" + body + "\x1b\\")
	}
	return b.String()
}

// alertText is a notification's fixed text: no ';' (OSC 777 separates
// its fields with it) and no control character, and a run id only in its
// canonical form.
func alertText(a runner.Alert) string {
	run := "the run"
	if store.ValidRunID(a.RunID) {
		run = a.RunID
	}
	switch a.Kind {
	case runner.AlertQuestion:
		return "A question is waiting for you in " + run
	case runner.AlertSuspended:
		return run + " is suspended: its model endpoint is not answering"
	case store.StatusSuccess:
		return run + " finished: success"
	case store.StatusNeedsClarification:
		return run + " ended: it needs more information from you"
	case store.StatusInterrupted:
		return run + " ended: interrupted"
	}
	return run + " ended with an error"
}
