package tui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/render/labelset"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/store"
)

// updating reports the -update flag (defined by teatest's golden package,
// which this package's tests link): rewrite golden files under testdata/.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// fakeSession serves a fixed event backlog to the console and records what
// the console asks of it. It stands in for a session in view tests, the
// way a remote client would.
type fakeSession struct {
	bus     *runner.Bus
	ws      store.Workspace
	answers map[string]string
	resumed []string
	info    runner.ModelInfo
	// changes is what Changes reports.
	changes    runner.Changes
	changesErr error
}

func newFakeSession(t testing.TB, events []event.Event) *fakeSession {
	b := runner.NewBus()
	b.Reset(events)
	return &fakeSession{bus: b, ws: store.Workspace{Dir: t.TempDir()}, answers: map[string]string{}}
}

func (f *fakeSession) Subscribe(n int) ([]event.Event, *runner.Subscription) {
	return f.bus.Subscribe(n)
}
func (f *fakeSession) Submit(context.Context, runner.Submission) (string, error) {
	return "", runner.ErrRunInProgress
}
func (f *fakeSession) Active() (string, bool) { return "", false }
func (f *fakeSession) Answer(id, a, source string) error {
	if _, ok := f.answers[id]; ok {
		return runner.ErrAlreadyAnswered
	}
	if source != "terminal" {
		return fmt.Errorf("the console answered as %q, want terminal", source)
	}
	f.answers[id] = a
	return nil
}
func (f *fakeSession) Questions() []runner.Question           { return nil }
func (f *fakeSession) Interrupt(string, string, string) error { return nil }
func (f *fakeSession) Pause(string) error                     { return nil }
func (f *fakeSession) Resume(id string) error {
	f.resumed = append(f.resumed, id)
	return nil
}
func (f *fakeSession) Terminate(string) error      { return nil }
func (f *fakeSession) Health() runner.HealthView   { return runner.HealthView{State: runner.HealthOK} }
func (f *fakeSession) Workspace() store.Workspace  { return f.ws }
func (f *fakeSession) ModelInfo() runner.ModelInfo { return f.info }
func (f *fakeSession) Changes(_ context.Context, runID string) (runner.Changes, error) {
	ch := f.changes
	ch.RunID = runID
	return ch, f.changesErr
}

// loadEvents reads a log.jsonl fixture from testdata.
func loadEvents(t testing.TB, name string) []event.Event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []event.Event
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e event.Event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e.Seq = int64(len(out))
		out = append(out, e)
	}
	return out
}

func seedLabels(t testing.TB) render.LabelSet {
	t.Helper()
	g, err := runner.LoadGuild(seed.Guild(), "seed guild")
	if err != nil {
		t.Fatal(err)
	}
	return guildLabels(t, g)
}

// eventLog is a log a test writes in order: each event numbered as the
// log would number it, step after the one before, from t0.
type eventLog struct {
	tb     testing.TB
	t0     time.Time
	step   time.Duration
	events []event.Event
}

func (l *eventLog) add(typ event.Type, p any) {
	l.tb.Helper()
	e, err := event.New(l.t0.Add(time.Duration(len(l.events))*l.step), typ, p)
	if err != nil {
		l.tb.Fatal(err)
	}
	e.Seq = int64(len(l.events))
	l.events = append(l.events, e)
}

// guildLabels is g's display labels.
func guildLabels(tb testing.TB, g *runner.Guild) render.LabelSet {
	tb.Helper()
	l, err := labelset.FromGuild(g)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// openSession opens a real runner session, closed when the test ends.
func openSession(tb testing.TB, cfg runner.SessionConfig) *runner.Session {
	tb.Helper()
	s, err := runner.OpenSession(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// scriptedDeployment is the default deployment fitted to g, on the scripted
// model called name, with no interrupt triggers: a run that goes as its
// script says.
func scriptedDeployment(g *runner.Guild, name string) *runner.Deployment {
	d := runner.DefaultDeployment()
	d.FitToGuild(g)
	d.Model.Provider, d.Model.Name, d.Model.APIBase = "script", name, ""
	d.Executor.InterruptTriggers = nil
	return d
}

// frame builds a console over events at a size and returns its first
// frame as the operator sees it (styling stripped).
func frame(t testing.TB, events []event.Event, w, h int, keys ...string) string {
	t.Helper()
	m := New(newFakeSession(t, events), Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty"})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for _, k := range keys {
		m.Update(keyMsg(k))
	}
	return ansi.Strip(m.View())
}

// keyMsg is the key named k: one of the named keys below, else the
// characters typed.
func keyMsg(k string) tea.KeyMsg {
	named := map[string]tea.KeyType{
		"tab": tea.KeyTab, "enter": tea.KeyEnter, "esc": tea.KeyEsc,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
	}
	if t, ok := named[k]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (run with -update to accept):\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

func mustContain(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("missing %q in:\n%s", sub, s)
		}
	}
}

// testRecordsKey seals the records of the TUI tests' workspaces.
var testRecordsKey = []byte("tui-tests-records-key-32-bytes!!")
