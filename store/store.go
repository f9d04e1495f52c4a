// Package store owns the .orchestration/ records of a workspace: run ids,
// the append-only event log, meta.json, the checkpoint, settings, the queue,
// summaries and plans, and the git exclude entry that hides them (with the
// check of where the workspace's repository keeps its git directory, which
// that entry and the git tools rely on).
//
// Every record that is replaced is written atomically (temp file, fsync,
// rename, fsync of the directory), so a crash leaves the previous complete
// version, never a torn one. The checkpoint, rewritten every turn, skips
// the fsyncs and is exchanged with a spare instead (SwapFile). The log is
// append-only.
package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// Dir names of the bookkeeping tree.
const (
	OrchestrationDir = ".orchestration"
	RunsDir          = "runs"
	MetaFile         = "meta.json"
	LogFile          = "log.jsonl"
	StateFile        = "state.json"
	SummaryFile      = "summary.txt"
	PlanFile         = "plan.md"
	SettingsFile     = "settings.json"
	QueueFile        = "queue.json"
)

// WriteFileAtomic replaces path with data: it writes a temp file beside it,
// fsyncs it, renames it over path and fsyncs the directory.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return writeAtomic(path, data, perm, true)
}

// ReplaceFile replaces path with data atomically (temp file and rename) but
// without fsync: a reader, or the next process after a kill -9, sees the
// old or the new file whole, never a torn one. It is for records rewritten
// every turn (the checkpoint), whose durability against power loss is not
// worth an fsync per turn; the log, fsynced at every turn boundary, stays
// the record of truth.
func ReplaceFile(path string, data []byte, perm os.FileMode) error {
	return writeAtomic(path, data, perm, false)
}

func writeAtomic(path string, data []byte, perm os.FileMode, durable bool) error {
	d, err := openRecordsDir(filepath.Dir(path), false)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer d.close()
	return d.writeAtomic(filepath.Base(path), data, perm, durable)
}
