package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

// The scheduler is the queue the command wires in.
var _ Queue = (*runner.Scheduler)(nil)

// fakeQueue is an in-memory queue that records what the console asks of
// it. Its rules are the store's: only a waiting item moves or is edited.
type fakeQueue struct {
	mu    sync.Mutex
	items []store.QueueItem
	calls []string
	// live makes SubmitOrQueue queue instead of starting a run.
	live bool
	next int
}

func (f *fakeQueue) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fakeQueue) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeQueue) find(id string) int {
	for i, it := range f.items {
		if it.ID == id {
			return i
		}
	}
	return -1
}

func (f *fakeQueue) refuse(op, id string, allowed ...string) (int, error) {
	i := f.find(id)
	if i < 0 {
		return -1, &store.QueueItemError{Op: op, ID: id, Err: store.ErrNotFound}
	}
	for _, s := range allowed {
		if f.items[i].Status == s {
			return i, nil
		}
	}
	return -1, &store.QueueItemError{Op: op, ID: id, Status: f.items[i].Status, Err: store.ErrStatusForbidden}
}

func (f *fakeQueue) List() ([]store.QueueItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]store.QueueItem(nil), f.items...), nil
}

func (f *fakeQueue) Edit(_ context.Context, id string, e store.QueueEdit) (store.QueueItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("edit %s %q %q", id, *e.Task, *e.Effort)
	i, err := f.refuse("edit", id, store.QueueWaiting)
	if err != nil {
		return store.QueueItem{}, err
	}
	f.items[i].Task, f.items[i].Effort = *e.Task, *e.Effort
	return f.items[i], nil
}

func (f *fakeQueue) MoveBy(_ context.Context, id string, delta int) (store.QueueItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("move %s %+d", id, delta)
	i, err := f.refuse("move", id, store.QueueWaiting)
	if err != nil {
		return store.QueueItem{}, err
	}
	j := max(0, min(len(f.items)-1, i+delta))
	it := f.items[i]
	f.items = append(f.items[:i], f.items[i+1:]...)
	f.items = append(f.items[:j], append([]store.QueueItem{it}, f.items[j:]...)...)
	return it, nil
}

func (f *fakeQueue) Cancel(_ context.Context, id string) (store.QueueItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("cancel %s", id)
	i, err := f.refuse("cancel", id, store.QueueWaiting, store.QueueNeedsInput)
	if err != nil {
		return store.QueueItem{}, err
	}
	f.items[i].Status = store.QueueCancelled
	return f.items[i], nil
}

func (f *fakeQueue) Requeue(_ context.Context, id string) (store.QueueItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("requeue %s", id)
	i, err := f.refuse("requeue", id, store.QueueDone, store.QueueError, store.QueueCancelled, store.QueueNeedsInput)
	if err != nil {
		return store.QueueItem{}, err
	}
	it := f.items[i]
	it.Status = store.QueueWaiting
	f.items = append(append(f.items[:i], f.items[i+1:]...), it)
	return it, nil
}

func (f *fakeQueue) Answer(_ context.Context, id, answer string) (store.QueueItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("answer %s %q", id, answer)
	i, err := f.refuse("answer", id, store.QueueNeedsInput)
	if err != nil {
		return store.QueueItem{}, err
	}
	it := f.items[i]
	it.Status, it.Answer = store.QueueWaiting, answer
	f.items = append([]store.QueueItem{it}, append(f.items[:i], f.items[i+1:]...)...)
	return it, nil
}

func (f *fakeQueue) SubmitOrQueue(_ context.Context, sub runner.Submission) (string, *store.QueueItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("submit %q %s", sub.Task, sub.Effort)
	if !f.live {
		return "run-20250314-120000", nil, nil
	}
	f.next++
	it := store.QueueItem{ID: fmt.Sprintf("q-1741953600000-%d", f.next), Task: sub.Task, Effort: sub.Effort, Status: store.QueueWaiting}
	f.items = append(f.items, it)
	return "", &it, nil
}

func sampleQueue() *fakeQueue {
	t0 := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	return &fakeQueue{items: []store.QueueItem{
		{ID: "q-1741942800000-1", Task: "Refactor the slug package\nand keep the API", Status: store.QueueActive, RunID: "run-20250314-100000", Runs: []string{"run-20250314-100000"}, CreatedAt: t0},
		{ID: "q-1741942800000-2", Task: "Which database? " + hostile, Effort: "quick", Status: store.QueueNeedsInput, RunID: "run-20250314-090000", Runs: []string{"run-20250314-090000"}, CreatedAt: t0,
			Question: &store.QueueQuestion{ID: "q-7", Text: "Use **Postgres** or SQLite? " + hostile, Context: "The README mentions *both* " + hostile,
				Options: []store.QueueOption{{Label: "Postgres"}, {Label: "SQLite", Description: "simpler " + hostile}}}},
		{ID: "q-1741942800000-3", Task: "Add a --dry-run flag", Effort: "thorough", Status: store.QueueWaiting, CreatedAt: t0},
		{ID: "q-1741942800000-4", Task: "Write the changelog", Status: store.QueueWaiting, CreatedAt: t0},
		{ID: "q-1741942800000-5", Task: "Bump the version", Status: store.QueueDone, RunID: "run-20250314-080000", Summary: "Bumped to **1.2.0**.", CreatedAt: t0},
	}}
}

