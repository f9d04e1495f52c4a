package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRunIDs(t *testing.T) {
	at := time.Date(2026, 11, 29, 20, 42, 7, 0, time.FixedZone("X", 3600))
	if got := NewRunID(at); got != "run-20261129-194207" {
		t.Fatalf("NewRunID = %s, want UTC run-20261129-194207", got)
	}
	for _, bad := range []string{"", "run-2026112-194207", "run-20261129-194207/..", "../run-20261129-194207", "run-20261399-000000", "RUN-20261129-194207", "run-20261129-194207 ", "run-20261129-246060"} {
		if ValidRunID(bad) {
			t.Errorf("ValidRunID(%q) = true", bad)
		}
		if _, err := (Workspace{Dir: t.TempDir()}).RunDir(bad); err == nil {
			t.Errorf("RunDir(%q) must refuse a non-canonical id", bad)
		}
	}
}

func TestCreateRunRetriesCollisions(t *testing.T) {
	ws := Workspace{Dir: t.TempDir()}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, err := ws.CreateRun(now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ws.CreateRun(now)
	if err != nil {
		t.Fatal(err)
	}
	if a != "run-20260102-030405" || b != "run-20260102-030406" {
		t.Fatalf("ids %s %s", a, b)
	}
	ids, _ := ws.ListRunIDs()
	if strings.Join(ids, ",") != b+","+a {
		t.Fatalf("ListRunIDs should be newest first: %v", ids)
	}
}

func TestLogTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	w, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range []string{`{"type":"a"}`, `{"type":"b"}`} {
		if _, err := w.Append([]byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	// A crash mid-write leaves half a line.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"c","payl`)
	f.Close()

	if n, err := CountLogLines(path); err != nil || n != 3 {
		t.Fatalf("CountLogLines = %d, %v; want 3 (two lines and a torn one)", n, err)
	}
	var seen []string
	problems, err := ReadLog(path, func(seq int64, rec []byte) error { seen = append(seen, string(rec)); return nil })
	if err != nil || len(seen) != 2 || len(problems) != 1 || !problems[0].Torn || problems[0].Line != 2 {
		t.Fatalf("seen=%v problems=%+v err=%v", seen, problems, err)
	}
	if !strings.Contains(problems[0].Error(), "torn") {
		t.Fatalf("problem message should say the line is torn: %s", problems[0].Error())
	}
	// Reopening repairs the tail so the next record starts on its own line.
	w, err = OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := w.Append([]byte(`{"type":"d"}`))
	w.Close()
	if seq != 3 {
		t.Fatalf("seq after repair = %d, want 3", seq)
	}
	seen = nil
	problems, _ = ReadLog(path, func(seq int64, rec []byte) error { seen = append(seen, string(rec)); return nil })
	if len(seen) != 3 || seen[2] != `{"type":"d"}` || len(problems) != 1 || problems[0].Torn {
		t.Fatalf("after repair seen=%v problems=%+v", seen, problems)
	}
	if _, err := w.Append([]byte("{\n}")); err == nil {
		t.Fatal("a record with a newline must be refused")
	}
}

func TestWorkspaceLock(t *testing.T) {
	ws := Workspace{Dir: t.TempDir()}
	if h := ws.Holder(); h != nil {
		t.Fatalf("Holder of a fresh workspace = %v, want none", h)
	}
	l, err := ws.AcquireLock()
	if err != nil {
		t.Fatal(err)
	}
	_ = l.SetRun("run-20260102-030405")
	want := "workspace busy: run run-20260102-030405 by pid " + strconv.Itoa(os.Getpid())
	_, err = ws.AcquireLock()
	var busy *BusyError
	if !errors.As(err, &busy) || err.Error() != want {
		t.Fatalf("second lock: %v", err)
	}
	if h := ws.Holder(); h == nil || h.Error() != want {
		t.Fatalf("Holder while held = %v, want %q", h, want)
	}
	l.Release()
	if h := ws.Holder(); h != nil {
		t.Fatalf("Holder after release = %v, want none", h)
	}
	l2, err := ws.AcquireLock()
	if err != nil {
		t.Fatalf("lock after release (and after Holder looked): %v", err)
	}
	l2.Release()
}

func TestSettingsMalformedReadsAsAbsent(t *testing.T) {
	ws := Workspace{Dir: t.TempDir()}
	os.MkdirAll(ws.Orchestration(), 0o755)
	os.WriteFile(filepath.Join(ws.Orchestration(), SettingsFile), []byte(`{"effort": "thor`), 0o644)
	if s := ws.ReadSettings(); s != (Settings{}) {
		t.Fatalf("torn settings should read as empty: %+v", s)
	}
	if err := ws.WriteSettings(Settings{Effort: "quick"}); err != nil {
		t.Fatal(err)
	}
	if s := ws.ReadSettings(); s.Effort != "quick" {
		t.Fatalf("settings = %+v", s)
	}
}

func TestMetaRoundTripAndValidation(t *testing.T) {
	ws := Workspace{Dir: t.TempDir()}
	id, _ := ws.CreateRun(time.Now())
	m := &Meta{RunID: id, Task: "t", Status: StatusRunning, StartedAt: time.Now().UTC()}
	if err := ws.WriteMeta(m); err != nil {
		t.Fatal(err)
	}
	got, err := ws.ReadMeta(id)
	if err != nil || got.Task != "t" {
		t.Fatalf("%+v %v", got, err)
	}
	dir, _ := ws.RunDir(id)
	os.WriteFile(filepath.Join(dir, MetaFile), []byte(`{"runId":"run-20000101-000000"}`), 0o644)
	if _, err := ws.ReadMeta(id); err == nil {
		t.Fatal("a meta.json naming another run must be refused")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Fatalf("atomic write left a temp file: %s", e.Name())
		}
	}
}
