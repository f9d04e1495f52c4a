package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
	"github.com/guildhall/guildhall/tools/sandbox"
)

// Bounds on a change set: what a console shows, not what a run did. The
// log and the repository keep everything.
const (
	changesMaxFiles     = 200
	changesMaxFileBytes = 1 << 20  // a file larger than this is listed, not diffed
	changesMaxTotal     = 4 << 20  // bytes of patch across all files
	changesMaxLogLine   = 64 << 20 // a log line larger than this is skipped
)

// Change sources.
const (
	ChangesFromGit = "git" // a diff of the working tree against the run's base commit
	ChangesFromLog = "log" // the files the run's write_file and edit_file calls touched
)

// Changes is what changed in the workspace since a run started, as the
// files are now.
type Changes struct {
	RunID  string
	Source string
	// Base is the commit the git diff is against.
	Base  string
	Files []FileChange
	// Truncated: the change set was cut at its size bounds.
	Truncated bool
}

// FileChange is one changed file. Patch is a unified diff of raw
// workspace text: a console sanitizes it before showing it.
type FileChange struct {
	Path           string
	Status         string // modified, added, deleted, binary, too large
	Patch          string
	Added, Removed int
	// Note says what the diff cannot tell (an earlier content the log did
	// not record).
	Note string
}

// Changes computes what changed since run runID started: with a
// repository and a base commit recorded for the run (meta.json gitBase),
// the working tree against that commit through the git tools' hardened,
// sandboxed git; otherwise a content diff of the files the run's
// write_file and edit_file calls touched, their earlier content taken
// from the log. Both read the workspace as it is now.
func (s *Session) Changes(ctx context.Context, runID string) (Changes, error) {
	meta, err := s.ws.ReadMeta(runID)
	if err != nil {
		return Changes{}, fmt.Errorf("changes of %s: %w", runID, err)
	}
	ws, err := tools.OpenWorkspace(s.cfg.Workspace)
	if err != nil {
		return Changes{}, fmt.Errorf("changes of %s: %w", runID, err)
	}
	defer ws.Close()
	if meta.GitBase != "" {
		if _, gerr := store.ResolveGitLayout(ws.Canonical()); gerr == nil {
			return s.gitChanges(ctx, ws, runID, meta.GitBase)
		}
	}
	return s.logChanges(ws, runID)
}

// readOnlyMeta hands the git tools a run's recorded base and refuses to
// move it.
type readOnlyMeta string

func (m readOnlyMeta) GitBase() string { return string(m) }
func (readOnlyMeta) SetGitBase(string) error {
	return errors.New("the change view does not move the base")
}

// gitChanges runs git_changes_since_base itself, so the diff gets every
// check and hardening the run's own git tools get, in a sandbox of the
// deployment's policy.
func (s *Session) gitChanges(ctx context.Context, ws *tools.Workspace, runID, base string) (Changes, error) {
	out := Changes{RunID: runID, Source: ChangesFromGit, Base: base}
	pol, err := sandbox.NewPolicy(s.cfg.Deployment.Sandbox)
	if err != nil {
		return out, fmt.Errorf("changes of %s: sandbox: %w", runID, err)
	}
	host := s.cfg.Sandbox
	if host == nil {
		host = sandbox.NewHost()
	}
	sb, err := host.Open(sandbox.Options{Policy: pol, Workspace: ws.Canonical()})
	if err != nil {
		return out, fmt.Errorf("changes of %s: sandbox: %w", runID, err)
	}
	defer sb.Close()
	env := &tools.Env{
		Workspace: ws, RunID: runID, RunsDir: s.ws.Runs(), Meta: readOnlyMeta(base),
		TimeoutCeiling: timeoutCeiling(s.cfg.Deployment), PassEnv: s.cfg.Deployment.Executor.PassEnv, Sandbox: sb,
	}
	res := tools.Builtins()["git_changes_since_base"].Call(ctx, env, json.RawMessage(`{}`))
	if res.Failed() {
		return out, fmt.Errorf("changes of %s: %s", runID, res.Message)
	}
	b, err := json.Marshal(res.Data)
	if err != nil {
		return out, fmt.Errorf("changes of %s: %w", runID, err)
	}
	var d struct {
		Patch              string   `json:"patch"`
		Untracked          []string `json:"untracked"`
		Truncated          bool     `json:"truncated"`
		UntrackedTruncated bool     `json:"untrackedTruncated"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return out, fmt.Errorf("changes of %s: %w", runID, err)
	}
	out.Files = splitGitPatch(d.Patch)
	out.Truncated = d.Truncated || d.UntrackedTruncated
	budget := changesMaxTotal
	for _, p := range d.Untracked {
		if len(out.Files) >= changesMaxFiles {
			out.Truncated = true
			break
		}
		fc := newFileChange(ws, p, "", false, &budget)
		fc.Status = "added"
		if fc.Note == "" {
			fc.Note = "not yet in git (untracked)"
		}
		out.Files = append(out.Files, fc)
	}
	return out, nil
}

func timeoutCeiling(d *Deployment) time.Duration {
	return time.Duration(d.Executor.DefaultToolTimeoutSeconds) * time.Second
}

// splitGitPatch splits git's unified diff into per-file changes.
func splitGitPatch(patch string) []FileChange {
	var out []FileChange
	for _, part := range strings.Split("\n"+patch, "\ndiff --git ") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		fc := FileChange{Status: "modified", Patch: "diff --git " + part}
		lines := strings.Split(part, "\n")
		fc.Path = gitPatchPath(lines[0])
		for _, l := range lines[1:] {
			switch {
			case strings.HasPrefix(l, "new file mode"):
				fc.Status = "added"
			case strings.HasPrefix(l, "deleted file mode"):
				fc.Status = "deleted"
			case strings.HasPrefix(l, "Binary files"):
				fc.Status = "binary"
			}
		}
		fc.Added, fc.Removed = diffStat(lines[1:])
		out = append(out, fc)
	}
	return out
}

// gitPatchPath reads the path from a "diff --git a/X b/X" header; a
// quoted one (a name with unusual bytes) is unquoted the way git quotes.
func gitPatchPath(header string) string {
	h := strings.TrimSpace(header)
	if strings.HasPrefix(h, `"`) {
		if i := strings.Index(h[1:], `" "`); i >= 0 {
			if p, ok := gitUnquote(h[:i+2]); ok {
				return strings.TrimPrefix(p, "a/")
			}
		}
	}
	if i := strings.Index(h, " b/"); strings.HasPrefix(h, "a/") && i > 0 {
		return h[2:i]
	}
	return h
}

