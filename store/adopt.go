package store

// A workspace's records are sealed for the folder they were written in
// (seal.go), so moving or renaming the folder, or carrying it to another
// machine or account, makes every past run foreign: shown, never resumed
// or continued. That is what keeps a planted .orchestration from being
// obeyed, so the seal stays; this file is the way back for the operator's
// own runs. It lists the foreign runs with what can be told about each,
// and re-seals the ones the operator confirms (guildhall records adopt).

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// AdoptCandidate is a run whose meta.json is foreign here.
type AdoptCandidate struct {
	Meta *Meta // as read: Foreign is true
	// RecordedIn is the folder the record names (Meta.Workspace), "" for
	// a record written before records named it.
	RecordedIn string
	// SealedByYou is set when the record's seal checks under this
	// operator's key for the folder it names: this operator wrote it
	// there, and the folder has moved since. Otherwise the record was
	// sealed by another key (another machine or account) or by no one
	// Guildhall knows (planted): only the operator can tell.
	SealedByYou bool
}

// AdoptCandidates lists the runs whose meta.json is foreign here, oldest
// first. Runs in the original system's format are left out: they were
// never sealed, and their checkpoint is not Guildhall's to resume.
func (w Workspace) AdoptCandidates() ([]AdoptCandidate, error) {
	ids, err := w.ListRunIDs()
	if err != nil {
		return nil, err
	}
	var out []AdoptCandidate
	for i := len(ids) - 1; i >= 0; i-- {
		id := ids[i]
		m, err := w.ReadMeta(id)
		if err != nil || !m.Foreign || m.OriginalFormat {
			continue // unreadable runs are listed by `runs`; nothing to seal
		}
		out = append(out, AdoptCandidate{Meta: m, RecordedIn: m.Workspace, SealedByYou: m.MovedFrom != ""})
	}
	return out, nil
}

// Adopt re-seals run id's records for this workspace under w.Seal: its
// meta.json (which then names this folder), and its checkpoint, pause
// marker and undo record when it has them. Only the operator's confirmation makes a run
// adoptable (see AdoptCandidates); Adopt itself checks nothing but that
// the run's meta is foreign and in Guildhall's format.
func (w Workspace) Adopt(id string) error {
	if w.Seal.Scope() == "" {
		return errors.New("records: no records key: nothing can be sealed")
	}
	m, err := w.ReadMeta(id)
	if err != nil {
		return err
	}
	if !m.Foreign {
		return nil // already this folder's
	}
	if m.OriginalFormat {
		return fmt.Errorf("run %s was written by the original system, not Guildhall: it is never adopted", id)
	}
	dir, err := w.RunDir(id)
	if err != nil {
		return err
	}
	// The checkpoint and the marker first: a run whose meta is sealed but
	// whose checkpoint is not would be refused at resume anyway, and a
	// crash in between leaves a run that adopt still lists.
	if raw, err := ReadRecord(filepath.Join(dir, StateFile), MaxStateBytes); err == nil {
		if err := SwapFile(filepath.Join(dir, StateFile), w.Seal.Seal(SealState, id, Unsealed(raw)), 0o644); err != nil {
			return fmt.Errorf("run %s: re-seal %s: %w", id, StateFile, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("run %s: %s: %w", id, StateFile, err)
	}
	for _, r := range []struct {
		file, kind string
		max        int64
	}{{PauseFile, SealPause, MaxSmallRecordBytes}, {UndoFile, SealUndo, MaxUndoBytes}} {
		raw, err := ReadRecord(filepath.Join(dir, r.file), r.max)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("run %s: %s: %w", id, r.file, err)
		}
		if err := WriteFileAtomic(filepath.Join(dir, r.file), append(w.Seal.Seal(r.kind, id, Unsealed(raw)), '\n'), 0o644); err != nil {
			return fmt.Errorf("run %s: re-seal %s: %w", id, r.file, err)
		}
	}
	m.Foreign = false
	if err := w.WriteMeta(m); err != nil {
		return fmt.Errorf("run %s: re-seal %s: %w", id, MetaFile, err)
	}
	return nil
}
