package runner

import (
	"os"

	"github.com/guildhall/guildhall/runner/event"
)

// Detached records in the live run's log that its console lost the
// terminal and the run goes on headless, with attach the command that
// reaches it again. It reports whether a live run took the note.
func (s *Session) Detached(attach string) bool {
	r, err := s.activeRun("")
	if err != nil || r.concluded.Load() {
		return false
	}
	r.emit(event.ConsoleDetached, event.ConsoleDetachedPayload{PID: os.Getpid(), Attach: attach})
	return true
}