// queueConsole builds a console with a queue, sized, with the queue read.
func queueConsole(t *testing.T, q *fakeQueue, w, h int) *Model {
	t.Helper()
	m := New(newFakeSession(t, nil), Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Queue: q})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(listQueue(q)())
	return m
}

// run feeds a command's messages back in, and what they return, a few
// levels deep; ticks are dropped.
func run(m *Model, cmd tea.Cmd) { runDepth(m, cmd, 3) }

func runDepth(m *Model, cmd tea.Cmd, depth int) {
	if cmd == nil || depth == 0 {
		return
	}
	msg := cmd()
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runDepth(m, c, depth)
		}
		return
	case queueTickMsg, healthTickMsg, tickMsg:
		return
	}
	_, next := m.Update(msg)
	runDepth(m, next, depth-1)
}

func press(m *Model, keys ...tea.KeyMsg) {
	for _, k := range keys {
		_, cmd := m.Update(k)
		run(m, cmd)
	}
}

func TestQueueScreenListsItemsSafely(t *testing.T) {
	m := queueConsole(t, sampleQueue(), 100, 30)
	press(m, keyMsg("u"))
	raw := m.View()
	assertTerminalSafe(t, raw)
	got := ansi.Strip(raw)
	mustContain(t, got, "[Queue]", "STATUS", "● active", "❓ needs input", "… waiting #1", "… waiting #2", "✓ done",
		"q-1741942800000-1", "Refactor the slug package", "thorough", "quick", "default",
		"Run         run-20250314-100000")
	if strings.Contains(got, "and keep the API") && strings.Count(got, "and keep the API") > 1 {
		t.Errorf("the task's second line is in the row:\n%s", got)
	}
	// The banner surfaces the parked question.
	mustContain(t, got, "1 queued question needs an answer")
}

func TestQueueGoldenFrames(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			m := queueConsole(t, sampleQueue(), w, h)
			press(m, keyMsg("u"), keyMsg("down"))
			got := ansi.Strip(m.View())
			for i, l := range strings.Split(got, "\n") {
				if ansi.StringWidth(l) > w {
					t.Errorf("line %d is %d cells wide: %q", i, ansi.StringWidth(l), l)
				}
			}
			golden(t, fmt.Sprintf("queue_%dx%d", w, h), got)
		})
	}
}

