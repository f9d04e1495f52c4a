package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/sandboxtest"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// TestKillNineMidCommandIsNotRerun kills the real binary while a command
// of a scripted run is running (it appended a line to a file and sleeps),
// then resumes the run: the command must not run a second time (the file
// keeps one line), and the model must get a result saying the call was
// cut by the crash and not run again. (The runner's tests cover a call
// that finished before the crash, and reads, which may run again.)
func TestKillNineMidCommandIsNotRerun(t *testing.T) {
	h := newHostile(t)
	sandboxtest.Need(t)
	for _, c := range []struct {
		tool   string
		args   map[string]any
		marker string
	}{
		{"run_shell", map[string]any{"command": "echo ran >> marker.txt; sleep 30"}, "marker.txt"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			ws := h.workspace("crash-" + c.tool)
			guild := h.roleGuild(filepath.Join(h.root, "guild-"+c.tool), "solo", "Do the task.", "run_shell", "read_file", "finish")
			script := writeScript(t, map[string][][]map[string]any{"solo": {
				{{"name": c.tool, "args": c.args}},
				finishTurn("success", "appended"),
			}})
			args := []string{"--workspace", ws, "--guild", guild, "--provider", "script", "--script", script, "--no-input"}
			cmd := exec.Command(h.bin, append([]string{"run"}, append(args, "Append a line")...)...)
			cmd.Dir, cmd.Env = ws, h.env()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(ws, c.marker)
			waitUntil(t, "the command to write its line", 30*time.Second, func() bool { return strings.Count(readFile(t, marker), "ran") == 1 })
			time.Sleep(200 * time.Millisecond) // well inside the sleep
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()

			w := store.Workspace{Dir: ws}
			ids, _ := w.ListRunIDs()
			if len(ids) != 1 {
				t.Fatalf("runs: %v", ids)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			res := exec.CommandContext(ctx, h.bin, append([]string{"resume"}, append(args, ids[0])...)...)
			res.Dir, res.Env = ws, h.env()
			out, err := res.CombinedOutput()
			if err != nil {
				t.Fatalf("resume: %v\n%s", err, out)
			}
			if n := strings.Count(readFile(t, marker), "ran"); n != 1 {
				t.Errorf("the command ran %d times: a resume ran it again", n)
			}
			_, evs := readRun(t, ws)
			cut, resumedAt := 0, -1
			for i, e := range evs {
				if e.Type == event.RunResumed {
					resumedAt = i
				}
				if e.Type != event.ToolResult {
					continue
				}
				var p event.ToolResultPayload
				if err := json.Unmarshal(e.Payload, &p); err != nil {
					t.Fatal(err)
				}
				if p.Kind == runner.KindCutByCrash {
					cut++
					if p.Tool != c.tool || resumedAt < 0 || !strings.Contains(string(p.Result), "was not run again") {
						t.Errorf("the cut result: %+v (after run_resumed at %d)", p, resumedAt)
					}
				}
			}
			if cut != 1 {
				t.Errorf("%d cut_by_crash results in the log, want 1\n%s", cut, out)
			}
			meta, _ := w.ReadMeta(ids[0])
			if meta.Status != store.StatusSuccess {
				t.Errorf("the resumed run ended %s", meta.Status)
			}
			if _, err := os.Stat(filepath.Join(ws, ".orchestration", "runs", ids[0], store.StateFile)); err == nil {
				t.Error("a finished run kept its checkpoint")
			}
		})
	}
}
