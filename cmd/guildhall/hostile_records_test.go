package main

// A cloned repository commits its .orchestration records as links to
// devices, as FIFOs, or as files of terabytes: reading /dev/zero whole
// takes the process to out-of-memory, /dev/tty takes the operator's
// keystrokes, a FIFO blocks for ever. Through the real binary, with the
// operator's terminal a pseudo-terminal nobody types on and the address
// space capped, `runs`, `show`, `queue ls`, `run --no-input` and `serve`
// must each finish (each command has a deadline: a hang fails the test),
// name the planted record in one line, and read nothing else.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/ptytest"
	"github.com/guildhall/guildhall/store"
)

// recordsVAS caps the binary's address space: far above what a run
// needs, far below what reading /dev/zero whole would take.
const recordsVAS = 4 << 20 // KiB: 4 GiB

// plantedRuns are one run per planted record; each run's other records
// are ordinary (and foreign: the test, not Guildhall, wrote them).
var plantedRuns = map[string]string{
	store.MetaFile:    "run-20260101-000001",
	store.StateFile:   "run-20260101-000002",
	store.LogFile:     "run-20260101-000003",
	store.SummaryFile: "run-20260101-000004",
	store.PlanFile:    "run-20260101-000005",
}

var recordPlants = map[string]func(t *testing.T, path string){
	"link to /dev/zero": func(t *testing.T, path string) { mustOK(t, os.Symlink("/dev/zero", path)) },
	"link to /dev/tty":  func(t *testing.T, path string) { mustOK(t, os.Symlink("/dev/tty", path)) },
	"fifo":              func(t *testing.T, path string) { mustOK(t, syscall.Mkfifo(path, 0o644)) },
	"huge file": func(t *testing.T, path string) {
		f, err := os.Create(path)
		mustOK(t, err)
		mustOK(t, f.Truncate(64<<30)) // sparse: 64 GiB of NUL, no newline
		mustOK(t, f.Close())
	},
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// plantRecordKind builds a workspace whose settings.json, queue.json and
// one record of each planted run are plant.
func plantRecordKind(t *testing.T, h *hostile, ws string, plant func(*testing.T, string)) {
	t.Helper()
	orch := filepath.Join(ws, store.OrchestrationDir)
	for record, id := range plantedRuns {
		dir := filepath.Join(orch, store.RunsDir, id)
		mustOK(t, os.MkdirAll(dir, 0o755))
		meta := store.Meta{RunID: id, Task: "task of " + record, Effort: "standard", Status: store.StatusSuccess,
			StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), EntryRole: "solo"}
		b, _ := json.Marshal(meta)
		files := map[string]string{
			store.MetaFile:    string(b),
			store.StateFile:   `{"runId":"` + id + `"}`,
			store.LogFile:     `{"timestamp":"2026-01-01T00:00:00Z","type":"run_started","payload":{"task":"task of ` + record + `"}}` + "\n",
			store.SummaryFile: "summary of " + record + "\n",
			store.PlanFile:    "# plan of " + record + "\n",
		}
		for name, content := range files {
			if name == record {
				plant(t, filepath.Join(dir, name))
				continue
			}
			h.write(filepath.Join(dir, name), content, 0o644)
		}
	}
	plant(t, filepath.Join(orch, store.SettingsFile))
	plant(t, filepath.Join(orch, store.QueueFile))
}

// runCapped runs the binary with its address space capped and the
// operator's terminal a pseudo-terminal (so /dev/tty opens, and reading
// it would wait for keys nobody types); the deadline is the hang
// detector.
func (h *hostile) runCapped(dir string, args ...string) result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res := runCmd(h.t, h.cappedCmd(ctx, dir, args...))
	if ctx.Err() != nil {
		h.t.Fatalf("%v did not finish: a planted record blocked it\n%s", args, res)
	}
	if strings.Contains(res.stderr, "out of memory") || strings.Contains(res.stderr, "fatal error") {
		h.t.Fatalf("%v ran out of memory on a planted record\n%s", args, res)
	}
	return res
}

// cappedCmd is the binary with its address space capped, in a session of
// its own whose controlling terminal is a fresh pseudo-terminal.
func (h *hostile) cappedCmd(ctx context.Context, dir string, args ...string) *exec.Cmd {
	h.t.Helper()
	_, slavePath := ptytest.Open(h.t)
	slave, err := os.OpenFile(slavePath, os.O_RDWR|syscall.O_NOCTTY, 0)
	mustOK(h.t, err)
	h.t.Cleanup(func() { slave.Close() })
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, recordsVAS), h.bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = h.env()
	cmd.Stdin = slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	return cmd
}