func TestQueueReorderCancelRequeueEdit(t *testing.T) {
	q := sampleQueue()
	m := queueConsole(t, q, 100, 30)
	press(m, keyMsg("u"), keyMsg("down"), keyMsg("down"), keyMsg("down")) // the second waiting item
	press(m, keyMsg("K"))
	if m.queue.selID != "q-1741942800000-4" || m.queue.items[m.queue.sel].ID != "q-1741942800000-4" {
		t.Fatalf("the selection did not follow the moved item: %s", m.queue.selID)
	}
	press(m, tea.KeyMsg{Type: tea.KeyShiftDown})
	press(m, keyMsg("x"))
	mustContain(t, ansi.Strip(m.View()), "Cancel queue item q-1741942800000-4")
	press(m, keyMsg("y"))
	press(m, keyMsg("r"))
	// Edit the other waiting item: select it, e, type, ctrl+s.
	for i, it := range m.queue.items {
		if it.ID == "q-1741942800000-3" {
			m.queue.sel, m.queue.selID = i, it.ID
		}
	}
	press(m, keyMsg("e"))
	mustContain(t, ansi.Strip(m.View()), "Edit q-1741942800000-3", "Add a --dry-run flag")
	press(m, keyMsg("!"), tea.KeyMsg{Type: tea.KeyCtrlE}, tea.KeyMsg{Type: tea.KeyCtrlS})
	want := []string{
		"move q-1741942800000-4 -1",
		"move q-1741942800000-4 +1",
		"cancel q-1741942800000-4",
		"requeue q-1741942800000-4",
		`edit q-1741942800000-3 "Add a --dry-run flag!" ""`,
	}
	if got := q.Calls(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got := ansi.Strip(m.View())
	mustContain(t, got, "Saved q-1741942800000-3.", "Add a --dry-run flag!")
}

func TestQueueErrorNamesTheItem(t *testing.T) {
	q := sampleQueue()
	m := queueConsole(t, q, 100, 30)
	press(m, keyMsg("u"), keyMsg("K")) // the active item cannot move
	mustContain(t, ansi.Strip(m.View()), "Cannot move queue item q-1741942800000-1: it is active")
	press(m, keyMsg("e"))
	mustContain(t, ansi.Strip(m.View()), "Only a waiting item can be edited; q-1741942800000-1 is active.")
}

func TestQueuedQuestionAnswered(t *testing.T) {
	q := sampleQueue()
	m := queueConsole(t, q, 100, 40)
	// Watch shows the banner; a opens the parked question.
	got := ansi.Strip(m.View())
	mustContain(t, got, "❓ 1 queued question needs an answer: a answers it, u opens the queue.")
	press(m, keyMsg("a"))
	raw := m.View()
	assertTerminalSafe(t, raw)
	got = ansi.Strip(raw)
	mustContain(t, got, "Queued question · q-1741942800000-2", "Run run-20250314-090000 stopped on this question",
		"Postgres", "Context", "The README mentions", "1. Postgres", "2. SQLite", "simpler")
	press(m, keyMsg("2"), keyMsg("enter"))
	if calls := q.Calls(); len(calls) != 1 || calls[0] != `answer q-1741942800000-2 "SQLite"` {
		t.Fatalf("calls %q", calls)
	}
	got = ansi.Strip(m.View())
	mustContain(t, got, "Answered q-1741942800000-2: it runs next.")
	if strings.Contains(got, "Queued question ·") || strings.Contains(got, "queued question needs") {
		t.Errorf("the modal or the banner stayed:\n%s", got)
	}
}

func TestQueuedQuestionFreeAnswerFromQueueScreen(t *testing.T) {
	q := sampleQueue()
	m := queueConsole(t, q, 100, 40)
	press(m, keyMsg("u"), keyMsg("down"), keyMsg("enter"))
	for _, r := range "Use SQLite" {
		press(m, keyMsg(string(r)))
	}
	press(m, tea.KeyMsg{Type: tea.KeyEnter, Alt: true})
	for _, r := range "for now" {
		press(m, keyMsg(string(r)))
	}
	press(m, keyMsg("enter"))
	if calls := q.Calls(); len(calls) != 1 || calls[0] != `answer q-1741942800000-2 "Use SQLite\nfor now"` {
		t.Fatalf("calls %q", calls)
	}
}

func TestComposeQueuesWhileRunIsLive(t *testing.T) {
	q := sampleQueue()
	q.live = true
	m := queueConsole(t, q, 100, 30)
	press(m, keyMsg("n"))
	for _, r := range "Tidy the docs" {
		press(m, keyMsg(string(r)))
	}
	press(m, tea.KeyMsg{Type: tea.KeyCtrlS})
	if calls := q.Calls(); len(calls) != 1 || calls[0] != `submit "Tidy the docs" standard` {
		t.Fatalf("calls %q", calls)
	}
	got := ansi.Strip(m.View())
	mustContain(t, got, "Queued as q-1741953600000-1", "[Queue]", "Tidy the docs")
	if m.queue.items[m.queue.sel].ID != "q-1741953600000-1" {
		t.Errorf("the new item is not selected")
	}
	if m.compose.editor.Value() != "" {
		t.Errorf("the editor kept %q", m.compose.editor.Value())
	}
}

func TestComposeSubmitsWhenIdleThroughTheQueue(t *testing.T) {
	q := sampleQueue()
	m := queueConsole(t, q, 100, 30)
	press(m, keyMsg("n"), keyMsg("x"), tea.KeyMsg{Type: tea.KeyCtrlS})
	mustContain(t, ansi.Strip(m.View()), "Submitted run-20250314-120000.", "[Watch]")
}

func TestNoQueueNoTab(t *testing.T) {
	m := New(newFakeSession(t, nil), Options{Labels: seedLabels(t), NoAnimation: true})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, keyMsg("u"))
	got := ansi.Strip(m.View())
	if strings.Contains(got, "Queue ") && strings.Contains(got, "[Queue]") {
		t.Errorf("a Queue screen without a queue:\n%s", got)
	}
	mustContain(t, got, "This console has no task queue.")
}

// TestQueueProgramRefreshes runs the real program: the Queue screen shows
// the list, and an item another process adds appears on the next tick.
func TestQueueProgramRefreshes(t *testing.T) {
	q := sampleQueue()
	m := New(newFakeSession(t, nil), Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty", Queue: q})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("u")})
	waitScreen(t, tm, "[Queue]", "Refactor the slug package", "Write the changelog")
	q.mu.Lock()
	q.items = append(q.items, store.QueueItem{ID: "q-1741942800000-9", Task: "Added from the CLI", Status: store.QueueWaiting})
	q.mu.Unlock()
	waitScreen(t, tm, "Added from the CLI")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}
