package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Run statuses.
const (
	StatusRunning            = "running"
	StatusSuccess            = "success"
	StatusError              = "error"
	StatusNeedsClarification = "needs_clarification"
	StatusInterrupted        = "interrupted"
	StatusSuspended          = "suspended"
	StatusPaused             = "paused"
)

// Terminal reports whether a run status is final.
func Terminal(status string) bool {
	switch status {
	case StatusSuccess, StatusError, StatusNeedsClarification, StatusInterrupted:
		return true
	}
	return false
}

// MetaError is a run's surfaced error: {kind, message, detail}. Detail is
// raw technical detail for the operator only; it never enters model history.
//
// It is written with the original system's names as well: message always
// (its reader requires a string), and the detail also as details, the name
// its result card uses. It is read from either name.
type MetaError struct {
	Kind    string          `json:"kind"`
	Message string          `json:"message"`
	Detail  json.RawMessage `json:"detail,omitempty"`
}

type metaErrorJSON MetaError

// MarshalJSON writes details beside detail.
func (e MetaError) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		metaErrorJSON
		Details json.RawMessage `json:"details,omitempty"`
	}{metaErrorJSON(e), e.Detail})
}

// UnmarshalJSON reads detail, or the original's details.
func (e *MetaError) UnmarshalJSON(b []byte) error {
	var v struct {
		metaErrorJSON
		Details json.RawMessage `json:"details"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = MetaError(v.metaErrorJSON)
	if len(e.Detail) == 0 && len(v.Details) > 0 && string(v.Details) != "null" {
		e.Detail = v.Details
	}
	return nil
}

// MetaResult is the entry role's result card.
type MetaResult struct {
	Status    string     `json:"status"`
	Summary   string     `json:"summary"`
	Artifacts []string   `json:"artifacts,omitempty"`
	Error     *MetaError `json:"error,omitempty"`
}

// Suspension is the platform-authored record of a suspended run: category
// copy only, never provider text.
type Suspension struct {
	Category    string    `json:"category"`
	Message     string    `json:"message"`
	SuspendedAt time.Time `json:"suspendedAt"`
	// Model is the deployment's name of the model whose endpoint is
	// down, "" for the model block.
	Model string `json:"model,omitempty"`
}

// Meta is meta.json, the platform-owned record of one run.
type Meta struct {
	RunID         string      `json:"runId"`
	Task          string      `json:"task"`
	Effort        string      `json:"effort"`
	LogLevel      string      `json:"logLevel,omitempty"`
	Status        string      `json:"status"`
	StartedAt     time.Time   `json:"startedAt"`
	EndedAt       *time.Time  `json:"endedAt,omitempty"`
	ContinuesFrom string      `json:"continuesFrom,omitempty"`
	EntryRole     string      `json:"entryRole,omitempty"`
	Model         string      `json:"model,omitempty"`
	Result        *MetaResult `json:"result,omitempty"`
	Error         *MetaError  `json:"error,omitempty"`
	Suspension    *Suspension `json:"suspension,omitempty"`
	GitBase       string      `json:"gitBase,omitempty"`
	PID           int         `json:"pid,omitempty"`
	// Workspace is the folder (canonical path) the record was sealed for,
	// set by WriteMeta: a record that names another folder than the one it
	// is read in was moved or copied with its folder (records adopt).
	Workspace string `json:"workspace,omitempty"`

	// GuildPath is where the run's guild was loaded from (an absolute
	// folder, or "seed"), as the original system records it too, and
	// GuildHash what the guild's files held. A resume loads the same guild
	// and warns when it changed.
	GuildPath string `json:"guildPath,omitempty"`
	GuildHash string `json:"guildHash,omitempty"`
	// DeploymentFiles are the deployment files layered for the run, first
	// to last, and DeploymentHash what they held.
	DeploymentFiles []string `json:"deploymentFiles,omitempty"`
	DeploymentHash  string   `json:"deploymentHash,omitempty"`
	// Provider and APIBase are the wire format and endpoint the run used
	// (APIBase without any credentials a URL may carry).
	Provider string `json:"provider,omitempty"`
	APIBase  string `json:"apiBase,omitempty"`

	// Foreign is set by ReadMeta when the file is not sealed for this
	// workspace by the operator's key (see Sealer): Guildhall did not write
	// it, so it may be shown but never acted on.
	Foreign bool `json:"-"`
	// OriginalFormat is set when the file names its times only as the
	// original system does (startTime, no startedAt): a record the
	// original wrote, not Guildhall.
	OriginalFormat bool `json:"-"`
	// MovedFrom is set by ReadMeta for a foreign record whose seal checks
	// under the operator's key for the folder it names: the operator wrote
	// it there, and the folder has moved (or was copied) since.
	MovedFrom string `json:"-"`
}

// metaJSON is Meta without its methods, for the codec below.
type metaJSON Meta

// MarshalJSON writes Meta with the original system's names for the times
// beside Guildhall's: startTime and endTime (RFC 3339 strings, as its
// reader requires) next to startedAt and endedAt. guildPath, the result
// card and the error are already named as the original names them.
func (m Meta) MarshalJSON() ([]byte, error) {
	v := struct {
		metaJSON
		StartTime string `json:"startTime"`
		EndTime   string `json:"endTime,omitempty"`
	}{metaJSON: metaJSON(m), StartTime: m.StartedAt.UTC().Format(time.RFC3339Nano)}
	if m.EndedAt != nil {
		v.EndTime = m.EndedAt.UTC().Format(time.RFC3339Nano)
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads Guildhall's names, or the original's when only
// those are present. A time that does not parse is an error: a run
// listed as started in year 1 is worse than a run reported unreadable.
func (m *Meta) UnmarshalJSON(b []byte) error {
	var v struct {
		metaJSON
		StartTime *string `json:"startTime"`
		EndTime   *string `json:"endTime"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*m = Meta(v.metaJSON)
	if m.StartedAt.IsZero() && v.StartTime != nil {
		t, err := time.Parse(time.RFC3339Nano, *v.StartTime)
		if err != nil {
			return fmt.Errorf("startTime %q is not an RFC 3339 time", *v.StartTime)
		}
		m.StartedAt, m.OriginalFormat = t, true
	}
	if m.EndedAt == nil && v.EndTime != nil && *v.EndTime != "" {
		t, err := time.Parse(time.RFC3339Nano, *v.EndTime)
		if err != nil {
			return fmt.Errorf("endTime %q is not an RFC 3339 time", *v.EndTime)
		}
		m.EndedAt = &t
	}
	return nil
}

// Workspace locates the bookkeeping of one workspace directory.
type Workspace struct {
	Dir string // absolute workspace path
	// Seal seals the records written and checks those read; nil makes
	// every record read foreign and every record written unsealed.
	Seal *Sealer
	// Redact removes known secret values from meta.json and the checkpoint
	// before they are written; nil redacts nothing.
	Redact *Redactor
}

// Orchestration is <workspace>/.orchestration.
func (w Workspace) Orchestration() string { return filepath.Join(w.Dir, OrchestrationDir) }

// Runs is <workspace>/.orchestration/runs.
func (w Workspace) Runs() string { return filepath.Join(w.Orchestration(), RunsDir) }

// RunDir returns the folder of run id, validating the id first.
func (w Workspace) RunDir(id string) (string, error) {
	if err := CheckRunID(id); err != nil {
		return "", err
	}
	return filepath.Join(w.Runs(), id), nil
}

// readRunRecord reads the record name in run id's folder, capped at limit,
// with ReadRecord's refusal of links, devices and oversized files.
func (w Workspace) readRunRecord(id, name string, limit int64) ([]byte, error) {
	dir, err := w.RunDir(id)
	if err != nil {
		return nil, err
	}
	return ReadRecord(filepath.Join(dir, name), limit)
}

// decodeRunRecord reads run id's record name (capped at limit) into v and
// checks that the record names the run it lies in; runIDOf is where v keeps
// that name. It returns the bytes, for the caller's seal check.
func decodeRunRecord[T any](w Workspace, id, name string, limit int64, v *T, runIDOf func(*T) string) ([]byte, error) {
	b, err := w.readRunRecord(id, name, limit)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("run %s: %s is not valid: %w", id, name, err)
	}
	if got := runIDOf(v); got != id {
		return nil, fmt.Errorf("run %s: %s names run %q", id, name, got)
	}
	return b, nil
}

