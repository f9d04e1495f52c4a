package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
)

func TestDesktopFor(t *testing.T) {
	for _, tc := range []struct {
		setting string
		env     map[string]string
		want    string
	}{
		{"", map[string]string{"TERM_PROGRAM": "iTerm.app", "TERM": "xterm-256color"}, runner.DesktopOSC9},
		{"auto", map[string]string{"LC_TERMINAL": "iTerm2", "TERM": "xterm-256color"}, runner.DesktopOSC9},
		{"auto", map[string]string{"TERM_PROGRAM": "WezTerm"}, runner.DesktopOSC777},
		{"auto", map[string]string{"TERM": "xterm-ghostty"}, runner.DesktopOSC777},
		{"auto", map[string]string{"TERM": "foot-extra"}, runner.DesktopOSC777},
		// Unknown terminals might print the sequence.
		{"auto", map[string]string{"TERM": "xterm-256color"}, ""},
		{"auto", map[string]string{"TERM": "linux"}, ""},
		{"auto", map[string]string{"TERM_PROGRAM": "Apple_Terminal"}, ""},
		// A multiplexer keeps them from the terminal: the bell is its flag.
		{"auto", map[string]string{"TERM_PROGRAM": "iTerm.app", "TMUX": "/tmp/tmux-0/default,1,0"}, ""},
		{"auto", map[string]string{"LC_TERMINAL": "iTerm2", "TERM": "screen-256color"}, ""},
		{"auto", map[string]string{"TERM": "foot", "STY": "1.pts-0"}, ""},
		// The operator's choice wins.
		{"osc9", map[string]string{"TERM": "xterm"}, runner.DesktopOSC9},
		{"osc777", map[string]string{"TMUX": "x"}, runner.DesktopOSC777},
		{"off", map[string]string{"TERM_PROGRAM": "iTerm.app"}, ""},
	} {
		if got := DesktopFor(tc.setting, func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%q %v: %q, want %q", tc.setting, tc.env, got, tc.want)
		}
	}
}

func TestAlertSequence(t *testing.T) {
	q := runner.Alert{Kind: runner.AlertQuestion, RunID: "run-20260101-000000"}
	for _, tc := range []struct {
		a    Alerts
		want string
	}{
		{Alerts{Bell: true}, "\a"},
		{Alerts{Bell: true, Desktop: runner.DesktopOSC9}, "\a\x1b]9;A question is waiting for you in run-20260101-000000\x1b\\"},
		{Alerts{Desktop: runner.DesktopOSC777}, "\x1b]777;notify;Guildhall;A question is waiting for you in run-20260101-000000\x1b\\"},
		{Alerts{}, ""},
	} {
		if got := alertSequence(tc.a, q); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.a, got, tc.want)
		}
	}
	// A run id that is not one never reaches the terminal.
	bad := runner.Alert{Kind: "success", RunID: "run-1\x1b]52;c;aGk=\a;x"}
	if got := alertSequence(Alerts{Desktop: runner.DesktopOSC777}, bad); got != "\x1b]777;notify;Guildhall;the run finished: success\x1b\\" {
		t.Errorf("%q", got)
	}
	for _, kind := range []string{runner.AlertQuestion, runner.AlertSuspended, "success", "error", "needs_clarification", "interrupted", "other"} {
		text := alertText(runner.Alert{Kind: kind, RunID: "run-20260101-000000"})
		if strings.ContainsAny(text, ";\x1b\a") || render.SanitizeLine(text) != text {
			t.Errorf("%s: %q", kind, text)
		}
	}
}

// TestAlertsRingForLiveEventsOnly: the backlog the console opens on rings
// nothing; a question and the run's end that arrive later each write one
// alert to the terminal output; a console without alerts writes nothing.
func TestAlertsRingForLiveEventsOnly(t *testing.T) {
	evs := loadEvents(t, "demo.jsonl")
	var cut int
	for i, e := range evs {
		if e.Type == event.AskHuman {
			cut = i
			break
		}
	}
	for _, on := range []bool{true, false} {
		var out bytes.Buffer
		fs := newFakeSession(t, evs[:cut])
		m := New(fs, Options{Output: &out, Alerts: Alerts{Bell: on, Desktop: map[bool]string{true: runner.DesktopOSC9}[on]}})
		if out.Len() != 0 {
			t.Fatalf("the backlog rang: %q", out.String())
		}
		for _, e := range evs[cut:] {
			flatten(m.applyEvent(e))
		}
		want := ""
		if on {
			id := m.live.id
			want = "\a\x1b]9;A question is waiting for you in " + id + "\x1b\\" + "\a\x1b]9;" + id + " finished: success\x1b\\"
		}
		if out.String() != want {
			t.Errorf("alerts on=%v wrote %q, want %q", on, out.String(), want)
		}
	}
}

// flatten runs a command and the batches it returns, in order, and
// returns the messages (tea.Batch's commands are run one by one).
func flatten(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(2 * time.Second):
		return nil // a command that waits (a tick, the event pump)
	}
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, flatten(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}
