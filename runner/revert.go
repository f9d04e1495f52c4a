package runner

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
)

// Reverting a run puts back the files its file tools wrote, from the run's
// undo record (store/undo.go): a file it changed gets its earlier content
// and permission bits back, a file it created is deleted (with the folders
// its write made, when they are empty), and a file it deleted after
// writing it is restored. A file that changed after the run ended (a later
// run, the operator's editor) is refused, with that change shown, unless
// the operator forces it. What the run's commands changed (run_shell, the
// checkers, the git tools, MCP tools) was not seen by the file tools: the
// plan says so, and with git how to put those back from the run's base.

// Revert actions.
const (
	RevertRestore = "restore" // write the earlier content back
	RevertDelete  = "delete"  // the run created the file
	RevertNone    = "none"    // already as it was before the run
)

// RevertFile is what reverting one file does.
type RevertFile struct {
	Path   string
	Action string
	// Refused says why the file cannot be reverted ("" when it can).
	Refused string
	// Later is set when the file changed after the run ended; LaterDiff
	// is that change (a unified diff of raw workspace text, from the
	// run's end state to now), or LaterNote says why it cannot be shown.
	Later     bool
	LaterDiff string
	LaterNote string

	entry store.UndoEntry
	now   tools.State
	data  []byte // the content to restore
}

// Exists reports whether the file is there now.
func (f RevertFile) Exists() bool { return f.now.Exists }

// RevertPlan is what reverting a run, or some of its files, would do.
type RevertPlan struct {
	RunID string
	Files []RevertFile
	// Commands counts the run's tool calls that may change files without
	// the file tools (commands, git tools, MCP tools); Base is the run's
	// git base commit, when it set one.
	Commands int
	Base     string
	// Problem is what the run could not record while it ran.
	Problem string
	// Untracked counts files written after the record was full.
	Untracked int
	// Reverts are the reverts already done.
	Reverts []store.UndoRevert
}

// Revertable is how many files a revert would change (forced or not).
func (p *RevertPlan) Revertable(force bool) []RevertFile {
	var out []RevertFile
	for _, f := range p.Files {
		if f.Refused == "" && f.Action != RevertNone && (force || !f.Later) {
			out = append(out, f)
		}
	}
	return out
}

// Later are the files that changed after the run ended (and can be
// reverted with force).
func (p *RevertPlan) Later() []RevertFile {
	var out []RevertFile
	for _, f := range p.Files {
		if f.Later && f.Refused == "" && f.Action != RevertNone {
			out = append(out, f)
		}
	}
	return out
}