// ReadMeta reads and validates a run's meta.json.
func (w Workspace) ReadMeta(id string) (*Meta, error) {
	var m Meta
	b, err := decodeRunRecord(w, id, MetaFile, MaxMetaBytes, &m, func(m *Meta) string { return m.RunID })
	if err != nil {
		return nil, err
	}
	m.Foreign = !w.Seal.Check(SealMeta, id, b)
	if m.Foreign && m.Workspace != "" && m.Workspace != w.Seal.Scope() && w.Seal.For(m.Workspace).Check(SealMeta, id, b) {
		m.MovedFrom = m.Workspace
	}
	return &m, nil
}

// WriteMeta writes meta.json atomically.
//
// A meta read as foreign is refused: writing it would seal a record
// Guildhall did not write.
func (w Workspace) WriteMeta(m *Meta) error {
	dir, err := w.RunDir(m.RunID)
	if err != nil {
		return err
	}
	if m.Foreign {
		return fmt.Errorf("run %s: meta.json is foreign (not written by Guildhall for you); it is never rewritten", m.RunID)
	}
	rec := *m
	if scope := w.Seal.Scope(); scope != "" {
		rec.Workspace = scope
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encode meta for %s: %w", m.RunID, err)
	}
	b = w.Seal.Seal(SealMeta, m.RunID, w.Redact.Redact(b))
	return WriteFileAtomic(filepath.Join(dir, MetaFile), append(b, '\n'), 0o644)
}

