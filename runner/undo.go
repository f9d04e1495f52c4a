package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
)

// undoRecorder is a run's tools.Undo: it keeps, in the run's undo record
// (store/undo.go), each file's content before the run's file tools first
// wrote it and as the run left it, within the record's caps. Failing to
// keep a copy never stops the run: the entry says what is missing, and
// the record keeps the first problem for the revert to tell.
type undoRecorder struct {
	mu  sync.Mutex
	ws  store.Workspace
	rec *store.Undo
	// off says why nothing is recorded (a resumed run's record that is
	// not sealed); "" while recording.
	off string
	// untracked are the files written after the record was full.
	untracked map[string]bool
}

// openUndo opens run id's undo record: the one a resumed run already has,
// or a new one. A record that is not sealed is left alone, and this run
// records nothing more: its earlier contents cannot be vouched for.
func openUndo(ws store.Workspace, id string) *undoRecorder {
	u := &undoRecorder{ws: ws, untracked: map[string]bool{}}
	rec, err := ws.ReadUndo(id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		u.rec = &store.Undo{RunID: id}
	case err != nil:
		u.off = err.Error()
	case rec.Foreign:
		u.off = store.ErrUndoForeign.Error()
	default:
		u.rec = rec
		u.rec.Ended = false
	}
	return u
}

// Wants implements tools.Undo.
func (u *undoRecorder) Wants(rel string) (int64, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.off != "" || u.rec.Entry(rel) != nil {
		return 0, false
	}
	if len(u.rec.Files) >= store.UndoMaxFiles {
		if !u.untracked[rel] {
			u.untracked[rel] = true
			u.rec.Untracked++
			u.save(false)
		}
		return 0, false
	}
	return store.UndoMaxFile, true
}

// Keep implements tools.Undo.
func (u *undoRecorder) Keep(rel, tool string, p tools.Prior) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.off != "" || u.rec.Entry(rel) != nil {
		return
	}
	before := store.UndoState{Exists: p.Exists, Size: p.Size, Perm: uint32(p.Perm), MadeDirs: p.MadeDirs}
	switch {
	case !p.Exists:
	case p.Data == nil:
		before.NotKept = p.Unread
	default:
		before.SHA256 = store.ContentSum(p.Data)
		before.Kept, before.NotKept = u.keep(p.Data, before.SHA256, true)
	}
	u.rec.Files = append(u.rec.Files, store.UndoEntry{Path: rel, Tool: tool, Before: before, After: before})
	u.save(true)
}

// Wrote implements tools.Undo.
func (u *undoRecorder) Wrote(rel string, data []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.off != "" {
		return
	}
	e := u.rec.Entry(rel)
	if e == nil {
		return
	}
	perm := uint32(0o644)
	if e.Before.Exists {
		perm = e.Before.Perm
	}
	u.setAfter(e, store.UndoState{Exists: true, SHA256: store.ContentSum(data), Size: int64(len(data)), Perm: perm}, data)
	u.save(false)
}

// finish takes each file's end state from the workspace as the run ends,
// so that a command's change after the last write counts as the run's.
func (u *undoRecorder) finish(ws *tools.Workspace) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.off != "" || ws == nil || (len(u.rec.Files) == 0 && u.rec.Untracked == 0) {
		return // nothing written: no record
	}
	for i := range u.rec.Files {
		e := &u.rec.Files[i]
		cur, err := ws.Current(e.Path, store.UndoMaxFile)
		if err != nil {
			continue // it cannot be reverted through there either
		}
		after := store.UndoState{Exists: cur.Exists, SHA256: cur.Sum, Size: cur.Size, Perm: uint32(cur.Perm)}
		if cur.Exists && !cur.Regular {
			after.SHA256, after.NotKept = "", "not a regular file"
		}
		if after.Exists == e.After.Exists && after.SHA256 == e.After.SHA256 && after.SHA256 != "" {
			continue
		}
		u.setAfter(e, after, cur.Data)
	}
	u.rec.Ended = true
	u.save(true)
}

// setAfter replaces e's end state with st, keeping data (st's content)
// within the caps and dropping the copy of the old end state when nothing
// else refers to it.
func (u *undoRecorder) setAfter(e *store.UndoEntry, st store.UndoState, data []byte) {
	old := e.After
	if st.Exists && st.SHA256 != "" && data != nil {
		st.Kept, st.NotKept = u.keep(data, st.SHA256, false)
	} else if st.Exists && st.NotKept == "" {
		st.NotKept = "larger than the copy a run keeps of a file"
	}
	e.After = st
	if old.Kept && !u.rec.References(old.SHA256) {
		if err := u.ws.DropContent(u.rec.RunID, old.SHA256); err == nil {
			u.rec.KeptBytes -= old.Size
		}
	}
}

// keep stores data (named sum) unless it is kept already or would pass a
// cap; it says whether it is kept, or why not. An earlier content is kept
// durably (store.WriteUndo says why), an end state need not be.
func (u *undoRecorder) keep(data []byte, sum string, durable bool) (bool, string) {
	if u.rec.References(sum) {
		return true, ""
	}
	switch {
	case len(data) > store.UndoMaxFile:
		return false, fmt.Sprintf("larger than the %d MiB a run keeps of a file", store.UndoMaxFile>>20)
	case u.rec.KeptBytes+int64(len(data)) > store.UndoMaxTotal:
		return false, fmt.Sprintf("the run's copies reached their %d MiB limit", store.UndoMaxTotal>>20)
	}
	if _, err := u.ws.KeepContent(u.rec.RunID, data, durable); err != nil {
		u.tell("a copy could not be kept: " + err.Error())
		return false, "the copy could not be written"
	}
	u.rec.KeptBytes += int64(len(data))
	return true, ""
}

func (u *undoRecorder) save(durable bool) {
	if err := u.ws.WriteUndo(u.rec, durable); err != nil {
		// Kept for the next write that succeeds.
		u.tell("the undo record could not be written: " + err.Error())
	}
}

func (u *undoRecorder) tell(msg string) {
	if u.rec.Problem == "" {
		u.rec.Problem = msg
	}
}