// CommandNote says what a revert leaves alone, "" when the run ran no
// command.
func (p *RevertPlan) CommandNote() string {
	if p.Commands == 0 {
		return ""
	}
	n := fmt.Sprintf("The run also made %d tool call%s that can change files without the file tools (commands, git, MCP tools): what they changed is not reverted here.", p.Commands, plural(p.Commands))
	if p.Base != "" {
		n += fmt.Sprintf(" With git, `git diff %s` shows every change since the run's base, and `git restore --source=%s -- PATH` puts a file back.", p.Base, p.Base)
	} else {
		n += " Without a git base there is no record of what they changed."
	}
	return n
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// RevertError refuses a whole revert, saying why.
type RevertError struct{ RunID, Reason string }

func (e *RevertError) Error() string {
	return fmt.Sprintf("run %s cannot be reverted: %s", e.RunID, e.Reason)
}

// PlanRevert works out what reverting run id's files (paths, or every
// file when paths is empty) would do in the workspace dir, whose records
// are ws. Nothing is changed.
func PlanRevert(ws store.Workspace, dir, id string, paths []string) (*RevertPlan, error) {
	meta, err := ws.ReadMeta(id)
	if err != nil {
		return nil, err
	}
	switch {
	case meta.Foreign:
		return nil, &RevertError{id, "its meta.json is not sealed by you (foreign): it is shown, never acted on"}
	case !store.Terminal(meta.Status):
		return nil, &RevertError{id, fmt.Sprintf("it is %s; revert it once it has ended", meta.Status)}
	}
	rec, err := ws.ReadUndo(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &RevertError{id, "it has no undo record: its file tools wrote nothing, or it ran before Guildhall kept one"}
	}
	if err != nil {
		return nil, &RevertError{id, err.Error()}
	}
	if rec.Foreign {
		return nil, &RevertError{id, store.ErrUndoForeign.Error()}
	}
	w, err := tools.OpenWorkspace(dir)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	plan := &RevertPlan{RunID: id, Base: meta.GitBase, Problem: rec.Problem, Untracked: rec.Untracked, Reverts: rec.Reverts}
	plan.Commands = countCommands(ws, id)
	want := map[string]bool{}
	for _, p := range paths {
		want[cleanArg(dir, p)] = true
	}
	for _, e := range rec.Files {
		if len(want) > 0 && !want[e.Path] {
			continue
		}
		plan.Files = append(plan.Files, planFile(ws, w, id, e))
	}
	var missing []string
	for p := range want {
		if rec.Entry(p) == nil {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		plan.Files = append(plan.Files, RevertFile{Path: p, Action: RevertNone, Refused: "the run's file tools did not write it, so no earlier copy was kept"})
	}
	return plan, nil
}

// cleanArg turns a path as the operator typed it (relative to the
// workspace, or absolute inside it) into the record's form.
func cleanArg(dir, p string) string {
	p = strings.TrimSpace(p)
	if filepath.IsAbs(p) {
		if rel, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = filepath.ToSlash(rel)
		}
	}
	if c, ok := toolPath(p); ok {
		return c
	}
	return p
}

// planFile works out one file.
func planFile(ws store.Workspace, w *tools.Workspace, id string, e store.UndoEntry) RevertFile {
	f := RevertFile{Path: e.Path, entry: e}
	now, err := w.Current(e.Path, store.UndoMaxFile)
	if err != nil {
		f.Action, f.Refused = RevertNone, err.Error()
		return f
	}
	f.now = now
	if sameState(now, e.Before) {
		f.Action = RevertNone
		return f
	}
	if now.Exists && !now.Regular {
		f.Action, f.Refused = RevertNone, "something other than a regular file is in its place now"
		return f
	}
	switch {
	case !e.Before.Exists:
		f.Action = RevertDelete
	case !e.Before.Kept:
		f.Action, f.Refused = RevertNone, "its earlier content was not kept ("+e.Before.NotKept+")"
		return f
	default:
		data, err := ws.ReadContent(id, e.Before.SHA256)
		if err != nil {
			f.Action, f.Refused = RevertNone, err.Error()
			return f
		}
		f.Action, f.data = RevertRestore, data
	}
	if !sameState(now, e.After) {
		f.Later = true
		f.LaterDiff, f.LaterNote = laterChange(ws, id, e, now)
	}
	return f
}

// sameState reports whether the file now is in state st (by existence and
// content).
func sameState(now tools.State, st store.UndoState) bool {
	if now.Exists != st.Exists {
		return false
	}
	return !now.Exists || (now.Regular && now.Sum != "" && now.Sum == st.SHA256)
}

// laterDiffMax bounds the diff of a later change.
const laterDiffMax = 64 << 10

// laterChange is the diff from the run's end state to now, or why there
// is none.
func laterChange(ws store.Workspace, id string, e store.UndoEntry, now tools.State) (string, string) {
	end := ""
	switch {
	case !e.After.Exists:
	case !e.After.Kept:
		return "", "how the run left it was not kept (" + cmp.Or(e.After.NotKept, "unknown") + "), so the change cannot be shown"
	default:
		b, err := ws.ReadContent(id, e.After.SHA256)
		if err != nil {
			return "", err.Error()
		}
		end = string(b)
	}
	if now.Exists && now.Data == nil {
		return "", "the file is too large now to show the change"
	}
	cur := string(now.Data)
	if !utf8.ValidString(end) || !utf8.ValidString(cur) || strings.IndexByte(end, 0) >= 0 || strings.IndexByte(cur, 0) >= 0 {
		return "", "binary content: the change is not shown"
	}
	from, to := e.Path+" (as the run left it)", e.Path+" (now)"
	if !e.After.Exists {
		from = "/dev/null"
	}
	if !now.Exists {
		to = "/dev/null"
	}
	d := udiff.Unified(from, to, end, cur)
	if len(d) > laterDiffMax {
		d = d[:laterDiffMax] + "\n… (cut at 64 KiB)\n"
	}
	return d, ""
}

// mayChangeFiles are the tools whose changes the file tools do not see.
func mayChangeFiles(tool string) bool {
	switch tool {
	case "run_shell", "test", "typecheck", "git_init", "git_commit", "git_branch", "git_restore":
		return true
	}
	_, _, mcp := parseMCPName(tool)
	return mcp
}

// countCommands counts the run's tool calls that may change files without
// the file tools.
func countCommands(ws store.Workspace, id string) int {
	path, err := ws.LogPath(id)
	if err != nil {
		return 0
	}
	n := 0
	_, _ = store.ReadLog(path, func(_ int64, rec []byte) error {
		e, err := event.ParseLine(rec)
		var p event.ToolCallPayload
		if err == nil && e.Type == event.ToolCall && e.Decode(&p) == nil && mayChangeFiles(p.Tool) {
			n++
		}
		return nil
	})
	return n
}

// RevertResult is what a revert did.
type RevertResult struct {
	Restored, Deleted, Forced []string
	// Skipped are the files left as they are, each with its reason.
	Skipped []RevertFile
}

// ApplyRevert reverts the files plan names that can be, those changed
// after the run ended only with force. Each file is checked again first: one
// that changed since the plan was made is skipped (the operator confirmed
// what the plan showed). The revert is recorded in the run's undo record,
// by who asked ("cli", "console").
func ApplyRevert(ws store.Workspace, dir string, plan *RevertPlan, force bool, by string, now time.Time) (RevertResult, error) {
	var res RevertResult
	w, err := tools.OpenWorkspace(dir)
	if err != nil {
		return res, err
	}
	defer w.Close()
	for _, f := range plan.Files {
		switch {
		case f.Refused != "" || f.Action == RevertNone:
			if f.Refused != "" {
				res.Skipped = append(res.Skipped, f)
			}
			continue
		case f.Later && !force:
			f.Refused = "it changed after the run ended (revert with force to discard that change)"
			res.Skipped = append(res.Skipped, f)
			continue
		}
		cur, err := w.Current(f.Path, store.UndoMaxFile)
		if err == nil && !sameNow(cur, f.now) {
			err = errors.New("it changed since the revert was planned")
		}
		if err == nil {
			err = applyFile(w, f)
		}
		if err != nil {
			f.Refused = err.Error()
			res.Skipped = append(res.Skipped, f)
			continue
		}
		if f.Action == RevertDelete {
			res.Deleted = append(res.Deleted, f.Path)
		} else {
			res.Restored = append(res.Restored, f.Path)
		}
		if f.Later {
			res.Forced = append(res.Forced, f.Path)
		}
	}
	if len(res.Restored)+len(res.Deleted) == 0 {
		return res, nil
	}
	return res, recordRevert(ws, plan.RunID, store.UndoRevert{At: now.UTC(), By: by, Restored: res.Restored, Deleted: res.Deleted, Forced: res.Forced})
}

func sameNow(a, b tools.State) bool {
	return a.Exists == b.Exists && a.Regular == b.Regular && a.Sum == b.Sum
}

func applyFile(w *tools.Workspace, f RevertFile) error {
	if f.Action == RevertDelete {
		return w.RemoveCreated(f.Path, f.entry.Before.MadeDirs)
	}
	perm := fs.FileMode(f.entry.Before.Perm) & 0o777
	if perm == 0 {
		perm = 0o644
	}
	return w.Restore(f.Path, f.data, perm)
}

// recordRevert adds a revert to the run's undo record.
func recordRevert(ws store.Workspace, id string, r store.UndoRevert) error {
	rec, err := ws.ReadUndo(id)
	if err != nil {
		return fmt.Errorf("the files were reverted, but the revert could not be recorded: %w", err)
	}
	rec.Reverts = append(rec.Reverts, r)
	if err := ws.WriteUndo(rec, true); err != nil {
		return fmt.Errorf("the files were reverted, but the revert could not be recorded: %w", err)
	}
	return nil
}
