package tui

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
)

// Reverting a run's edits from the console: u on a file in "what changed"
// reverts that file, U on the result card the whole run. The console works
// out what the revert does (runner.PlanRevert, in a command) and shows it
// before anything changes: the files and what happens to each, those that
// cannot be reverted and why, and each file changed after the run ended
// with that change. y reverts; a file changed after the run is reverted
// only after f and a second y, which discards that change. The revert runs
// in a command too (runner.ApplyRevert), on this host's workspace, as
// History and replays read it.

// revertState is the open revert dialog.
type revertState struct {
	runID string
	paths []string // nil: every file of the run
	plan  *runner.RevertPlan
	err   error
	// force is set once f asked to discard the later changes: the dialog
	// then asks again.
	force   bool
	running bool
	result  *runner.RevertResult
	scroll  int
}

type revertPlanMsg struct {
	runID string
	plan  *runner.RevertPlan
	err   error
}

type revertDoneMsg struct {
	runID string
	res   runner.RevertResult
	err   error
}

// openRevert plans the revert of paths (all when nil) of the run on screen.
func (m *Model) openRevert(paths []string) tea.Cmd {
	if m.view == nil || m.view.id == "" {
		return nil
	}
	if m.runLive() {
		m.flashNote("A run is live: revert once it has ended.")
		return nil
	}
	id, ws := m.view.id, m.ws
	m.revert = &revertState{runID: id, paths: paths}
	return func() tea.Msg {
		plan, err := runner.PlanRevert(ws, ws.Dir, id, paths)
		return revertPlanMsg{runID: id, plan: plan, err: err}
	}
}

// applyRevertMsg takes a plan or a revert's outcome.
func (m *Model) applyRevertMsg(msg tea.Msg) tea.Cmd {
	st := m.revert
	switch msg := msg.(type) {
	case revertPlanMsg:
		if st != nil && st.runID == msg.runID && st.plan == nil {
			st.plan, st.err = msg.plan, msg.err
		}
	case revertDoneMsg:
		if st != nil && st.runID == msg.runID {
			st.running, st.result, st.err = false, &msg.res, msg.err
		}
		// What changed is different now: read it again.
		if m.view != nil && m.view.id == msg.runID {
			m.diff = nil
			m.changes = &changesState{runID: msg.runID}
			return changesCmd(m.ctx, m.sess, msg.runID)
		}
	}
	return nil
}

func (m *Model) keyRevert(key string) tea.Cmd {
	st := m.revert
	switch key {
	case "esc", "n", "q":
		if !st.running {
			if st.force && key == "n" {
				st.force = false
				return nil
			}
			m.revert = nil
		}
		return nil
	case "up", "k":
		st.scroll = max(0, st.scroll-1)
	case "down", "j":
		st.scroll++
	case "pgup":
		st.scroll = max(0, st.scroll-m.overlayBodyH())
	case "pgdown", " ":
		st.scroll += m.overlayBodyH()
	case "f":
		if st.plan != nil && st.result == nil && len(st.plan.Later()) > 0 {
			st.force, st.scroll = true, 0
		}
	case "y", "enter":
		if st.plan == nil || st.result != nil || st.running || len(st.plan.Revertable(st.force)) == 0 {
			if st.result != nil {
				m.revert = nil
			}
			return nil
		}
		st.running = true
		ws, plan, force, id := m.ws, st.plan, st.force, st.runID
		return func() tea.Msg {
			res, err := runner.ApplyRevert(ws, ws.Dir, plan, force, "console", time.Now())
			return revertDoneMsg{runID: id, res: res, err: err}
		}
	}
	return nil
}

func (m *Model) revertBox(w int) []string {
	st := m.revert
	inner := w - 4
	var lines, keys []string
	switch {
	case st.err != nil && st.result == nil:
		lines = wrapStyled(m.th.Render(toneErr, render.SanitizeLine(st.err.Error())), inner)
		keys = []string{"esc", "close"}
	case st.plan == nil:
		lines = []string{styleFaint.Render("Reading what the run changed…")}
		keys = []string{"esc", "cancel"}
	case st.result != nil:
		lines = revertResultLines(m.th, st.runID, *st.result, st.err, inner)
		keys = []string{"esc", "close"}
	case st.force:
		lines = m.revertForceLines(inner)
		keys = []string{"y", "discard and revert", "n", "back", "esc", "cancel"}
	default:
		lines = revertPlanLines(m.th, st.plan, inner)
		n := len(st.plan.Revertable(false))
		if n > 0 {
			keys = append(keys, "y", fmt.Sprintf("revert %d file%s", n, plural(n)))
		}
		if len(st.plan.Later()) > 0 {
			keys = append(keys, "f", "also the later-changed")
		}
		keys = append(keys, "esc", "cancel")
	}
	if st.running {
		keys = []string{"", "reverting…"}
	}
	body := pager(lines, st.scroll, m.overlayBodyH()-1)
	for i, l := range body {
		body[i] = ansi.Truncate(l, inner, "…")
	}
	body = append(body, hints(inner, keys...))
	title := "Revert " + render.SanitizeLine(st.runID)
	if len(st.paths) == 1 {
		title += " · " + render.SanitizeLine(st.paths[0])
	}
	return boxed(title, body, w)
}

