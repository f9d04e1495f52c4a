package tui

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
)

// submitSession is a fake session that records submissions.
type submitSession struct {
	*fakeSession
	mu   sync.Mutex
	subs []runner.Submission
}

func (s *submitSession) Submit(_ context.Context, sub runner.Submission) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = append(s.subs, sub)
	return "run-20261201-120000", nil
}

func (s *submitSession) submitted() []runner.Submission {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]runner.Submission(nil), s.subs...)
}

// wantSubmitted waits up to 10 s for a submission, then checks it was the
// only one and carried task.
func (s *submitSession) wantSubmitted(t *testing.T, task string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.submitted()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if subs := s.submitted(); len(subs) != 1 || subs[0].Task != task {
		t.Fatalf("submissions %+v", subs)
	}
}

// fakeEndpoint answers the console's checks from a list and records the
// settings it was given.
type fakeEndpoint struct {
	mu       sync.Mutex
	checks   []string // problems Check returns, in order; "" answers
	applies  []applyResult
	settings EndpointSettings
	applied  []EndpointSettings
	nChecks  int
}

type applyResult struct {
	problem string
	err     error
}

func (f *fakeEndpoint) Settings() EndpointSettings {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.settings
}

func (f *fakeEndpoint) Check(context.Context) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nChecks++
	if len(f.checks) == 0 {
		return ""
	}
	p := f.checks[0]
	f.checks = f.checks[1:]
	return p
}

func (f *fakeEndpoint) Apply(_ context.Context, s EndpointSettings) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied = append(f.applied, s)
	if len(f.applies) == 0 {
		return "", nil
	}
	r := f.applies[0]
	f.applies = f.applies[1:]
	return r.problem, r.err
}

func (f *fakeEndpoint) calls() (int, []EndpointSettings) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nChecks, append([]EndpointSettings(nil), f.applied...)
}

const closedPortProblem = "The model endpoint http://127.0.0.1:9/v1 (openai) never answered.\n  tried GET http://127.0.0.1:9/v1/models: connection refused: nothing is listening there\nUsual causes:\n  - the server is not running: `llama-server --jinja`"

// TestEndpointDialogRetriesAndHoldsTheTask drives the real program as a
// start against a closed port: the dialog shows the whole message, the
// task waits, r retries (still failing, then answering), and the task is
// submitted only then.
func TestEndpointDialogRetriesAndHoldsTheTask(t *testing.T) {
	sess := &submitSession{fakeSession: newFakeSession(t, nil)}
	ep := &fakeEndpoint{checks: []string{"The model endpoint http://127.0.0.1:9/v1 (openai) never answered.\n  tried it AGAIN-STILL-DOWN"}, settings: EndpointSettings{Provider: "openai", BaseURL: "http://127.0.0.1:9/v1"}}
	m := New(sess, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard,
		Task: "Fix the failing test", Endpoint: ep, EndpointProblem: closedPortProblem})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitScreen(t, tm, "The model endpoint did not answer", "http://127.0.0.1:9/v1", "connection refused", "--jinja",
		"Your task waits", "r retry", "e edit settings")
	if len(sess.submitted()) != 0 {
		t.Fatal("the task was submitted against an endpoint that never answered")
	}
	tm.Send(keyMsg("r"))
	waitScreen(t, tm, "AGAIN-STILL-DOWN")
	tm.Send(keyMsg("r"))
	waitScreen(t, tm, "Submitted run-20261201-120000.")
	sess.wantSubmitted(t, "Fix the failing test")
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
	if n, _ := ep.calls(); n != 2 || final.endpointProblem != "" || final.endpoint != nil {
		t.Errorf("checks %d, problem %q, dialog %v", n, final.endpointProblem, final.endpoint)
	}
}

