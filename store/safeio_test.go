package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// plantKinds are the things a hostile workspace puts where a record
// belongs. Each must be refused without being opened or read whole:
// /dev/zero would exhaust memory, /dev/tty take the operator's keys, a
// FIFO block for ever, a sparse file of terabytes take hours.
var plantKinds = map[string]func(t *testing.T, path string){
	"link to /dev/zero": func(t *testing.T, path string) { must(t, os.Symlink("/dev/zero", path)) },
	"link to /dev/tty":  func(t *testing.T, path string) { must(t, os.Symlink("/dev/tty", path)) },
	"fifo":              func(t *testing.T, path string) { must(t, syscall.Mkfifo(path, 0o644)) },
	"huge sparse file": func(t *testing.T, path string) {
		f, err := os.Create(path)
		must(t, err)
		must(t, f.Truncate(1<<40))
		must(t, f.Close())
	},
	"relative link to a file outside": func(t *testing.T, path string) {
		must(t, os.Symlink(strings.Repeat("../", 12)+"etc/hostname", path))
	},
}

// TestRecordReadsRefusePlantedFiles plants each kind as each record and
// reads it through the store: every read returns at once with a
// *RecordError naming the file, and no read returns data.
func TestRecordReadsRefusePlantedFiles(t *testing.T) {
	const id = "run-20250101-120000"
	reads := map[string]func(w Workspace) error{
		MetaFile: func(w Workspace) error { _, err := w.ReadMeta(id); return err },
		StateFile: func(w Workspace) error {
			_, _, err := w.ReadState(id)
			return err
		},
		SummaryFile: func(w Workspace) error {
			if s := w.ReadSummary(id); s != "" {
				return errors.New("summary read: " + s)
			}
			_, err := ReadRecord(filepath.Join(w.Runs(), id, SummaryFile), MaxSummaryBytes)
			return err
		},
		PlanFile: func(w Workspace) error { _, err := w.ReadPlan(id); return err },
		LogFile: func(w Workspace) error {
			path, _ := w.LogPath(id)
			if _, err := CountLogLines(path); err == nil {
				return errors.New("CountLogLines read it")
			}
			_, err := ReadLog(path, func(int64, []byte) error { return errors.New("a line was read") })
			return err
		},
		PauseFile: func(w Workspace) error {
			if w.PauseMarked(id) {
				return errors.New("marked")
			}
			_, err := ReadRecord(filepath.Join(w.Runs(), id, PauseFile), MaxSmallRecordBytes)
			return err
		},
		SettingsFile: func(w Workspace) error { _, err := w.LoadSettings(); return err },
		QueueFile: func(w Workspace) error {
			_, err := w.Queue().List()
			var ce *QueueCorruptError
			if !errors.As(err, &ce) {
				return errors.New("not reported as a corrupt queue")
			}
			return err
		},
	}
	for name, read := range reads {
		for kind, plant := range plantKinds {
			t.Run(name+"/"+kind, func(t *testing.T) {
				w := sealedWorkspace(filepath.Join(t.TempDir(), "ws"))
				dir := filepath.Join(w.Runs(), id)
				if name == SettingsFile || name == QueueFile {
					dir = w.Orchestration()
				}
				must(t, os.MkdirAll(dir, 0o755))
				plant(t, filepath.Join(dir, name))
				done := make(chan error, 1)
				go func() { done <- read(w) }()
				var err error
				select {
				case err = <-done:
				case <-time.After(20 * time.Second):
					t.Fatal("the read blocked") // the hang detector: reads return at once
				}
				if err == nil || !strings.Contains(err.Error(), name) {
					t.Fatalf("read %s: %v, want an error naming it", kind, err)
				}
				if name != QueueFile && !IsRecordError(err) {
					t.Errorf("read %s: %v is not a RecordError", kind, err)
				}
			})
		}
	}
}

