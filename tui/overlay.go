package tui

// overlayKind names what sits over the screen: a dialog, a document or a
// picker. Keys go to it and the view draws it, so both take it from
// topOverlay, and the order in which one covers another is written once.
type overlayKind int

const (
	overlayNone overlayKind = iota
	overlayConfirm
	overlayRevert
	overlayHelp
	overlayEndpoint
	overlayNotes
	overlayQueueAnswer
	overlayQueueEdit
	overlayQuestion
	overlayInterrupt
	overlayTranscript
	overlayInspector
	overlayDrawer
	overlayAnswer
	overlayDiff
	overlayResult
	overlayPlan
	overlayPicker
)

// topOverlay is the overlay on top: the first of them that is open, in the
// order that decides which covers which.
func (m *Model) topOverlay() overlayKind {
	switch {
	case m.confirm != nil:
		return overlayConfirm
	case m.revert != nil:
		return overlayRevert
	case m.help:
		return overlayHelp
	case m.endpoint != nil:
		return overlayEndpoint
	case m.notes != nil:
		return overlayNotes
	case m.queue.answer != nil:
		return overlayQueueAnswer
	case m.queue.edit != nil:
		return overlayQueueEdit
	case m.questionVisible():
		return overlayQuestion
	case m.interrupt != nil:
		return overlayInterrupt
	case m.transcript != nil:
		return overlayTranscript
	case m.inspector != nil:
		return overlayInspector
	case m.drawer != nil:
		return overlayDrawer
	case m.answerCard != nil:
		return overlayAnswer
	case m.diff != nil:
		return overlayDiff
	case m.showResult && m.view != nil && m.view.card != nil:
		return overlayResult
	case m.plan != nil:
		return overlayPlan
	case m.screen == screenCompose && m.compose.picking:
		return overlayPicker
	}
	return overlayNone
}