// TestEndpointSettingsFormAppliesForTheSession: e opens the form with the
// current settings; a refused value shows its error in the form; a value
// that works closes the dialog and says what is used now.
func TestEndpointSettingsFormAppliesForTheSession(t *testing.T) {
	sess := &submitSession{fakeSession: newFakeSession(t, nil)}
	ep := &fakeEndpoint{settings: EndpointSettings{Provider: "openai", BaseURL: "http://127.0.0.1:9/v1"},
		applies: []applyResult{{err: errors.New(`--base-url "notaurl" is not a URL: BAD-URL-SHOWN`)}, {}}}
	m := New(sess, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard,
		Endpoint: ep, EndpointProblem: closedPortProblem})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitScreen(t, tm, "The model endpoint did not answer")
	tm.Send(keyMsg("e"))
	waitScreen(t, tm, "Model endpoint settings", "Provider", "Base URL", "Model", "http://127.0.0.1:9/v1", "For this session only")
	tm.Send(keyMsg("tab"))
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU}) // clear the line
	tm.Type("notaurl")
	tm.Send(keyMsg("enter"))
	waitScreen(t, tm, "BAD-URL-SHOWN")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
	tm.Type("http://127.0.0.1:8080/v1\x1b]52;c;SGk=\x07")
	tm.Send(keyMsg("tab"))
	tm.Type("qwen2.5-coder")
	tm.Send(keyMsg("enter"))
	waitScreen(t, tm, "Now using openai at http://127.0.0.1:8080/v1", "model qwen2.5-coder")
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	_, applied := ep.calls()
	if len(applied) != 2 || applied[0].BaseURL != "notaurl" || applied[1].Model != "qwen2.5-coder" ||
		strings.ContainsAny(applied[1].BaseURL, "\x1b\x07") || !strings.HasPrefix(applied[1].BaseURL, "http://127.0.0.1:8080/v1") {
		t.Errorf("applied %q", applied)
	}
}

// TestEndpointDialogWhenARunNeverReachedItsEndpoint: a run that ends
// because its endpoint never answered opens the same dialog with the
// run's message, and closing it leaves a banner and E to reopen it.
func TestEndpointDialogWhenARunNeverReachedItsEndpoint(t *testing.T) {
	sess := &submitSession{fakeSession: newFakeSession(t, nil)}
	m := New(sess, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard, Endpoint: &fakeEndpoint{}})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitScreen(t, tm, "No run yet")
	msg := "The model endpoint http://127.0.0.1:8080 (openai) never answered.\n  tried the first model call, POST http://127.0.0.1:8080/chat/completions: HTTP 404 (bad_request)\nLikely cause: the URL lacks /v1"
	card := &event.Card{Status: "error", Summary: msg, Error: &event.ErrorInfo{Kind: runner.EndpointErrorKind, Message: msg}}
	sess.bus.Publish(ev(t, event.RunStarted, event.RunStartedPayload{RunID: "run-20261201-120000", Task: "Fix it", Effort: "standard", EntryRole: "orchestrator"}))
	sess.bus.Publish(ev(t, event.RunStatus, event.RunStatusPayload{Status: "error", Card: card}))
	waitScreen(t, tm, "The model endpoint did not answer", "POST http://127.0.0.1:8080/chat/completions: HTTP 404", "the URL lacks /v1")
	tm.Send(keyMsg("esc"))
	waitScreen(t, tm, "Status: ✗ error") // the result card under it
	tm.Send(keyMsg("esc"))
	tm.Send(keyMsg("E"))
	waitScreen(t, tm, "r retry", "the URL lacks /v1")
	tm.Send(keyMsg("esc"))
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
	if b := ansi.Strip(final.banner()); !strings.Contains(b, "E shows why") {
		t.Errorf("with the dialog closed, the banner is %q", b)
	}
}

// TestStartupNotesAreShownInTheConsole: what the start-up printed before
// the console covered the terminal is pointed to by the banner and shown,
// sanitised, by N; esc closes the dialog.
func TestStartupNotesAreShownInTheConsole(t *testing.T) {
	sess := &submitSession{fakeSession: newFakeSession(t, nil)}
	notes := []string{
		"the workspace's own guild/ and deployment.json were ignored; trust them with `guildhall trust`",
		"run run-20261130-101010 stopped before finishing; resume it with `guildhall resume run-20261130-101010`",
		"could not list models at http://127.0.0.1:8080/v1 (HTTP 404)\x1b]0;OWNED\x07 " + hostile,
	}
	m := New(sess, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard, Notes: notes})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitScreen(t, tm, "3 notes from start-up (N shows them): the workspace's own guild/")
	tm.Send(keyMsg("N"))
	waitScreen(t, tm, "Notes from start-up (3)", "were ignored", "stopped before finishing", "could not list models", "esc close")
	tm.Send(keyMsg("esc"))
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
	if final.notes != nil || final.notesUnseen {
		t.Errorf("after N and esc: dialog %v, banner %v", final.notes, final.notesUnseen)
	}
	out := tm.FinalOutput(t, teatest.WithFinalTimeout(10*time.Second))
	b, _ := io.ReadAll(out)
	for _, bad := range []string{"\x1b]0;", "\x1b]52", "\x07"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("a note passed %q to the terminal", bad)
		}
	}
}

