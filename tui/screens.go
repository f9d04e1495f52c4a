package tui

import (
	"fmt"
	"strings"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/store"
)

// historyState is the History screen: the workspace's runs, newest first.
type historyState struct {
	rows     []historyRow
	loaded   bool
	err      error
	sel      int
	expanded bool
	scroll   int
}

// composeState is the Compose screen.
type composeState struct {
	editor       editor
	effort       string
	continueFrom string
	details      bool
	picking      bool
	pickSel      int
	scroll       int
}

func (m *Model) historyView(w, h int) []string {
	hs := &m.history
	switch {
	case !hs.loaded:
		return []string{"", styleFaint.Render("  Reading the run history…")}
	case hs.err != nil:
		return []string{"", "  Could not list runs: " + render.SanitizeLine(hs.err.Error())}
	case len(hs.rows) == 0:
		return []string{"", "  No runs yet in this workspace. Press n to compose one."}
	}
	var expanded []string
	if hs.expanded && hs.sel < len(hs.rows) {
		expanded = m.historyDetails(hs.rows[hs.sel], w-4)
	}
	listH := h - 1
	if len(expanded) > 0 {
		listH = min(len(hs.rows), max(3, h/3))
	}
	start := max(0, min(hs.sel-listH/2, len(hs.rows)-listH))
	out := []string{styleFaint.Render(fit(fmt.Sprintf("  %-21s %-20s %-16s %s", "RUN", "STATUS", "STARTED", "SUMMARY"), w))}
	for i := start; i < len(hs.rows) && len(out) <= listH; i++ {
		r := hs.rows[i]
		status, started := "unreadable", ""
		if r.meta != nil {
			status = statusGlyph(m.th, r.meta.Status) + " " + render.SanitizeLine(r.meta.Status)
			if r.meta.Foreign {
				status += " (foreign)"
			}
			started = r.meta.StartedAt.Local().Format("2006-01-02 15:04")
		}
		marker := "  "
		if m.live != nil && r.id == m.live.id && m.live.live() {
			marker = "● "
		}
		line := marker + fit(r.id, 21) + " " + fit(status, 20) + " " + fit(started, 16) + " " + render.SanitizeLine(r.summary)
		line = fit(line, w)
		if i == hs.sel {
			line = styleSelected.Render(line)
		}
		out = append(out, line)
	}
	if len(expanded) > 0 {
		out = append(out, styleFaint.Render(strings.Repeat("─", w)))
		out = append(out, pager(expanded, hs.scroll, max(2, h-len(out)-1))...)
	}
	return out
}

// historyDetails: full task, result summary and error message as safe
// Markdown; machine fields plain.
func (m *Model) historyDetails(r historyRow, width int) []string {
	if r.err != nil || r.meta == nil {
		msg := "unreadable"
		if r.err != nil {
			msg = r.err.Error()
		}
		return []string{"  " + render.SanitizeLine(msg)}
	}
	meta := r.meta
	var out []string
	add := func(title, md string) {
		if strings.TrimSpace(md) == "" {
			return
		}
		out = append(out, styleTitle.Render(title))
		out = append(out, m.markdown(md, width)...)
	}
	switch {
	case meta.Foreign && meta.OriginalFormat:
		out = append(out, kv("Foreign", "the original system wrote it: read-only, never resumed"))
	case meta.Foreign:
		out = append(out, kv("Foreign", "not sealed by Guildhall for you: read-only, never resumed"))
	}
	out = append(out, kv("Effort", render.SanitizeLine(meta.Effort)))
	if meta.EndedAt != nil {
		out = append(out, kv("Duration", meta.EndedAt.Sub(meta.StartedAt).Round(1e9).String()))
	}
	if meta.ContinuesFrom != "" {
		out = append(out, kv("Continues", render.SanitizeLine(meta.ContinuesFrom)))
	}
	add("Task", meta.Task)
	if meta.Result != nil {
		add("Result", meta.Result.Summary)
	}
	if meta.Error != nil {
		add("Error", meta.Error.Message)
	} else if meta.Result != nil && meta.Result.Error != nil {
		add("Error", meta.Result.Error.Message) // the original writes only the card's
	}
	return out
}

