package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// buildBinary compiles guildhall into a temporary folder of tb.
//
// A benchmark given GUILDHALL_BENCH_BIN runs that binary instead, so that
// two builds can be measured in turns by the same benchmark
// (docs/operations.md "Performance").
func buildBinary(tb testing.TB) string {
	tb.Helper()
	if _, isBench := tb.(*testing.B); isBench {
		if bin := os.Getenv("GUILDHALL_BENCH_BIN"); bin != "" {
			return bin
		}
	}
	bin := filepath.Join(tb.TempDir(), "guildhall")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		tb.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func logLines(dir string) int {
	matches, _ := filepath.Glob(filepath.Join(dir, ".orchestration", "runs", "run-*", "log.jsonl"))
	if len(matches) == 0 {
		return 0
	}
	b, _ := os.ReadFile(matches[0])
	return bytes.Count(b, []byte{'\n'})
}

// TestKillNineAndResume kills the real binary with SIGKILL at many points
// of the scripted multi-role demo, resumes, and checks the run completes
// with every role started and finished once and the workspace fixed.
func TestKillNineAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	points := []int{2, 4, 6, 9, 12, 15, 19, 23, 27, 32, 37, 42, 48, 54, 60, 66, 72, 78, 85, 92, 98}
	for _, at := range points {
		dir, id := killedDemo(t, bin, at)
		ws := store.Workspace{Dir: dir}
		// The killed log parses line by line (a torn last line is reported,
		// not fatal).
		path, _ := ws.LogPath(id)
		if _, err := store.ReadLog(path, func(int64, []byte) error { return nil }); err != nil {
			t.Fatalf("kill at %d: log unreadable: %v", at, err)
		}
		meta, _ := ws.ReadMeta(id)
		if meta.Status != store.StatusSuccess {
			res := exec.Command(bin, "resume", "--workspace", dir, "--provider", "script", "--no-input", id)
			out, err := res.CombinedOutput()
			if err != nil {
				t.Fatalf("kill at %d: resume failed: %v\n%s", at, err, out)
			}
		}
		checkCompleted(t, at, ws, id, dir)
	}
}

func checkCompleted(t *testing.T, at int, ws store.Workspace, id, dir string) {
	t.Helper()
	meta, err := ws.ReadMeta(id)
	if err != nil || meta.Status != store.StatusSuccess {
		t.Fatalf("kill at %d: meta %+v %v", at, meta, err)
	}
	starts, finishes := map[string]int{}, map[string]int{}
	path, _ := ws.LogPath(id)
	problems, _ := store.ReadLog(path, func(_ int64, rec []byte) error {
		var e event.Event
		if err := jsonUnmarshal(rec, &e); err != nil {
			return nil
		}
		var p struct{ RoleID string }
		_ = e.Decode(&p)
		switch e.Type {
		case event.RoleStart:
			starts[p.RoleID]++
		case event.RoleFinished:
			finishes[p.RoleID]++
		}
		return nil
	})
	if len(problems) > 1 {
		t.Errorf("kill at %d: %d unreadable log lines; at most the torn one is expected", at, len(problems))
	}
	for _, role := range []string{"orchestrator-0-1", "planner-1-2", "coder-1-3", "acceptance_lead-1-4", "acceptance_reviewer-2-5"} {
		if starts[role] != 1 || finishes[role] != 1 {
			t.Errorf("kill at %d: %s started %d and finished %d times", at, role, starts[role], finishes[role])
		}
	}
	out, err := exec.Command("sh", filepath.Join(dir, "test.sh")).CombinedOutput()
	if err != nil {
		t.Errorf("kill at %d: the workspace is not fixed: %v\n%s", at, err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "FAIL") {
			t.Errorf("kill at %d: %s", at, sc.Text())
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
