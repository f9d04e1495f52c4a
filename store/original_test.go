package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// originalRecords is a workspace whose records the original system wrote.
const originalRecords = "testdata/original-records"

// TestReadsTheOriginalsMeta: the original's names for the times and for
// the error's technical detail are read; its records are foreign (never
// sealed) and recognised as the original's.
func TestReadsTheOriginalsMeta(t *testing.T) {
	w := Workspace{Dir: originalRecords, Seal: NewSealer([]byte("k"), originalRecords)}
	ids, err := w.ListRunIDs()
	if err != nil || strings.Join(ids, " ") != "run-20250601-130000 run-20250601-120000 run-20250601-113000 run-20250601-101500" {
		t.Fatalf("ids = %v %v", ids, err)
	}
	m, err := w.ReadMeta("run-20250601-101500")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 6, 1, 10, 15, 0, 123e6, time.UTC)
	end := time.Date(2025, 6, 1, 10, 21, 42, 456e6, time.UTC)
	if !m.StartedAt.Equal(start) || m.EndedAt == nil || !m.EndedAt.Equal(end) {
		t.Fatalf("times = %v %v", m.StartedAt, m.EndedAt)
	}
	if !m.Foreign || !m.OriginalFormat || m.GuildPath != "/app/guild" || m.Result.Artifacts[0] != "src/cli.ts" {
		t.Fatalf("meta = %+v", m)
	}
	b, err := w.ReadMeta("run-20250601-113000")
	if err != nil {
		t.Fatal(err)
	}
	if e := b.Result.Error; e == nil || e.Kind != "llm_unavailable" || !strings.Contains(string(e.Detail), "upstream connect error") {
		t.Fatalf("the result card's error.details is the detail: %+v", b.Result.Error)
	}
	c, err := w.ReadMeta("run-20250601-120000")
	if err != nil || c.EndedAt != nil || c.Status != StatusRunning {
		t.Fatalf("a running meta: %+v %v", c, err)
	}
}

// TestWritesWhatTheOriginalReads: a meta written here carries the
// original's names beside Guildhall's, and reads back the same.
func TestWritesWhatTheOriginalReads(t *testing.T) {
	dir := t.TempDir()
	w := Workspace{Dir: dir, Seal: NewSealer([]byte("k"), dir)}
	if err := w.EnsureRecords(true); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC)
	end := start.Add(90 * time.Second)
	m := &Meta{RunID: "run-20250602-080000", Task: "t", Effort: "quick", Status: StatusError, StartedAt: start, EndedAt: &end, GuildPath: "seed",
		Result: &MetaResult{Status: "error", Summary: "s", Error: &MetaError{Kind: "llm_unavailable", Detail: json.RawMessage(`{"statusCode":503}`)}}}
	m.Error = m.Result.Error
	if err := os.MkdirAll(filepath.Join(w.Runs(), m.RunID), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteMeta(m); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(w.Runs(), m.RunID, MetaFile))
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if v["startTime"] != "2025-06-02T08:00:00Z" || v["endTime"] != "2025-06-02T08:01:30Z" || v["startedAt"] != "2025-06-02T08:00:00Z" || v["guildPath"] != "seed" {
		t.Fatalf("times and guildPath as written: %s", raw)
	}
	e := v["error"].(map[string]any)
	if e["message"] != "" || e["details"] == nil || e["detail"] == nil {
		t.Fatalf("the error carries message (a string, as the original requires) and details: %v", e)
	}
	back, err := w.ReadMeta(m.RunID)
	if err != nil || back.Foreign || back.OriginalFormat || !back.StartedAt.Equal(start) || !back.EndedAt.Equal(end) || !strings.Contains(string(back.Error.Detail), "503") {
		t.Fatalf("read back: %+v %v", back, err)
	}
}

func TestOriginalTimesMustParse(t *testing.T) {
	var m Meta
	if err := json.Unmarshal([]byte(`{"runId": "run-20250601-101500", "startTime": "yesterday"}`), &m); err == nil || !strings.Contains(err.Error(), `startTime "yesterday"`) {
		t.Fatalf("an unparsable startTime: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"runId": "run-20250601-101500", "startTime": "2025-06-01T10:00:00Z", "endTime": 5}`), &m); err == nil {
		t.Fatal("a non-string endTime must be an error")
	}
}
