package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A repository can commit .orchestration, or a file in it, as a symbolic
// link. Guildhall must refuse it rather than write run records, or
// truncate a lock, wherever the link points.
func TestRecordsRefuseLinksOutOfTheWorkspace(t *testing.T) {
	ctx := context.Background()
	ops := map[string]func(Workspace) error{
		"lock": func(w Workspace) error {
			l, err := w.AcquireLock()
			l.Release()
			return err
		},
		"create run": func(w Workspace) error { _, err := w.CreateRun(time.Now()); return err },
		"settings":   func(w Workspace) error { return w.WriteSettings(Settings{}) },
		"queue add": func(w Workspace) error {
			_, err := w.Queue().Add(ctx, QueueSpec{Task: "t"})
			return err
		},
	}
	cases := []struct {
		name, want string
		plant      func(t *testing.T, ws, outside string)
		affects    []string // the ops this plant must stop
	}{
		{"records folder is a link", "symbolic link", func(t *testing.T, ws, outside string) {
			must(t, os.Symlink(outside, filepath.Join(ws, OrchestrationDir)))
		}, []string{"lock", "create run", "settings", "queue add"}},
		{"records folder is a file", "not a directory", func(t *testing.T, ws, outside string) {
			must(t, os.WriteFile(filepath.Join(ws, OrchestrationDir), []byte("x"), 0o644))
		}, []string{"lock", "create run", "settings", "queue add"}},
		{"runs folder is a link", "symbolic link", func(t *testing.T, ws, outside string) {
			must(t, os.Mkdir(filepath.Join(ws, OrchestrationDir), 0o755))
			must(t, os.Symlink(outside, filepath.Join(ws, OrchestrationDir, RunsDir)))
		}, []string{"create run"}},
		{"lock is a link", "symbolic link", func(t *testing.T, ws, outside string) {
			must(t, os.Mkdir(filepath.Join(ws, OrchestrationDir), 0o755))
			must(t, os.Symlink(filepath.Join(outside, "victim"), filepath.Join(ws, OrchestrationDir, LockFile)))
		}, []string{"lock"}},
		{"queue lock is a relative link", "symbolic link", func(t *testing.T, ws, outside string) {
			must(t, os.Mkdir(filepath.Join(ws, OrchestrationDir), 0o755))
			rel, _ := filepath.Rel(filepath.Join(ws, OrchestrationDir), filepath.Join(outside, "victim"))
			must(t, os.Symlink(rel, filepath.Join(ws, OrchestrationDir, QueueLockFile)))
		}, []string{"queue add"}},
		{"lock is a hard link", "hard links", func(t *testing.T, ws, outside string) {
			must(t, os.Mkdir(filepath.Join(ws, OrchestrationDir), 0o755))
			must(t, os.Link(filepath.Join(outside, "victim"), filepath.Join(ws, OrchestrationDir, LockFile)))
		}, []string{"lock"}},
		{"queue lock is a hard link", "hard links", func(t *testing.T, ws, outside string) {
			must(t, os.Mkdir(filepath.Join(ws, OrchestrationDir), 0o755))
			must(t, os.Link(filepath.Join(outside, "victim"), filepath.Join(ws, OrchestrationDir, QueueLockFile)))
		}, []string{"queue add"}},
	}
	for _, c := range cases {
		for _, op := range c.affects {
			t.Run(c.name+"/"+op, func(t *testing.T) {
				root := t.TempDir()
				ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
				must(t, os.Mkdir(ws, 0o755))
				must(t, os.Mkdir(outside, 0o755))
				victim := filepath.Join(outside, "victim")
				must(t, os.WriteFile(victim, []byte("precious\n"), 0o644))
				c.plant(t, ws, outside)
				err := ops[op](Workspace{Dir: ws})
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s: error %v, want one saying %q", op, err, c.want)
				}
				if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
					t.Errorf("the file outside the workspace now holds %q", b)
				}
				if fi, _ := os.Stat(victim); fi.Mode().Perm() != 0o644 {
					t.Errorf("the file outside the workspace changed mode: %v", fi.Mode())
				}
				if entries, _ := os.ReadDir(outside); len(entries) != 1 {
					t.Errorf("%d entries outside the workspace, want only the victim file", len(entries))
				}
			})
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestLogAndSpareRefuseHardLinks plants hard links to a file outside the
// workspace where a run's log and its checkpoint's spare go: the log is
// refused, the spare is made afresh, and the outside file is unchanged.
func TestLogAndSpareRefuseHardLinks(t *testing.T) {
	root := t.TempDir()
	ws := sealedWorkspace(filepath.Join(root, "ws"))
	must(t, os.MkdirAll(ws.Dir, 0o755))
	victim := filepath.Join(root, "victim")
	must(t, os.WriteFile(victim, []byte("precious\n"), 0o600))
	id, err := ws.CreateRun(time.Now())
	must(t, err)
	dir, _ := ws.RunDir(id)
	must(t, os.Link(victim, filepath.Join(dir, LogFile)))
	if _, err := OpenLog(filepath.Join(dir, LogFile)); err == nil || !strings.Contains(err.Error(), "hard links") {
		t.Errorf("OpenLog of a hard link: %v", err)
	}
	must(t, os.Link(victim, SparePath(filepath.Join(dir, StateFile))))
	for i := 0; i < 3; i++ {
		must(t, ws.WriteState(id, []byte(`{"runId":"`+id+`"}`)))
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the outside file now holds %q", b)
	}
	if _, sealed, err := ws.ReadState(id); err != nil || !sealed {
		t.Errorf("checkpoint after a planted spare: sealed=%v %v", sealed, err)
	}
}
