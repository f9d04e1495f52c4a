package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
)

// A run's undo record says what its file tools changed, so that the
// operator can put it back (guildhall revert, u in the console) with or
// without git. undo.json lists each file a file tool wrote: its state
// before the run first wrote it and as the run left it, each as existence,
// size, permission bits and the SHA-256 of the content. The contents
// themselves are kept beside it, in undo/<sha256>, named by their hash.
//
// undo.json is sealed like meta.json, and the seal covers every hash in
// it; a kept content is used only when its bytes hash to the name the
// sealed record gives. So a planted undo.json is foreign (never used), and
// a content replaced or planted under undo/ is refused: nothing the
// workspace wrote there is ever written into the workspace by a revert.
//
// What is kept is bounded: a content over UndoMaxFile bytes, or one that
// would take the run's contents over UndoMaxTotal, is not kept (the entry
// says so, and that file cannot be reverted), and at most UndoMaxFiles
// files are recorded.

// Undo record names and limits.
const (
	UndoFile = "undo.json"
	UndoDir  = "undo"
	SealUndo = "undo"

	// UndoMaxFile is the largest content kept, before or after.
	UndoMaxFile = 8 << 20
	// UndoMaxTotal bounds the contents one run keeps.
	UndoMaxTotal = 64 << 20
	// UndoMaxFiles bounds the files one run records.
	UndoMaxFiles = 2000
	// MaxUndoBytes caps undo.json: UndoMaxFiles entries of a few hundred
	// bytes each, and the reverts.
	MaxUndoBytes = 16 << 20
)

// Undo is undo.json.
type Undo struct {
	RunID string      `json:"runId"`
	Files []UndoEntry `json:"files"`
	// KeptBytes is the size of the contents under undo/.
	KeptBytes int64 `json:"keptBytes"`
	// Untracked counts files a file tool wrote after UndoMaxFiles were
	// recorded.
	Untracked int `json:"untracked,omitempty"`
	// Ended is set when the run's end states were taken from the files as
	// the run ended (not only from its last writes).
	Ended bool `json:"ended,omitempty"`
	// Problem is the first copy or write of this record that failed
	// while the run ran ("" when none did).
	Problem string `json:"problem,omitempty"`
	// Reverts are the reverts done, oldest first.
	Reverts []UndoRevert `json:"reverts,omitempty"`

	// Foreign is set when the file is not sealed for this workspace by
	// the operator's key: it is shown, never used.
	Foreign bool `json:"-"`
}

// UndoEntry is one file the run's file tools wrote.
type UndoEntry struct {
	// Path is the canonical workspace-relative path (slashes).
	Path string `json:"path"`
	// Tool is the tool that first wrote it.
	Tool   string    `json:"tool"`
	Before UndoState `json:"before"`
	// After is the file as the run left it: as its last write left it
	// and, once Undo.Ended, as it was when the run ended.
	After UndoState `json:"after"`
}

// UndoState is a file's state at one moment.
type UndoState struct {
	Exists bool `json:"exists"`
	// SHA256 is the hex hash of the content; "" when it was not read
	// (a content over the caps can still be hashed; one too large to
	// read at all is not).
	SHA256 string `json:"sha256,omitempty"`
	Size   int64  `json:"size,omitempty"`
	// Perm is the file's permission bits.
	Perm uint32 `json:"perm,omitempty"`
	// Kept says the content is under undo/, named SHA256.
	Kept bool `json:"kept,omitempty"`
	// NotKept says why a content that exists was not kept.
	NotKept string `json:"notKept,omitempty"`
	// MadeDirs is the topmost folder the write created for the file (""
	// when its folder existed), so a revert that deletes the file can
	// remove the folders it left empty.
	MadeDirs string `json:"madeDirs,omitempty"`
}

// UndoRevert is one revert.
type UndoRevert struct {
	At time.Time `json:"at"`
	// By is where it was asked: "cli" or "console".
	By string `json:"by"`
	// Restored, Deleted and Forced are paths: put back, deleted (the run
	// had made them), and reverted over a change made after the run.
	Restored []string `json:"restored,omitempty"`
	Deleted  []string `json:"deleted,omitempty"`
	Forced   []string `json:"forced,omitempty"`
}

// Entry returns the entry of path, or nil.
func (u *Undo) Entry(path string) *UndoEntry {
	for i := range u.Files {
		if u.Files[i].Path == path {
			return &u.Files[i]
		}
	}
	return nil
}

