package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guildhall/guildhall/web/discovery"
)

// hostileControl is what an attacker's console puts in every string it
// sends: the clipboard written through OSC 52, the pane's title set, the
// screen cleared. Its two payloads must never reach the terminal.
const hostileControl = "\x1b]52;c;UFdORUQtQ0xJUA==\x07\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[3J"

// fakeConsole is an attacker's console: it answers the API attach speaks,
// with hostileControl in the setup line and the task, and a hello whose
// run id is hello's current value.
func fakeConsole(t *testing.T, hello *atomic.Value) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json200 := func(v any) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(v)
		}
		switch r.URL.Path {
		case "/api/config":
			json200(map[string]any{"queue": false, "setup": []string{"SETUP-MARK" + hostileControl}})
		case "/api/health":
			json200(map[string]any{"state": "ok"})
		case "/api/questions":
			json200(map[string]any{"questions": []any{}})
		case "/api/stream":
			id := hello.Load().(string)
			h, _ := json.Marshal(map[string]any{"runId": id, "active": true})
			ev, _ := json.Marshal(map[string]any{"runId": "run-20260101-000000", "seq": 0, "timestamp": time.Now().UTC(), "type": "run_started",
				"payload": map[string]any{"runId": "run-20260101-000000", "task": "TASK-MARK" + hostileControl, "effort": "standard", "entryRole": "orchestrator"}})
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: hello\ndata: %s\n\nid: run-20260101-000000:0\nevent: log\ndata: %s\n\nevent: ready\ndata: {}\n\n", h, ev)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"ok":false,"error":"not_found"}`)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestAttachToAHostileConsole plants a discovery file that points attach
// at an attacker's console, and runs the real binary under tmux inside
// script(1), which records every byte it writes to the terminal. A hello
// whose run id carries terminal control is refused with a plain message;
// with a good run id the console opens, and neither the setup line nor
// the task (nor the attach notice) writes the clipboard, sets the title or
// clears the screen.
func TestAttachToAHostileConsole(t *testing.T) {
	h := newHostile(t)
	a := newAttachTmux(t, h)
	ws := h.workspace("hostile-console")
	canon, err := discovery.Canonical(ws)
	if err != nil {
		t.Fatal(err)
	}
	var hello atomic.Value
	hello.Store("run-20260101-000000" + hostileControl)
	fake := fakeConsole(t, &hello)
	if err := os.MkdirAll(h.discoveryDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(discovery.Record{URL: fake.URL + "/", Token: "attacker-token", PID: os.Getpid(), Workspace: canon})
	h.write(filepath.Join(h.discoveryDir(), discovery.FileName(canon)), string(rec), 0o600)

	// attach runs in a pane, inside script(1) recording the raw bytes.
	attach := func(name string) string {
		t.Helper()
		raw := filepath.Join(h.root, name+".raw")
		parts := []string{"exec", "env", "-i"}
		for _, e := range h.env("TERM=xterm-256color") {
			if e != "TERM=dumb" {
				parts = append(parts, shellQuote(e))
			}
		}
		parts = append(parts, shellQuote(h.bin), "attach", "--workspace", shellQuote(ws))
		a.tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "30",
			"script -qfec "+shellQuote(strings.Join(parts, " "))+" "+shellQuote(raw))
		return raw
	}
	assertClean := func(what string, raw []byte) {
		t.Helper()
		for _, bad := range []string{"PWNED-TITLE", "UFdORUQtQ0xJUA==", "\x1b]52;", "MARK\x1b[2J", "MARK\x1b]"} {
			if bytes.Contains(raw, []byte(bad)) {
				t.Errorf("%s: %q reached the terminal", what, bad)
			}
		}
	}

	raw := attach("refused")
	waitUntil(t, "attach to refuse the console", 30*time.Second, func() bool { return strings.Contains(readFile(t, raw), "Script done") })
	out, _ := os.ReadFile(raw)
	assertClean("a hostile hello", out)
	// The refusal is one plain line (the terminal queries before it are
	// the program's own, made at start).
	_, msg, _ := bytes.Cut(out, []byte("guildhall: "))
	msg, _, _ = bytes.Cut(msg, []byte("\n"))
	if bytes.ContainsAny(msg, "\x1b\a") || !bytes.Contains(msg, []byte("names no run id (run-YYYYMMDD-HHMMSS)")) || !bytes.Contains(msg, []byte("is this a Guildhall console?")) {
		t.Errorf("the refusal is not a plain message saying why:\n%q", msg)
	}

	hello.Store("run-20260101-000000")
	raw = attach("opened")
	a.waitFor("opened", "Attached to run run-20260101-000000", "TASK-MARK")
	if title := a.tmux("display-message", "-p", "-t", "opened", "#{pane_title}"); strings.Contains(title, "PWNED") {
		t.Errorf("the pane's title was set to %q", title)
	}
	a.tmux("send-keys", "-t", "opened", "q")
	waitUntil(t, "the attached console to quit", 30*time.Second, func() bool {
		return exec.Command("tmux", "-L", a.socket, "has-session", "-t", "opened").Run() != nil
	})
	out, _ = os.ReadFile(raw)
	assertClean("an attached console", out)
	h.assertSafe()
}