// gitUnquote undoes git's C-style quoting of a path ("a/\303\251").
func gitUnquote(q string) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	var b []byte
	s := q[1 : len(q)-1]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b = append(b, c)
			continue
		}
		i++
		switch e := s[i]; {
		case e >= '0' && e <= '7' && i+2 < len(s):
			v := (int(e-'0') << 6) | (int(s[i+1]-'0') << 3) | int(s[i+2]-'0')
			b = append(b, byte(v))
			i += 2
		case e == 'n':
			b = append(b, '\n')
		case e == 't':
			b = append(b, '\t')
		default:
			b = append(b, e)
		}
	}
	return string(b), true
}

// touch is one successful write_file or edit_file call.
type touch struct {
	write    bool
	content  string // write_file's content
	old, new string // edit_file's strings
}

// logChanges diffs the files the run's write_file and edit_file calls
// touched. The earlier content of a file is what a read_file of it showed
// before its first change, else its content now with the run's edits
// undone in reverse order; a file first written whole without an earlier
// read has no recorded earlier content and is shown as written.
func (s *Session) logChanges(ws *tools.Workspace, runID string) (Changes, error) {
	out := Changes{RunID: runID, Source: ChangesFromLog}
	logPath, err := s.ws.LogPath(runID)
	if err != nil {
		return out, fmt.Errorf("changes of %s: %w", runID, err)
	}
	type fileLog struct {
		touches []touch
		before  *string // read before the first touch
	}
	files := map[string]*fileLog{}
	var order []string
	calls := map[string]event.ToolCallPayload{}
	fileOf := func(p string) (*fileLog, string) {
		key, ok := toolPath(p)
		if !ok {
			return nil, ""
		}
		return files[key], key
	}
	_, err = store.ReadLog(logPath, func(_ int64, rec []byte) error {
		if len(rec) > changesMaxLogLine {
			return nil
		}
		var e event.Event
		if json.Unmarshal(rec, &e) != nil {
			return nil
		}
		switch e.Type {
		case event.ToolCall:
			var p event.ToolCallPayload
			if e.Decode(&p) == nil && p.CallID != "" && (p.Tool == "write_file" || p.Tool == "edit_file" || p.Tool == "read_file") {
				calls[p.CallID] = p
			}
		case event.ToolResult:
			var p event.ToolResultPayload
			if e.Decode(&p) != nil || p.Kind != "success" {
				return nil
			}
			call, ok := calls[p.CallID]
			if !ok {
				return nil
			}
			delete(calls, p.CallID)
			var a struct {
				Path      string `json:"path"`
				Content   string `json:"content"`
				OldString string `json:"old_string"`
				NewString string `json:"new_string"`
			}
			if json.Unmarshal([]byte(call.Arguments), &a) != nil {
				return nil
			}
			fl, key := fileOf(a.Path)
			if key == "" {
				return nil
			}
			switch call.Tool {
			case "read_file":
				// Only a read before the first change tells the earlier
				// content.
				if text, ok := fullRead(p.Result); ok && fl == nil {
					files[key] = &fileLog{before: &text}
				}
			case "write_file", "edit_file":
				if fl == nil {
					fl = &fileLog{}
					files[key] = fl
				}
				if len(fl.touches) == 0 {
					order = append(order, key)
				}
				fl.touches = append(fl.touches, touch{write: call.Tool == "write_file", content: a.Content, old: a.OldString, new: a.NewString})
			}
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("changes of %s: %w", runID, err)
	}
	sort.Strings(order)
	budget := changesMaxTotal
	undo, _ := s.ws.ReadUndo(runID)
	for _, key := range order {
		if len(out.Files) >= changesMaxFiles {
			out.Truncated = true
			break
		}
		fl := files[key]
		before, known := earlier(ws, key, fl.touches, fl.before)
		if b, ok := keptBefore(s.ws, undo, key); ok {
			before, known = b, true
		}
		fc := newFileChange(ws, key, before, known, &budget)
		if fc.Status == "" {
			continue // no net change
		}
		out.Files = append(out.Files, fc)
	}
	if budget <= 0 {
		out.Truncated = true
	}
	return out, nil
}

// keptBefore is a file's content before the run, from the run's undo
// record (undo.go), when it kept one.
func keptBefore(ws store.Workspace, u *store.Undo, key string) (string, bool) {
	if u == nil || u.Foreign {
		return "", false
	}
	e := u.Entry(key)
	switch {
	case e == nil:
		return "", false
	case !e.Before.Exists:
		return "", true
	case !e.Before.Kept:
		return "", false
	}
	b, err := ws.ReadContent(u.RunID, e.Before.SHA256)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// toolPath is a tool's path argument as a clean workspace-relative path,
// or false for one that is absolute or leaves the workspace (the tools
// refused those).
func toolPath(p string) (string, bool) {
	p = strings.TrimSpace(p)
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return "", false
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

// fullRead is the content of a read_file result that shows the whole
// text file.
func fullRead(result json.RawMessage) (string, bool) {
	var r struct {
		Data struct {
			Content   string `json:"content"`
			Truncated bool   `json:"truncated"`
			Binary    bool   `json:"binary"`
		} `json:"data"`
	}
	if json.Unmarshal(result, &r) != nil || r.Data.Truncated || r.Data.Binary {
		return "", false
	}
	return r.Data.Content, true
}

// earlier is a file's content before the run's first change to it, and
// whether it is known.
func earlier(ws *tools.Workspace, key string, ts []touch, read *string) (string, bool) {
	if read != nil {
		return *read, true
	}
	now, err := ws.ReadFile(key, changesMaxFileBytes)
	cur := string(now)
	if err != nil {
		cur = ""
	}
	for i := len(ts) - 1; i >= 0; i-- {
		t := ts[i]
		if t.write {
			// Written whole: what came before is not in the log.
			return "", false
		}
		if t.new == "" || strings.Count(cur, t.new) != 1 {
			// The edit cannot be undone unambiguously (a later change
			// outside the file tools, or a repeated text).
			return "", false
		}
		cur = strings.Replace(cur, t.new, t.old, 1)
	}
	return cur, true
}

// newFileChange diffs a file's earlier content (known or not) against
// its content now. budget bounds the patch bytes across a change set.
func newFileChange(ws *tools.Workspace, key, before string, known bool, budget *int) FileChange {
	fc := FileChange{Path: key}
	data, err := ws.ReadFile(key, changesMaxFileBytes)
	var pe *tools.PathError
	switch {
	case err != nil && errors.As(err, &pe) && strings.Contains(pe.Reason, "more than"):
		fc.Status, fc.Note = "too large", "larger than 1 MiB: not diffed"
		return fc
	case err != nil && known && before == "" && errors.As(err, &pe) && pe.Kind == tools.KindNotFound:
		return FileChange{} // made and removed again
	case err != nil:
		fc.Status, fc.Note = "deleted", "not readable now: "+err.Error()
		data = nil
	}
	after := string(data)
	if !utf8.ValidString(after) || strings.IndexByte(after, 0) >= 0 || !utf8.ValidString(before) {
		fc.Status, fc.Note = "binary", "binary file: not diffed"
		return fc
	}
	if known && before == after && fc.Status != "deleted" {
		return FileChange{} // changed and changed back
	}
	switch {
	case fc.Status == "deleted":
	case !known:
		fc.Status, fc.Note = "written", "written whole; its earlier content is not in the log"
	case before == "":
		fc.Status = "added"
	default:
		fc.Status = "modified"
	}
	if *budget <= 0 {
		fc.Note = strings.TrimPrefix(fc.Note+"; diff left out: the change set is at its size limit", "; ")
		return fc
	}
	old := "a/" + key
	if !known || before == "" {
		old = "/dev/null"
	}
	neu := "b/" + key
	if fc.Status == "deleted" {
		neu = "/dev/null"
	}
	fc.Patch = udiff.Unified(old, neu, before, after)
	*budget -= len(fc.Patch)
	fc.Added, fc.Removed = diffStat(strings.Split(fc.Patch, "\n"))
	return fc
}

// diffStat counts a unified diff's added and removed lines, not its
// ---/+++ file headers.
func diffStat(lines []string) (added, removed int) {
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}
