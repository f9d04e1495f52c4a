package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
)

// diffView is the open per-file diff of what a run changed: one file at a
// time, scrolled and paged, ← → moving between files. Lines are
// workspace text: each is sanitized and cut, never wrapped, so the +/-
// column stays a column; y copies the file's whole diff.
type diffView struct {
	file   int
	scroll int
	// lines caches the sanitized lines of the file on screen.
	cacheFile int
	lines     []string
}

func (m *Model) openDiff(file int) {
	m.diff = &diffView{file: file, cacheFile: -1}
}

// diffFiles is the change set the diff view shows.
func (m *Model) diffFiles() []runner.FileChange {
	if m.changes == nil || !m.changes.loaded {
		return nil
	}
	return m.changes.changes.Files
}

// patchLines sanitizes a patch into styled lines: additions green,
// removals red, hunk headers bold.
func patchLines(th theme, patch string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(patch, "\n"), "\n") {
		l = render.SanitizeLine(strings.ReplaceAll(l, "\t", "    "))
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "diff --git"), strings.HasPrefix(l, "index "):
			l = styleFaint.Render(l)
		case strings.HasPrefix(l, "@@"):
			l = styleTitle.Render(l)
		case strings.HasPrefix(l, "+"):
			l = th.Render(toneOK, l)
		case strings.HasPrefix(l, "-"):
			l = th.Render(toneErr, l)
		}
		out = append(out, l)
	}
	return out
}

// prepareDiff caches the lines of the file on screen (Update, on open or
// a move).
func (m *Model) prepareDiff() {
	d := m.diff
	files := m.diffFiles()
	if d == nil || len(files) == 0 {
		return
	}
	d.file = max(0, min(d.file, len(files)-1))
	if d.cacheFile == d.file {
		return
	}
	f := files[d.file]
	var lines []string
	head := fmt.Sprintf("%s · %s · +%d −%d", render.SanitizeLine(f.Path), render.SanitizeLine(f.Status), f.Added, f.Removed)
	lines = append(lines, styleTitle.Render(head))
	if f.Note != "" {
		lines = append(lines, styleFaint.Render(render.SanitizeLine(f.Note)))
	}
	lines = append(lines, "")
	if f.Patch == "" {
		lines = append(lines, styleFaint.Render("No diff to show."))
	} else {
		lines = append(lines, patchLines(m.th, f.Patch)...)
	}
	d.lines, d.cacheFile = lines, d.file
}

func (m *Model) diffBox(w int) []string {
	d := m.diff
	files := m.diffFiles()
	inner := w - 4
	title := "What changed"
	var body []string
	if len(files) == 0 {
		body = []string{styleFaint.Render("No file changed since the run started.")}
	} else {
		title = fmt.Sprintf("What changed · file %d of %d", d.file+1, len(files))
		for _, l := range pager(d.lines, d.scroll, m.overlayBodyH()-1) {
			body = append(body, ansi.Truncate(l, inner, "…"))
		}
	}
	body = append(body, hints(inner, "esc", "close", "←→", "file", "↑↓ pgup pgdn", "scroll", "y", "copy diff", "u", "revert file"))
	return boxed(title, body, w)
}

func (m *Model) keyDiff(key string) tea.Cmd {
	d := m.diff
	files := m.diffFiles()
	switch key {
	case "left", "h", "shift+tab":
		if d.file > 0 {
			d.file, d.scroll = d.file-1, 0
		}
	case "right", "l", "tab":
		if d.file+1 < len(files) {
			d.file, d.scroll = d.file+1, 0
		}
	case "y":
		if d.file < len(files) {
			f := files[d.file]
			return m.copyText("the diff of "+render.SanitizeLine(f.Path), f.Patch)
		}
	case "u":
		if d.file < len(files) {
			return m.openRevert([]string{files[d.file].Path})
		}
	case "G", "end":
		d.scroll = max(0, len(d.lines)-(m.overlayBodyH()-1))
	default:
		cmd := m.keyPager(key, &d.scroll, func() { m.diff = nil }, "w")
		d.scroll = min(d.scroll, max(0, len(d.lines)-(m.overlayBodyH()-1)))
		return cmd
	}
	m.prepareDiff()
	return nil
}