// References reports whether any entry keeps the content named sum.
func (u *Undo) References(sum string) bool {
	for _, e := range u.Files {
		if (e.Before.Kept && e.Before.SHA256 == sum) || (e.After.Kept && e.After.SHA256 == sum) {
			return true
		}
	}
	return false
}

// ContentSum is the name a content is kept under.
func ContentSum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// ErrUndoForeign is a run's undo record that is not sealed for this
// workspace by the operator's key.
var ErrUndoForeign = errors.New("its undo record is not sealed by you (it was planted, or copied from elsewhere): it is never used")

// ReadUndo reads run id's undo.json. A missing record is fs.ErrNotExist;
// one that is not sealed comes back with Foreign set.
func (w Workspace) ReadUndo(id string) (*Undo, error) {
	var u Undo
	b, err := decodeRunRecord(w, id, UndoFile, MaxUndoBytes, &u, func(u *Undo) string { return u.RunID })
	if err != nil {
		return nil, err
	}
	u.Foreign = !w.Seal.Check(SealUndo, id, b)
	return &u, nil
}

// WriteUndo writes undo.json, sealed and atomically; durable adds the
// fsyncs, so that the record of a file's earlier content is on disk before
// the file tool changes the file. A record of an end state need not be: a
// crash that loses it makes the revert see a change after the run, and
// refuse rather than overwrite.
func (w Workspace) WriteUndo(u *Undo, durable bool) error {
	dir, err := w.RunDir(u.RunID)
	if err != nil {
		return err
	}
	if u.Foreign {
		return fmt.Errorf("run %s: undo.json is foreign (not written by Guildhall for you); it is never rewritten", u.RunID)
	}
	b, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("encode undo record of %s: %w", u.RunID, err)
	}
	return writeAtomic(filepath.Join(dir, UndoFile), append(w.Seal.Seal(SealUndo, u.RunID, b), '\n'), 0o644, durable)
}

// validSum reports whether s names a content (64 lowercase hex digits).
func validSum(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

func (w Workspace) undoDir(id string) (string, error) {
	dir, err := w.RunDir(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, UndoDir), nil
}

// KeepContent stores data under run id's undo/ folder, named by its hash
// (durably: see WriteUndo), and returns the hash. A content already there
// is not written again.
func (w Workspace) KeepContent(id string, data []byte, durable bool) (string, error) {
	dir, err := w.undoDir(id)
	if err != nil {
		return "", err
	}
	sum := ContentSum(data)
	d, err := openRecordsDir(dir, true)
	if err != nil {
		return "", fmt.Errorf("keep a content of %s: %w", id, err)
	}
	defer d.close()
	if b, err := d.read(sum, UndoMaxFile); err == nil && ContentSum(b) == sum {
		return sum, nil
	}
	if err := d.writeAtomic(sum, data, 0o644, durable); err != nil {
		return "", fmt.Errorf("keep a content of %s: %w", id, err)
	}
	return sum, nil
}

// ContentError is a kept content that is not what the sealed record says.
type ContentError struct {
	RunID, Sum, Problem string
}

func (e *ContentError) Error() string {
	return fmt.Sprintf("the copy run %s kept (undo/%s) %s: it is never written into the workspace", e.RunID, e.Sum, e.Problem)
}

// ReadContent reads the content named sum that run id kept, and checks
// that it is that content.
func (w Workspace) ReadContent(id, sum string) ([]byte, error) {
	if !validSum(sum) {
		return nil, &ContentError{RunID: id, Sum: sum, Problem: "has no valid name"}
	}
	dir, err := w.undoDir(id)
	if err != nil {
		return nil, err
	}
	b, err := ReadRecord(filepath.Join(dir, sum), UndoMaxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &ContentError{RunID: id, Sum: sum, Problem: "is missing"}
	}
	if err != nil {
		return nil, &ContentError{RunID: id, Sum: sum, Problem: "cannot be read (" + err.Error() + ")"}
	}
	if ContentSum(b) != sum {
		return nil, &ContentError{RunID: id, Sum: sum, Problem: "does not hold what the run's sealed record says (it was changed or planted)"}
	}
	return b, nil
}

// DropContent removes the content named sum from run id's undo/ folder;
// a missing one is not an error.
func (w Workspace) DropContent(id, sum string) error {
	if !validSum(sum) {
		return nil
	}
	dir, err := w.undoDir(id)
	if err != nil {
		return err
	}
	return removeRecord(filepath.Join(dir, sum))
}