// CreateRun makes a new run folder named after now, retrying on a
// same-second collision by moving to the next second. It returns the id.
func (w Workspace) CreateRun(now time.Time) (string, error) {
	runs, err := openRecordsDir(w.Runs(), true)
	if err != nil {
		return "", err
	}
	defer runs.close()
	for i := 0; i < 120; i++ {
		id := NewRunID(now.Add(time.Duration(i) * time.Second))
		err := unix.Mkdirat(runs.fd, id, 0o755)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("create run folder %s: %w", id, err)
		}
	}
	return "", errors.New("create run folder: no free run id in the next two minutes")
}

// ListRunIDs returns the valid run ids under runs/, newest first. Folders
// whose names are not canonical run ids are ignored, and so is any entry
// that is not a folder: a run folder that is a link is not followed.
// .orchestration and runs are opened without following a link either.
func (w Workspace) ListRunIDs() ([]string, error) {
	d, err := openRecordsDir(w.Runs(), false)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	// The listing reads the descriptor through a duplicate: the *os.File
	// owns and closes its own.
	dup, err := unix.Dup(d.fd)
	d.close()
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	f := os.NewFile(uintptr(dup), w.Runs())
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && ValidRunID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	return ids, nil
}

// ReadSummary returns summary.txt of a run, trimmed, or "" when absent.
func (w Workspace) ReadSummary(id string) string {
	b, err := w.readRunRecord(id, SummaryFile, MaxSummaryBytes)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ReadPlan returns plan.md of a run. A missing plan is fs.ErrNotExist; a
// plan that is a link, a FIFO, a device or over MaxPlanBytes is a
// *RecordError, and not read.
func (w Workspace) ReadPlan(id string) ([]byte, error) {
	return w.readRunRecord(id, PlanFile, MaxPlanBytes)
}

// LogPath is the path of a run's log.jsonl (id must be valid).
func (w Workspace) LogPath(id string) (string, error) {
	dir, err := w.RunDir(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, LogFile), nil
}

// WriteState writes run id's checkpoint (state.json), sealed, with
// SwapFile: it is rewritten every turn.
func (w Workspace) WriteState(id string, data []byte) error {
	dir, err := w.RunDir(id)
	if err != nil {
		return err
	}
	return SwapFile(filepath.Join(dir, StateFile), w.Seal.Seal(SealState, id, w.Redact.Redact(data)), 0o644)
}

// ReadState reads run id's checkpoint. sealed reports whether it carries
// this workspace's seal; a checkpoint that does not is foreign and must
// never be resumed.
func (w Workspace) ReadState(id string) (data []byte, sealed bool, err error) {
	data, err = w.readRunRecord(id, StateFile, MaxStateBytes)
	if err != nil {
		return nil, false, err
	}
	return data, w.Seal.Check(SealState, id, data), nil
}

// RemoveState removes run id's checkpoint and its spare.
func (w Workspace) RemoveState(id string) error {
	dir, err := w.RunDir(id)
	if err != nil {
		return err
	}
	return RemoveSwapped(filepath.Join(dir, StateFile))
}

// PauseFile is the durable pause-intent marker in a run's folder.
const PauseFile = "pause-intent"

// WritePauseMarker records, durably and sealed, that the operator paused
// run id.
func (w Workspace) WritePauseMarker(id string, at time.Time) error {
	dir, err := w.RunDir(id)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(struct {
		RunID       string    `json:"runId"`
		RequestedAt time.Time `json:"requestedAt"`
	}{id, at.UTC()})
	return WriteFileAtomic(filepath.Join(dir, PauseFile), w.Seal.Seal(SealPause, id, b), 0o644)
}

// PauseMarked reports whether run id carries a pause marker this
// workspace's seal vouches for. A planted marker is ignored.
func (w Workspace) PauseMarked(id string) bool {
	b, err := w.readRunRecord(id, PauseFile, MaxSmallRecordBytes)
	return err == nil && w.Seal.Check(SealPause, id, b)
}

// RemovePauseMarker removes run id's pause marker; a missing one is not an
// error.
func (w Workspace) RemovePauseMarker(id string) error {
	dir, err := w.RunDir(id)
	if err != nil {
		return err
	}
	if err := removeRecord(filepath.Join(dir, PauseFile)); err != nil {
		return fmt.Errorf("remove pause marker of %s: %w", id, err)
	}
	return nil
}
