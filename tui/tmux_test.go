package tui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/render/labelset"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/store"
)

// The tmux tests run the real program in a real terminal: the test binary
// re-runs itself inside a tmux pane as a console over a fixture, and the
// test drives it with send-keys and reads it with capture-pane and
// show-buffer.

const tmuxConsoleEnv = "GUILDHALL_TUI_TEST_CONSOLE"

// tmuxNotesEnv holds the console's start-up notes, one a line.
const tmuxNotesEnv = "GUILDHALL_TUI_TEST_NOTES"

// runTmuxConsoleIfAsked runs the console over the fixture the environment
// names and exits, when the test binary was started as that console.
func runTmuxConsoleIfAsked() {
	fixture := os.Getenv(tmuxConsoleEnv)
	if fixture == "" {
		return
	}
	if err := tmuxConsole(fixture); err != nil {
		fmt.Fprintln(os.Stderr, "console:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func tmuxConsole(fixture string) error {
	b, err := os.ReadFile(fixture)
	if err != nil {
		return err
	}
	var evs []event.Event
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event.Event
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return err
		}
		e.Seq = int64(len(evs))
		evs = append(evs, e)
	}
	g, err := runner.LoadGuild(seed.Guild(), "seed guild")
	if err != nil {
		return err
	}
	labels, err := labelset.FromGuild(g)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "tmux-console-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ws := store.Workspace{Dir: dir}
	var id event.RunStartedPayload
	if len(evs) > 0 {
		_ = evs[0].Decode(&id)
	}
	runDir, err := ws.RunDir(id.RunID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return err
	}
	logPath, _ := ws.LogPath(id.RunID)
	if err := os.WriteFile(logPath, b, 0o644); err != nil {
		return err
	}
	bus := runner.NewBus()
	bus.Reset(evs)
	fs := &fakeSession{bus: bus, ws: ws, answers: map[string]string{}}
	var notes []string
	if n := os.Getenv(tmuxNotesEnv); n != "" {
		notes = strings.Split(n, "\n")
	}
	return Run(context.Background(), fs, Options{Labels: labels, NoAnimation: true, MarkdownStyle: "notty", Notes: notes}, RunOptions{})
}

// tmuxServer is a private tmux server for one test.
type tmuxServer struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T) *tmuxServer {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	ts := &tmuxServer{t: t, socket: fmt.Sprintf("guildhall-test-%d-%d", os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", ts.socket, "kill-server").Run() })
	return ts
}

func (ts *tmuxServer) run(args ...string) string {
	ts.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", ts.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		ts.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start runs the console over fixture in a w × h pane, under tmux's
// set-clipboard on.
func (ts *tmuxServer) start(fixture string, w, h int) {
	ts.t.Helper()
	ts.startWith(fixture, w, h, "on")
}

// startWith runs the console over fixture in a w × h pane with tmux's
// set-clipboard set to clipboard and the extra environment env, and
// returns the console's home (its clipboard file is
// HOME/state/guildhall/clipboard.txt).
func (ts *tmuxServer) startWith(fixture string, w, h int, clipboard string, env ...string) string {
	ts.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		ts.t.Fatal(err)
	}
	abs, err := filepath.Abs(fixture)
	if err != nil {
		ts.t.Fatal(err)
	}
	home := ts.t.TempDir()
	extra := ""
	for _, e := range env {
		extra += " " + shellWord(e)
	}
	cmd := fmt.Sprintf("env %s=%s HOME=%s XDG_STATE_HOME=%s%s %s -test.run=^$", tmuxConsoleEnv, abs, home, filepath.Join(home, "state"), extra, exe)
	// The option is set before the console starts, as a tmux.conf would.
	ts.run("start-server", ";", "set-option", "-g", "set-clipboard", clipboard, ";",
		"new-session", "-d", "-s", "t", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmd)
	return home
}

// shellWord quotes s for sh.
func shellWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// screen is the pane's text.
func (ts *tmuxServer) screen() string { return ts.run("capture-pane", "-p", "-t", "t") }

// waitFor polls until ok holds, failing after a while with what was seen.
func (ts *tmuxServer) waitFor(what string, ok func() bool) {
	ts.t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return
		}
	}
	ts.t.Fatalf("timed out waiting for %s; the screen:\n%s", what, ts.screen())
}

