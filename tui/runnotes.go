package tui

// The notes a run adds to the start-up notes: what it found out about the
// setup while it ran (the endpoint writes tool calls as text, and why).
// They belong to the run on screen, derived from its log, so a replay
// shows them as the live run did.

import (
	"fmt"

	"github.com/guildhall/guildhall/render"
)

// allNotes are the start-up notes, then the notes of the run on screen.
func (m *Model) allNotes() []string {
	if m.view == nil || len(m.view.notes) == 0 {
		return m.opts.Notes
	}
	return append(append([]string(nil), m.opts.Notes...), m.view.notes...)
}

// notesTitle heads the notes dialog.
func notesTitle(startup, all int) string {
	if all == startup {
		return fmt.Sprintf("Notes from start-up (%d)", all)
	}
	return fmt.Sprintf("Notes (%d)", all)
}

// runNoteBanner points to a run's note, quoting it.
func runNoteBanner(th theme, note string) string {
	return th.Render(toneBanner, "ℹ note (N): "+render.SanitizeLine(note))
}
