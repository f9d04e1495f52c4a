package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/runner/event"
)

func mustEvent(t *testing.T, typ event.Type, payload any) event.Event {
	t.Helper()
	e, err := event.New(time.Now(), typ, payload)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestAlertOf(t *testing.T) {
	const id = "run-20260101-000000"
	card := &event.Card{Status: "success", Summary: "done"}
	for _, tc := range []struct {
		name string
		e    event.Event
		kind string // "" for no alert
	}{
		{"question", mustEvent(t, event.AskHuman, event.AskHumanPayload{Question: "Ship?"}), AlertQuestion},
		{"success", mustEvent(t, event.RunStatus, event.RunStatusPayload{Status: "success", Card: card}), "success"},
		{"error", mustEvent(t, event.RunStatus, event.RunStatusPayload{Status: "error", Card: &event.Card{Status: "error"}}), "error"},
		{"parked", mustEvent(t, event.RunStatus, event.RunStatusPayload{Status: "needs_clarification", Card: &event.Card{Status: "needs_clarification"}}), "needs_clarification"},
		{"terminated", mustEvent(t, event.RunStatus, event.RunStatusPayload{Status: "interrupted", Card: &event.Card{Status: "error"}}), "interrupted"},
		{"suspended", mustEvent(t, event.RunStatus, event.RunStatusPayload{Status: "suspended", Reason: "down"}), AlertSuspended},
		{"stopped to resume later", mustEvent(t, event.RunStatus, event.RunStatusPayload{Status: "interrupted", Reason: "stopped"}), ""},
		{"paused", mustEvent(t, event.RunStatus, event.RunStatusPayload{Status: "paused"}), ""},
		{"answered", mustEvent(t, event.HumanAnswer, event.HumanAnswerPayload{Answer: "yes"}), ""},
		{"a tool", mustEvent(t, event.ToolCall, event.ToolCallPayload{Tool: "ask_human"}), ""},
	} {
		a, ok := AlertOf(id, tc.e)
		if ok != (tc.kind != "") || a.Kind != tc.kind || (ok && a.RunID != id) {
			t.Errorf("%s: %+v %v, want kind %q", tc.name, a, ok, tc.kind)
		}
	}
}

// notifyRecorder is a notify command that appends its arguments, one a line,
// after their count.
func notifyRecorder(t *testing.T, body string) (argv []string, calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	prog := filepath.Join(dir, "notify")
	script := "#!/bin/sh\n" + body + "\nprintf '%s\\n' \"$#\" \"$@\" >> " + calls + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{prog, "--topic", "ops"}, calls
}

// TestNotifierRunsTheCommandWithKindAndRunID: the command gets its own
// arguments, then exactly the kind and the run id, for every alert of the
// runs that start or resume on the bus, never for the backlog, and the
// ones read before Stop still run.
func TestNotifierRunsTheCommandWithKindAndRunID(t *testing.T) {
	argv, calls := notifyRecorder(t, "")
	bus := NewBus()
	bus.Reset([]event.Event{
		mustEvent(t, event.RunStarted, event.RunStartedPayload{RunID: "run-20260101-000000"}),
		mustEvent(t, event.AskHuman, event.AskHumanPayload{Question: "old"}),
	})
	var failures []error
	n := StartNotifier(bus, argv, nil, func(_ Alert, err error) { failures = append(failures, err) })
	bus.Publish(mustEvent(t, event.RunStatus, event.RunStatusPayload{Status: "success", Card: &event.Card{Status: "success"}}))
	bus.Publish(mustEvent(t, event.RunResumed, event.RunResumedPayload{RunID: "run-20260102-000000"}))
	bus.Publish(mustEvent(t, event.AskHuman, event.AskHumanPayload{Question: "Ship it; rm -rf / ?"}))
	// A run id that is not one (a planted log) is no argument.
	bus.Publish(mustEvent(t, event.RunStarted, event.RunStartedPayload{RunID: "--help"}))
	bus.Publish(mustEvent(t, event.AskHuman, event.AskHumanPayload{Question: "x"}))
	n.Stop(10 * time.Second)
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	want := "4\n--topic\nops\nsuccess\nrun-20260101-000000\n4\n--topic\nops\nquestion\nrun-20260102-000000\n"
	if string(b) != want {
		t.Errorf("calls:\n%s\nwant:\n%s", b, want)
	}
	if len(failures) != 0 {
		t.Errorf("failures: %v", failures)
	}
}

func TestNotifierReportsFailuresAndTimesOut(t *testing.T) {
	argv, _ := notifyRecorder(t, "exit 7")
	bus := NewBus()
	bus.Reset([]event.Event{mustEvent(t, event.RunStarted, event.RunStartedPayload{RunID: "run-20260101-000000"})})
	errs := make(chan error, 4)
	n := StartNotifier(bus, argv, nil, func(_ Alert, err error) { errs <- err })
	bus.Publish(mustEvent(t, event.AskHuman, event.AskHumanPayload{}))
	n.Stop(10 * time.Second)
	if err := <-errs; !strings.Contains(err.Error(), "exited with status 7") {
		t.Errorf("failure %v", err)
	}

	// A command still running when the grace ends is stopped, with its
	// children.
	argv, calls := notifyRecorder(t, "sleep 30")
	n = StartNotifier(bus, argv, nil, nil)
	bus.Publish(mustEvent(t, event.AskHuman, event.AskHumanPayload{}))
	time.Sleep(200 * time.Millisecond)
	began := time.Now()
	n.Stop(100 * time.Millisecond)
	if time.Since(began) > 5*time.Second {
		t.Errorf("Stop waited %s for a hung command", time.Since(began))
	}
	if _, err := os.Stat(calls); !os.IsNotExist(err) {
		t.Errorf("the stopped command went on: %v", err)
	}
}

func TestNotifySettingsAreChecked(t *testing.T) {
	for body, want := range map[string]string{
		`{"notify": {"desktop": "loud"}}`:        `notify.desktop "loud" is not one of auto, osc9, osc777, off`,
		`{"notify": {"command": ["", "x"]}}`:     "notify.command starts with an empty program name",
		`{"notify": {"command": "notify-send"}}`: "notify.command",
		`{"notify": {"sound": true}}`:            "sound",
	} {
		_, err := ParseDeployment("deployment.json", []byte(body))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "deployment.json:1:") {
			t.Errorf("%s: %v, want %q at a position", body, err, want)
		}
	}
	d, err := ParseDeployment("deployment.json", []byte(`{"notify": {"bell": false, "desktop": "osc777", "command": ["ntfy", "publish", "me"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Notify.BellOn() || d.Notify.Desktop != DesktopOSC777 || strings.Join(d.Notify.Command, " ") != "ntfy publish me" || d.Origin("notify.command") != "deployment.json" {
		t.Errorf("notify %+v from %q", d.Notify, d.Origin("notify.command"))
	}
	if !DefaultDeployment().Notify.BellOn() {
		t.Error("the bell is off by default")
	}
}
