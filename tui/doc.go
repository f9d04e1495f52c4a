// Package tui is Guildhall's terminal console: a Bubble Tea program with a
// top bar and its screens (Watch, History, Compose, and Queue when the
// console has the task queue), the task-identity header and task-history
// drawer, the flow graph and
// the windowed sequence view of a run, the inspector and transcript, the
// plan disclosure, and the question, result, interrupt and confirmation
// modals.
//
// The program is a client of a runner session reached through the narrow
// Session interface, so a remote implementation can stand in for the
// in-process one. One top-level Model owns routing, focus, layout and
// overlays; the sub-components are plain structs with render methods. Update
// does no I/O: reading logs, meta.json and plans, and every call into the
// session, happen in tea.Cmds that return messages. Every string that did
// not come from this program goes through render.Sanitize, SanitizeLine or
// the MarkdownRenderer before it reaches the screen; display labels come
// from the guild only.
package tui
