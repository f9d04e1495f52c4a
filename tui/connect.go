package tui

// The console is on screen before the model endpoint has answered: the
// start-up probe of its model list (up to five seconds against a server
// that accepts and never answers) runs in the background while the footer
// says "connecting to MODEL @ HOST…". A task given on the command line,
// or composed meanwhile, waits for it; a problem it finds opens the
// endpoint dialog, as a problem found before the console opened does.

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render"
)

// Connected is what the start-up probe found (Options.Connect).
type Connected struct {
	// Problem, when set, is why the endpoint did not answer: the
	// endpoint dialog opens with it, and the task keeps waiting.
	Problem string
	// Notes are more start-up notes (the model and window the server
	// reported, the guild chosen for it, a run resumed).
	Notes []string
	// Labels, when set, replace the console's labels (the guild changed
	// with the window).
	Labels *render.LabelSet
}

type connectedMsg struct{ c Connected }

func connectCmd(ctx context.Context, connect func(context.Context) Connected) tea.Cmd {
	return func() tea.Msg { return connectedMsg{connect(ctx)} }
}

// connected applies the probe's result: the footer's model and host, the
// new notes, and the waiting task started or the dialog opened.
func (m *Model) connected(c Connected) tea.Cmd {
	m.connecting = false
	if c.Labels != nil {
		m.opts.Labels = *c.Labels
		m.res = render.NewLabelResolver(*c.Labels, m.opts.Tier)
	}
	if len(c.Notes) > 0 {
		m.opts.Notes = append(append([]string(nil), m.opts.Notes...), c.Notes...)
		m.notesUnseen = true
	}
	cmds := []tea.Cmd{modelInfoCmd(m.sess), loadHistory(m.ws)}
	if c.Problem != "" {
		m.openEndpoint(c.Problem)
		return tea.Batch(cmds...)
	}
	if t := m.heldTask; t != nil {
		m.heldTask = nil
		cmds = append(cmds, m.submit(*t))
	}
	return tea.Batch(cmds...)
}

// connectingMeters is the footer while the probe runs.
func (m *Model) connectingMeters() []segment {
	to := render.SanitizeLine(m.model.Name)
	if h := render.SanitizeLine(m.model.Host); h != "" {
		if to != "" {
			to += " @ "
		}
		to += h
	}
	if to == "" {
		to = "the model endpoint"
	}
	return []segment{{"connecting to " + to + "…", 9}}
}