// revertPlanLines shows a plan: what happens to each file, and what is
// left alone and why.
func revertPlanLines(th theme, p *runner.RevertPlan, inner int) []string {
	var do, none, later, refused []runner.RevertFile
	for _, f := range p.Files {
		switch {
		case f.Refused != "":
			refused = append(refused, f)
		case f.Action == runner.RevertNone:
			none = append(none, f)
		case f.Later:
			later = append(later, f)
		default:
			do = append(do, f)
		}
	}
	var out []string
	if len(do) > 0 {
		out = append(out, styleTitle.Render("Back to how they were before the run"))
		for _, f := range do {
			out = append(out, "  "+revertFileLine(f))
		}
	}
	if len(later) > 0 {
		out = append(out, "", th.Render(toneErr, "Changed after the run ended: not reverted unless you press f"))
		for _, f := range later {
			out = append(out, "  "+revertFileLine(f))
			out = append(out, laterLines(th, f)...)
		}
	}
	if len(none) > 0 {
		names := make([]string, len(none))
		for i, f := range none {
			names[i] = render.SanitizeLine(f.Path)
		}
		out = append(out, "", styleFaint.Render("Already as before the run: "+strings.Join(names, ", ")))
	}
	if len(refused) > 0 {
		out = append(out, "", styleTitle.Render("Cannot be reverted"))
		for _, f := range refused {
			out = append(out, wrapStyled("  "+render.SanitizeLine(f.Path)+": "+render.SanitizeLine(f.Refused), inner)...)
		}
	}
	if n := p.CommandNote(); n != "" {
		out = append(out, "")
		out = append(out, wrapStyled(styleFaint.Render(render.SanitizeLine(n)), inner)...)
	}
	if p.Problem != "" {
		out = append(out, wrapStyled(styleFaint.Render("While the run ran, "+render.SanitizeLine(p.Problem)), inner)...)
	}
	if len(out) == 0 {
		out = []string{styleFaint.Render("The run's file tools changed nothing that a revert would put back.")}
	}
	return out
}

func revertFileLine(f runner.RevertFile) string {
	path := render.SanitizeLine(f.Path)
	switch {
	case f.Action == runner.RevertDelete:
		return "delete   " + path + styleFaint.Render("  (the run created it)")
	case !f.Exists():
		return "restore  " + path + styleFaint.Render("  (it is gone)")
	}
	return "restore  " + path
}

// laterLines is a later change, as a diff from how the run left the file.
func laterLines(th theme, f runner.RevertFile) []string {
	if f.LaterDiff == "" {
		return []string{styleFaint.Render("    (" + render.SanitizeLine(f.LaterNote) + ")")}
	}
	var out []string
	for _, l := range patchLines(th, f.LaterDiff) {
		out = append(out, "    "+l)
	}
	return out
}

// revertForceLines is the second question: the later changes that f
// discards.
func (m *Model) revertForceLines(inner int) []string {
	later := m.revert.plan.Later()
	names := make([]string, len(later))
	for i, f := range later {
		names[i] = render.SanitizeLine(f.Path)
	}
	out := wrapStyled(m.th.Render(toneErr, strings.Join(names, ", ")+" changed after the run ended. Reverting discards that change too:"), inner)
	for _, f := range later {
		out = append(out, "  "+render.SanitizeLine(f.Path))
		out = append(out, laterLines(m.th, f)...)
	}
	n := len(m.revert.plan.Revertable(true))
	return append(out, "", fmt.Sprintf("Discard it and revert %d file%s?", n, plural(n)))
}

func revertResultLines(th theme, runID string, res runner.RevertResult, err error, inner int) []string {
	var out []string
	if len(res.Restored) > 0 {
		out = append(out, th.Render(toneOK, "Restored ")+render.SanitizeLine(strings.Join(res.Restored, ", ")))
	}
	if len(res.Deleted) > 0 {
		out = append(out, th.Render(toneOK, "Deleted ")+render.SanitizeLine(strings.Join(res.Deleted, ", ")))
	}
	for _, f := range res.Skipped {
		out = append(out, wrapStyled(th.Render(toneErr, "Not reverted ")+render.SanitizeLine(f.Path)+": "+render.SanitizeLine(f.Refused), inner)...)
	}
	if err != nil {
		out = append(out, wrapStyled(th.Render(toneErr, render.SanitizeLine(err.Error())), inner)...)
	}
	if len(out) == 0 {
		out = []string{styleFaint.Render("Nothing was reverted.")}
	}
	return append(out, "", styleFaint.Render("guildhall show "+render.SanitizeLine(runID)+" lists the run's reverts."))
}