// buffer is tmux's newest paste buffer, or "" with none.
func (ts *tmuxServer) buffer() string {
	out, err := exec.Command("tmux", "-L", ts.socket, "show-buffer").Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// TestTmuxCopyReachesTheClipboard: in tmux with set-clipboard on, y puts
// exactly the focused text in tmux's buffer, through OSC 52 written by the
// program.
func TestTmuxCopyReachesTheClipboard(t *testing.T) {
	ts := newTmux(t)
	ts.start("testdata/demo.jsonl", 80, 24)
	ts.waitFor("the result card", func() bool { return strings.Contains(ts.screen(), "Result · run-20261201-104723") })

	var want string
	for _, e := range loadEvents(t, "demo.jsonl") {
		var p event.RunStatusPayload
		if e.Type == event.RunStatus && e.Decode(&p) == nil && p.Card != nil {
			want = strings.TrimSpace(p.Card.Summary)
		}
	}
	ts.run("send-keys", "-t", "t", "y")
	ts.waitFor("the summary in tmux's buffer", func() bool { return ts.buffer() == want })
	ts.waitFor("the copy notice", func() bool {
		return strings.Contains(strings.Join(strings.Fields(ts.screen()), " "), "Copied the result summary")
	})

	// The mouse is the terminal's: no mouse mode is on until M.
	if mode := ts.run("display-message", "-p", "-t", "t", "#{mouse_any_flag}#{mouse_button_flag}#{mouse_all_flag}"); strings.TrimSpace(mode) != "000" {
		t.Errorf("mouse modes %q at start, want none", mode)
	}
	ts.run("send-keys", "-t", "t", "M")
	ts.waitFor("mouse capture on", func() bool {
		return strings.TrimSpace(ts.run("display-message", "-p", "-t", "t", "#{mouse_button_flag}")) == "1"
	})

	// A tool result from the transcript: its text, not escaped JSON.
	// Keys after Escape wait, or the terminal reads them as alt+key.
	ts.run("send-keys", "-t", "t", "Escape")
	ts.waitFor("the card to close", func() bool { return !strings.Contains(ts.screen(), "Result · run-") })
	ts.run("send-keys", "-t", "t", "M", "Down", "Down", "t")
	ts.waitFor("the transcript", func() bool { return strings.Contains(ts.screen(), "System prompt") })
	ts.run("send-keys", "-t", "t", "/", "slugkit", "Enter")
	ts.waitFor("the match", func() bool {
		return strings.Contains(ts.screen(), "of") && strings.Contains(ts.screen(), "“slugkit”")
	})
	ts.run("send-keys", "-t", "t", "y")
	ts.waitFor("the message in the buffer", func() bool {
		b := ts.buffer()
		return strings.HasPrefix(b, "## Result of read_file") && strings.Contains(b, "# slugkit") && !strings.Contains(b, `\n`)
	})
}

// TestTmuxCopyUnderSetClipboardExternal: under tmux's default,
// set-clipboard external, tmux drops the OSC 52 an application writes.
// y says so, points to the setting, and copies to the 0600 file instead:
// only what the inspector shows, never the command hidden in the tool's
// output. With set-clipboard on, y reaches tmux's buffer, and Y the raw
// text without a control in it.
func TestTmuxCopyUnderSetClipboardExternal(t *testing.T) {
	fixture := filepath.Join(t.TempDir(), "hostile.jsonl")
	writeEvents(t, fixture, hostileOutputEvents(t))
	url := "http://127.0.0.1:8777/?token=" + strings.Repeat("0123456789abcdef", 4)

	ts := newTmux(t)
	home := ts.startWith(fixture, 80, 24, "external", tmuxNotesEnv+"=browser console: "+url)
	file := filepath.Join(home, "state", "guildhall", "clipboard.txt")
	ts.waitFor("the sequence", func() bool { return strings.Contains(ts.screen(), "Orchestrator") })
	ts.run("send-keys", "-t", "t", "tab", "G", "Enter")
	ts.waitFor("the inspector", func() bool { return strings.Contains(ts.screen(), "echo SAFE-SETUP") })
	ts.run("send-keys", "-t", "t", "y")
	ts.waitFor("the external notice", func() bool {
		s := strings.Join(strings.Fields(ts.screen()), " ")
		return strings.Contains(s, "set-clipboard is external") && strings.Contains(s, "set -g set-clipboard on")
	})
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no clipboard file: %v; the screen:\n%s", err, ts.screen())
	}
	if got := string(b); !strings.Contains(got, "echo SAFE-SETUP") || strings.Contains(got, "evil.example") || strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("the file holds %q, want only what the inspector shows", got)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("clipboard file mode %v, want 0600", fi.Mode().Perm())
	}
	if buf := ts.buffer(); buf != "" {
		t.Errorf("tmux has a buffer %q under external", buf)
	}

	// The notes' URL: y copies it whole, and the box does not wrap it.
	ts.run("send-keys", "-t", "t", "Escape")
	ts.waitFor("the inspector to close", func() bool { return !strings.Contains(ts.screen(), "echo SAFE-SETUP") })
	ts.run("send-keys", "-t", "t", "N")
	ts.waitFor("the notes", func() bool { return strings.Contains(ts.screen(), "token=0123") })
	if s := ts.screen(); strings.Contains(s, "cdef0123456789abcdef │") || strings.Count(s, "0123456789abcdef") > 4 {
		t.Errorf("the URL wraps inside the box:\n%s", s)
	}
	ts.run("send-keys", "-t", "t", "y")
	ts.waitFor("the URL in the file", func() bool {
		b, _ := os.ReadFile(file)
		return string(b) == url
	})

	// set-clipboard on: y and Y reach tmux's buffer.
	ts.run("set-option", "-g", "set-clipboard", "on")
	ts.run("send-keys", "-t", "t", "Escape")
	ts.waitFor("the notes to close", func() bool { return !strings.Contains(ts.screen(), "token=0123") })
	ts.run("send-keys", "-t", "t", "y")
	ts.waitFor("the shown text in tmux's buffer", func() bool {
		b := ts.buffer()
		return strings.Contains(b, "echo SAFE-SETUP") && !strings.Contains(b, "evil.example")
	})
	ts.run("send-keys", "-t", "t", "Y")
	ts.waitFor("the raw text in tmux's buffer", func() bool { return strings.Contains(ts.buffer(), "evil.example") })
	if b := ts.buffer(); strings.ContainsAny(b, "\x1b\x07\r\u009b") {
		t.Errorf("Y put a control in the buffer: %q", b)
	}
	ts.waitFor("the raw notice", func() bool {
		return strings.Contains(strings.Join(strings.Fields(ts.screen()), " "), "raw (as recorded")
	})
}