func (m *Model) composeView(w, h int) []string {
	c := &m.compose
	out := []string{styleTitle.Render("New task") + styleFaint.Render("  (ctrl+s submits; enter is a new line)")}
	out = append(out, c.editor.Render(!c.picking)...)
	var effort []string
	for _, e := range efforts() {
		if e == c.effort {
			effort = append(effort, styleSelected.Render(" "+e+" "))
		} else {
			effort = append(effort, " "+e+" ")
		}
	}
	out = append(out, "", "Effort "+strings.Join(effort, " ")+styleFaint.Render("  ctrl+e"))
	if c.continueFrom == "" {
		out = append(out, "Continue from "+styleFaint.Render("nothing · ctrl+o picks a finished run"))
		return out
	}
	out = append(out, "Continue from "+render.SanitizeLine(c.continueFrom)+styleFaint.Render("  ctrl+x clears"))
	ref := m.continuationRef(c.continueFrom, w-2)
	room := max(2, h-len(out)-1)
	out = append(out, styleFaint.Render(strings.Repeat("─", w)))
	for _, l := range pager(ref, c.scroll, room) {
		out = append(out, " "+l)
	}
	return out
}

// continuationRef is the Compose continuation reference: prior task,
// result summary and surfaced error message as safe Markdown, artifacts
// plain, technical detail only inside the collapsed section as sanitized
// preformatted text.
func (m *Model) continuationRef(id string, width int) []string {
	var meta *store.Meta
	for _, r := range m.history.rows {
		if r.id == id {
			meta = r.meta
		}
	}
	if meta == nil {
		return []string{styleFaint.Render("Reading " + render.SanitizeLine(id) + "…")}
	}
	out := []string{kv("Run", render.SanitizeLine(meta.RunID)) + "  " + kv("Status", render.SanitizeLine(meta.Status))}
	out = append(out, styleTitle.Render("Prior task"))
	out = append(out, m.markdown(meta.Task, width)...)
	var ei *store.MetaError
	if res := meta.Result; res != nil {
		if strings.TrimSpace(res.Summary) != "" {
			out = append(out, styleTitle.Render("Result summary"))
			out = append(out, m.markdown(res.Summary, width)...)
		}
		if len(res.Artifacts) > 0 {
			out = append(out, styleTitle.Render("Artifacts"))
			out = append(out, artifactLines(res.Artifacts, width)...)
		}
		ei = res.Error
	}
	if meta.Error != nil {
		ei = meta.Error
	}
	if ei != nil {
		out = append(out, styleTitle.Render("Error"))
		if ei.Message != "" {
			out = append(out, m.markdown(ei.Message, width)...)
		}
		if len(ei.Detail) > 0 {
			out = append(out, technicalDetails(ei.Detail, m.compose.details, width, "ctrl+d shows them")...)
		}
	}
	return out
}

// flowHit finds the key of the flow node drawn at (x, row) of the body.
func flowHit(v *runView, res *render.LabelResolver, width, height, x, row int) string {
	fl := layoutFlow(v, res, width, height)
	y := flowTopRows
	for _, lane := range fl.lanes {
		y++ // lane title
		if row >= y && row < y+lane.rows {
			r := row - y
			cx := 0
			if lane.first > 0 {
				cx = 2
			}
			for c, w := range lane.widths {
				if c > 0 {
					cx += flowEdgeW
				}
				if x >= cx && x < cx+w {
					if ci := lane.grid[r][c]; ci >= 0 {
						return fl.cells[ci].key
					}
					return ""
				}
				cx += w
			}
			return ""
		}
		y += lane.rows
	}
	return ""
}
