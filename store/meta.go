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
type MetaError struct {
	Kind    string          `json:"kind"`
	Message string          `json:"message,omitempty"`
	Detail  json.RawMessage `json:"detail,omitempty"`
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
}

// Workspace locates the bookkeeping of one workspace directory.
type Workspace struct {
	Dir string // absolute workspace path
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

// ReadMeta reads and validates a run's meta.json.
func (w Workspace) ReadMeta(id string) (*Meta, error) {
	dir, err := w.RunDir(id)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("run %s: meta.json is not valid: %w", id, err)
	}
	if m.RunID != id {
		return nil, fmt.Errorf("run %s: meta.json names run %q", id, m.RunID)
	}
	return &m, nil
}

// WriteMeta writes meta.json atomically.
func (w Workspace) WriteMeta(m *Meta) error {
	dir, err := w.RunDir(m.RunID)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode meta for %s: %w", m.RunID, err)
	}
	return WriteFileAtomic(filepath.Join(dir, MetaFile), append(b, '\n'), 0o644)
}

// CreateRun makes a new run folder named after now, retrying on a
// same-second collision by moving to the next second. It returns the id.
func (w Workspace) CreateRun(now time.Time) (string, error) {
	if err := w.EnsureRecords(true); err != nil {
		return "", err
	}
	for i := 0; i < 120; i++ {
		id := NewRunID(now.Add(time.Duration(i) * time.Second))
		err := os.Mkdir(filepath.Join(w.Runs(), id), 0o755)
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
// whose names are not canonical run ids are ignored.
func (w Workspace) ListRunIDs() ([]string, error) {
	entries, err := os.ReadDir(w.Runs())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
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
	dir, err := w.RunDir(id)
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// LogPath is the path of a run's log.jsonl (id must be valid).
func (w Workspace) LogPath(id string) (string, error) {
	dir, err := w.RunDir(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, LogFile), nil
}