// TestEndpointAndNotesDialogsFitSmallTerminals: both dialogs stay within
// the frame at 80x24 and at 60x15, and keep their keys visible.
func TestEndpointAndNotesDialogsFitSmallTerminals(t *testing.T) {
	long := strings.Repeat("a line of a long setup message that wraps ", 20)
	for _, size := range [][2]int{{80, 24}, {60, 15}} {
		for name, opts := range map[string]Options{
			"endpoint": {EndpointProblem: closedPortProblem + "\n" + long, Endpoint: &fakeEndpoint{}},
			"notes":    {Notes: []string{long, long, long}},
		} {
			opts.Labels, opts.NoAnimation, opts.MarkdownStyle = seedLabels(t), true, "notty"
			m := New(newFakeSession(t, nil), opts)
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			if name == "notes" {
				m.Update(keyMsg("N"))
			}
			frame := m.View()
			assertTerminalSafe(t, frame)
			lines := strings.Split(frame, "\n")
			if len(lines) != size[1] {
				t.Errorf("%s %v: %d lines", name, size, len(lines))
			}
			plain := ansi.Strip(frame)
			if name == "endpoint" && !strings.Contains(plain, "r retry") || name == "notes" && !strings.Contains(plain, "esc close") {
				t.Errorf("%s %v: the keys are cut off:\n%s", name, size, plain)
			}
			if name == "endpoint" && size[0] == 80 {
				// With the dialog closed, the banner says how to get it back,
				// whole at 80 columns.
				m.Update(keyMsg("esc"))
				if b := ansi.Strip(m.banner()); ansi.StringWidth(b) > 80 || !strings.Contains(b, "E shows why") {
					t.Errorf("banner %q", b)
				}
			}
		}
	}
}

// endpointSession is a session whose model info follows the settings the
// endpoint dialog applied, as runner.Session's does after Reconfigure.
type endpointSession struct {
	*submitSession
	ep *fakeEndpoint
}

func (s *endpointSession) ModelInfo() runner.ModelInfo {
	_, applied := s.ep.calls()
	host := "127.0.0.1:9"
	if len(applied) > 0 {
		host = strings.TrimSuffix(strings.TrimPrefix(applied[len(applied)-1].BaseURL, "http://"), "/v1")
	}
	return runner.ModelInfo{Name: "qwen", Provider: "openai", Host: host}
}

// TestEndpointSettingsShowInTheFooter: after e applies a new base URL, the
// footer's model @ host names the new host, not the one the console
// opened with.
func TestEndpointSettingsShowInTheFooter(t *testing.T) {
	ep := &fakeEndpoint{settings: EndpointSettings{Provider: "openai", BaseURL: "http://127.0.0.1:9/v1"}}
	sess := &endpointSession{submitSession: &submitSession{fakeSession: newFakeSession(t, nil)}, ep: ep}
	m := New(sess, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard,
		Endpoint: ep, EndpointProblem: closedPortProblem})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	// The footer shows beneath the dialog.
	waitScreen(t, tm, "The model endpoint did not answer", "qwen @ 127.0.0.1:9")
	tm.Send(keyMsg("e"))
	waitScreen(t, tm, "Model endpoint settings")
	tm.Send(keyMsg("tab"))
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
	tm.Type("http://10.1.2.3:8081/v1")
	tm.Send(keyMsg("enter"))
	waitScreen(t, tm, "Now using openai at http://10.1.2.3:8081/v1", "qwen @ 10.1.2.3:8081")
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// TestEndpointDialogWrapsAndTheTaskWaits: at 80x24 the real setup message
// of a silent endpoint is wrapped, never cut with "…", each cause's
// continuation indented under it; closed, the screen says the task
// waits, not "No run yet.".
func TestEndpointDialogWrapsAndTheTaskWaits(t *testing.T) {
	u := &provider.Unanswered{
		Probe:    &provider.Error{Category: provider.CategoryTimeout},
		Endpoint: provider.Endpoint{Provider: "openai", BaseURL: "http://127.0.0.1:9999/v1", CallURL: "http://127.0.0.1:9999/v1/models"},
	}
	fs := newFakeSession(t, nil)
	m := New(fs, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty",
		Task: "Fix the failing test in the slug package", EndpointProblem: u.Explain(), Endpoint: &fakeEndpoint{}})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Init()
	got := ansi.Strip(m.View())
	mustContain(t, got, "(`--jinja` is needed for tool calls),", "  then --base-url http://127.0.0.1:8080/v1")
	if strings.Contains(got, "…") {
		t.Errorf("the dialog cuts a line:\n%s", got)
	}
	press(m, keys("esc")...)
	got = strings.Join(strings.Fields(ansi.Strip(m.View())), " ")
	mustContain(t, got, "Your task waits for the model endpoint and starts once it answers.")
	if strings.Contains(got, "No run yet.") {
		t.Errorf("the screen says no run while a task waits:\n%s", got)
	}
}