// lineWith reports whether one line of text holds every part.
func lineWith(text string, parts ...string) bool {
	for _, line := range strings.Split(text, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestHostileRecordsDevicesAndFIFOs(t *testing.T) {
	for kind, plant := range recordPlants {
		t.Run(kind, func(t *testing.T) {
			h := newHostile(t)
			ws := h.workspace("records")
			plantRecordKind(t, h, ws, plant)
			h.snapshot()

			res := h.runCapped(ws, "runs")
			if res.code != 0 || !lineWith(res.stdout, plantedRuns[store.MetaFile], "foreign", store.MetaFile) {
				t.Errorf("runs does not report the planted meta.json in its line:\n%s", res)
			}
			for record, id := range plantedRuns {
				res := h.runCapped(ws, "show", id)
				switch record {
				case store.MetaFile:
					if res.code != exitError || !lineWith(res.stderr, id, store.MetaFile, "not a record Guildhall wrote") {
						t.Errorf("show of a planted meta.json:\n%s", res)
					}
				case store.LogFile:
					if res.code != 0 || !lineWith(res.stdout, "unavailable", store.LogFile) {
						t.Errorf("show does not report the planted log in one line:\n%s", res)
					}
				case store.SummaryFile:
					if res.code != 0 || strings.Contains(res.stdout, "Summary ") {
						t.Errorf("show of a run with a planted summary:\n%s", res)
					}
				default:
					if res.code != 0 || !strings.Contains(res.stdout, "task of "+record) {
						t.Errorf("show of a run with a planted %s:\n%s", record, res)
					}
				}
			}
			res = h.runCapped(ws, "queue", "ls")
			if res.code != exitError || !lineWith(res.stderr, store.QueueFile, "not a file Guildhall wrote") {
				t.Errorf("queue ls does not report the planted queue.json:\n%s", res)
			}
			res = h.runCapped(ws, "settings")
			if res.code != 0 || !lineWith(res.stderr, store.SettingsFile, "reads as empty") {
				t.Errorf("settings does not report the planted settings.json:\n%s", res)
			}
			script := writeScript(t, map[string][][]map[string]any{"solo": {finishTurn("success", "done")}})
			guild := h.soloGuild()
			res = h.runCapped(ws, "run", "--guild", guild, "--provider", "script", "--script", script, "--no-input", "An operator task")
			if res.code != 0 || !lineWith(res.stderr, "project settings ignored", store.SettingsFile) {
				t.Errorf("run beside planted records:\n%s", res)
			}
			serveRunsList(t, h, ws)
			h.assertSafe()
		})
	}
}

// serveRunsList starts `guildhall serve` capped as runCapped does, GETs
// the runs list and stops it.
func serveRunsList(t *testing.T, h *hostile, ws string) {
	t.Helper()
	cmd := h.cappedCmd(context.Background(), ws,
		"serve", "--web", "127.0.0.1:0", "--provider", "script", "--script", writeScript(t, map[string][][]map[string]any{}))
	pipe, err := cmd.StderrPipe()
	mustOK(t, err)
	mustOK(t, cmd.Start())
	exited := make(chan struct{})
	var stderr bytes.Buffer
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if u, ok := strings.CutPrefix(sc.Text(), "browser console: "); ok {
				urls <- u
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(40 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("serve did not stop on SIGINT")
		}
		if strings.Contains(stderr.String(), "out of memory") || strings.Contains(stderr.String(), "fatal error") {
			t.Errorf("serve ran out of memory:\n%s", stderr.String())
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-exited:
		t.Fatalf("serve exited at start:\n%s", stderr.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("serve never printed its URL (a planted record blocked it):\n%s", stderr.String())
	}
	base, tok, _ := strings.Cut(url, "?token=")
	code, body := do(t, http.MethodGet, strings.TrimSuffix(base, "/")+"/api/runs", tok, "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /api/runs: %d %s", code, body)
	}
	var list struct {
		Runs []struct {
			RunID string `json:"runId"`
		} `json:"runs"`
	}
	mustOK(t, json.Unmarshal(body, &list))
	for _, r := range list.Runs {
		if r.RunID == plantedRuns[store.MetaFile] {
			t.Errorf("the run whose meta.json is planted was listed: %s", body)
		}
	}
	// The readable planted runs, and the operator's run made before.
	if len(list.Runs) != len(plantedRuns) {
		t.Errorf("GET /api/runs lists %d runs, want %d: %s", len(list.Runs), len(plantedRuns), body)
	}
}