// TestRecordFoldersRefuseLinks plants the folders on the way as links and
// FIFOs: a listing or a read neither follows nor blocks.
func TestRecordFoldersRefuseLinks(t *testing.T) {
	const id = "run-20250101-120000"
	cases := map[string]func(t *testing.T, w Workspace, outside string){
		"records folder links out": func(t *testing.T, w Workspace, outside string) {
			must(t, os.Symlink(outside, w.Orchestration()))
		},
		"runs folder links out": func(t *testing.T, w Workspace, outside string) {
			must(t, os.Mkdir(w.Orchestration(), 0o755))
			must(t, os.Symlink(filepath.Join(outside, RunsDir), w.Runs()))
		},
		"runs folder is a fifo": func(t *testing.T, w Workspace, outside string) {
			must(t, os.Mkdir(w.Orchestration(), 0o755))
			must(t, syscall.Mkfifo(w.Runs(), 0o644))
		},
		"run folder links out": func(t *testing.T, w Workspace, outside string) {
			must(t, os.MkdirAll(w.Runs(), 0o755))
			must(t, os.Symlink(filepath.Join(outside, RunsDir, id), filepath.Join(w.Runs(), id)))
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			w := sealedWorkspace(filepath.Join(root, "ws"))
			outside := filepath.Join(root, "outside")
			// A run outside, sealed for this workspace, that must not be seen.
			must(t, os.MkdirAll(filepath.Join(outside, RunsDir, id), 0o755))
			must(t, os.MkdirAll(w.Dir, 0o755))
			plant(t, w, outside)
			victim := sealedWorkspace(outside)
			victim.Dir = w.Dir
			done := make(chan struct{})
			go func() {
				defer close(done)
				ids, _ := w.ListRunIDs()
				if len(ids) != 0 {
					t.Errorf("listing followed a link: %v", ids)
				}
				if _, err := w.ReadMeta(id); err == nil {
					t.Errorf("ReadMeta followed a link")
				}
				if err := w.WriteMeta(&Meta{RunID: id, Status: StatusRunning}); err == nil {
					t.Errorf("WriteMeta wrote through a link")
				}
				if err := w.WriteState(id, []byte(`{}`)); err == nil {
					t.Errorf("WriteState wrote through a link")
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("blocked")
			}
			if entries, _ := os.ReadDir(filepath.Join(outside, RunsDir, id)); len(entries) != 0 {
				t.Errorf("%d files written outside the workspace", len(entries))
			}
		})
	}
}

// TestLogLineCap reads a log whose second line is longer than MaxLogLine:
// the first line is delivered, and the long one ends the read with an
// error naming the log; no buffer grows past the cap.
func TestLogLineCap(t *testing.T) {
	w := sealedWorkspace(filepath.Join(t.TempDir(), "ws"))
	must(t, os.MkdirAll(w.Dir, 0o755))
	id, err := w.CreateRun(time.Now())
	must(t, err)
	path, _ := w.LogPath(id)
	f, err := os.Create(path)
	must(t, err)
	_, err = f.WriteString(`{"type":"run_started"}` + "\n")
	must(t, err)
	// A sparse tail: gigabytes of NUL bytes without a newline.
	must(t, f.Truncate(8<<30))
	must(t, f.Close())
	var got []string
	_, err = ReadLog(path, func(_ int64, rec []byte) error { got = append(got, string(rec)); return nil })
	if len(got) != 1 || !IsRecordError(err) || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("lines %q, error %v", got, err)
	}
	if _, err := CountLogLines(path); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("CountLogLines: %v", err)
	}
	if _, err := OpenLog(path); err == nil {
		t.Errorf("OpenLog appended to a log with an overlong line")
	}
}

// TestRecordReadsStillWork is the other edge: records Guildhall wrote
// read back, a missing one is fs.ErrNotExist, and a workspace reached
// through a link (the operator's choice) is fine.
func TestRecordReadsStillWork(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	must(t, os.MkdirAll(real, 0o755))
	must(t, os.Symlink(real, filepath.Join(root, "ws")))
	w := sealedWorkspace(filepath.Join(root, "ws"))
	id, err := w.CreateRun(time.Now())
	must(t, err)
	must(t, w.WriteMeta(&Meta{RunID: id, Status: StatusRunning}))
	must(t, w.WriteState(id, []byte(`{"runId":"`+id+`"}`)))
	must(t, w.WriteSettings(Settings{Effort: "quick"}))
	if m, err := w.ReadMeta(id); err != nil || m.Foreign {
		t.Fatalf("ReadMeta: %+v %v", m, err)
	}
	if _, sealed, err := w.ReadState(id); err != nil || !sealed {
		t.Errorf("ReadState: %v %v", sealed, err)
	}
	if s, err := w.LoadSettings(); err != nil || s.Effort != "quick" {
		t.Errorf("LoadSettings: %+v %v", s, err)
	}
	if _, err := w.ReadPlan(id); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadPlan of no plan: %v", err)
	}
	if ids, err := w.ListRunIDs(); err != nil || len(ids) != 1 {
		t.Errorf("ListRunIDs: %v %v", ids, err)
	}
}
