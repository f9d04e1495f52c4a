package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

func deltas(t testing.TB, roleID, text string, size int) []event.Event {
	var out []event.Event
	for len(text) > 0 {
		n := min(size, len(text))
		e, err := event.New(time.Date(2026, 12, 1, 10, 47, 30, 0, time.UTC), event.LLMDelta, event.LLMDeltaPayload{RoleID: roleID, Content: text[:n]})
		if err != nil {
			t.Fatal(err)
		}
		e.Ephemeral = true
		out = append(out, e)
		text = text[n:]
	}
	return out
}

func balancedFences(s string) bool {
	open := ""
	for _, l := range strings.Split(s, "\n") {
		if f := fenceOf(l); f != "" {
			if open == "" {
				open = f
			} else if closes(l, open) {
				open = ""
			}
		}
	}
	return open == ""
}

// The live pane cuts the reply into finished blocks at blank lines outside
// fences, and never inside a fence; an over-long fenced block is cut with
// its fence closed and reopened.
func TestLivePaneBlocks(t *testing.T) {
	var s stream
	for _, d := range deltas(t, "r", "Para **one**.\n\n```go\nfunc a() {}\n\nfunc b() {}\n```\n\nPara two", 3) {
		var p event.LLMDeltaPayload
		_ = d.Decode(&p)
		s.add(p.Content)
	}
	if len(s.blocks) != 2 || s.blocks[0] != "Para **one**.\n\n" || !strings.Contains(s.blocks[1], "func b() {}\n```") {
		t.Fatalf("blocks %q", s.blocks)
	}
	if string(s.tail) != "Para two" {
		t.Fatalf("tail %q", s.tail)
	}
	var long stream
	long.add("```sh\n")
	for i := 0; i < 3000; i++ {
		long.add(fmt.Sprintf("echo line %d\n", i))
	}
	if len(long.blocks) == 0 || len(long.tail) > maxTail {
		t.Fatalf("a long code block was not cut: %d blocks, tail %d bytes", len(long.blocks), len(long.tail))
	}
	for i, b := range long.blocks {
		if !balancedFences(b) {
			t.Fatalf("block %d leaves its fence open:\n%s", i, b)
		}
	}
	if long.open != "```" {
		t.Fatalf("the tail does not reopen the fence: %q", long.open)
	}
	// One huge line with no break at all is cut at a rune boundary.
	var line stream
	line.add(strings.Repeat("é", maxTail))
	for _, b := range line.blocks {
		if !strings.HasSuffix(b, "é") {
			t.Fatalf("cut inside a rune: %q", b[len(b)-4:])
		}
	}
}

// A delta re-renders the tail only: the finished blocks' lines are the
// ones rendered before.
func TestLivePaneRendersOnlyTheTail(t *testing.T) {
	md := render.NewMarkdownRenderer("dark")
	var s stream
	s.add("# Title\n\nFirst paragraph with **bold**.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nstreaming tail")
	s.prepare(md, 60, 20)
	if len(s.rendered) != 3 {
		t.Fatalf("rendered %d blocks, want 3", len(s.rendered))
	}
	before := map[int]*string{}
	for i, l := range s.rendered {
		before[i] = &l[0]
	}
	s.add(" grows")
	s.prepare(md, 60, 20)
	for i, l := range s.rendered {
		if &l[0] != before[i] {
			t.Errorf("block %d was rendered again for a delta in the tail", i)
		}
	}
	pane := ansi.Strip(strings.Join(s.lines, "\n"))
	if strings.Contains(pane, "**") || strings.Contains(pane, "|---|") {
		t.Errorf("the pane shows raw Markdown:\n%s", pane)
	}
	mustContain(t, pane, "Title", "First paragraph with bold.", "streaming tail grows")
	// A short pane renders only the blocks it shows.
	var tall stream
	for i := 0; i < 50; i++ {
		tall.add(fmt.Sprintf("paragraph %d\n\n", i))
	}
	tall.add("tail")
	tall.prepare(md, 60, 2)
	if len(tall.rendered) > 3 {
		t.Errorf("a 2-row pane rendered %d blocks", len(tall.rendered))
	}
}

// liveDemo is the demo run up to its coder's work, with the coder
// streaming a Markdown reply that carries hostile text.
func liveDemo(t *testing.T) []event.Event {
	demo := loadEvents(t, "demo.jsonl")
	var evs []event.Event
	for _, e := range demo {
		evs = append(evs, e)
		if e.Type == event.LLMCallStart {
			var p event.LLMCallStartPayload
			if e.Decode(&p) == nil && p.RoleID == "coder-1-3" {
				break
			}
		}
	}
	return evs
}

const streamedReply = "I read the plan. **One small change** fixes it:\n\n" +
	"| file | change |\n|---|---|\n| lib/slugify.sh | trim the trailing hyphen |\n\n" +
	"```sh\nsed -e 's/-$//'\n```\n\nRunning the tests now \x1b]52;c;cGF5bG9hZA==\x07 to be sure"

func TestDailyLivePaneRendersMarkdown(t *testing.T) {
	eachSize(t, "daily_live_markdown", func(t *testing.T, w, h int) string {
		fs := newFakeSession(t, liveDemo(t))
		m := New(fs, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "dark"})
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		m.Update(eventsMsg{deltas(t, "coder-1-3", streamedReply, 7)})
		got := shot(t, m)
		if strings.Contains(got, "**") || strings.Contains(got, "|---|") {
			t.Errorf("raw Markdown in the live pane:\n%s", got)
		}
		mustContain(t, got, "to be sure")
		return got
	})
}

// TestDailyTitleLine: the identity line shows the run summary once there
// is one, else the task's first line, and never the task twice.
func TestDailyTitleLine(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	m, fs := console(t, demo, 80, 24)
	press(m, keys("esc")...)
	header := strings.Split(shot(t, m), "\n")[2]
	if !strings.HasPrefix(header, "◆ The tests in this project fail.") {
		t.Fatalf("header %q", header)
	}
	// The generated thread title only repeats the task: not shown.
	m.Update(threadSummaryMsg{runID: "run-20261201-104723", title: "The tests in this project fail. Fix the", description: "The tests in this project fail. Fix the `slugify` function"})
	header = strings.Split(shot(t, m), "\n")[2]
	if strings.Contains(header, "—") || strings.Count(header, "The tests in this project fail") != 1 {
		t.Errorf("the header repeats the task: %q", header)
	}
	dir, _ := fs.ws.RunDir("run-20261201-104723")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.SummaryFile), []byte("Slug tests fixed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(m, loadSummary(fs.ws, "run-20261201-104723"))
	header = strings.Split(shot(t, m), "\n")[2]
	if !strings.HasPrefix(header, "◆ Slug tests fixed") || strings.Contains(header, "The tests in this project") {
		t.Errorf("header %q, want the run summary", header)
	}
}

// TestDailyToolResultsAsText: the transcript shows a tool's result as its
// text; J shows the JSON.
func TestDailyToolResultsAsText(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	open := func(t *testing.T, w, h int) *Model {
		m, fs := console(t, demo, w, h)
		writeRun(t, fs.ws, &store.Meta{RunID: "run-20261201-104723", Task: "T", Status: "success", StartedAt: demo[0].Timestamp}, demo)
		press(m, keys("esc")...)
		m.flowSel = "orchestrator-0-1"
		press(m, keys("t", "/")...)
		press(m, keyMsg("Result of read_file"), keyMsg("enter"))
		return m
	}
	eachSize(t, "daily_transcript_text", func(t *testing.T, w, h int) string {
		m := open(t, w, h)
		got := shot(t, m)
		mustContain(t, got, "Result of read_file · success", "content:", "# slugkit")
		if strings.Contains(got, `\n`) || strings.Contains(got, `"content"`) {
			t.Errorf("the result shows as escaped JSON:\n%s", got)
		}
		return got
	})
	m := open(t, 100, 30)
	press(m, keys("J")...)
	got := shot(t, m)
	mustContain(t, got, `"kind": "success"`, `"content": "# slugkit\n`)
}

// TestDailyMeters: the context meter, the model and host, tokens, cost
// with prices, and the last reply in words.
func TestDailyMeters(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	eachSize(t, "daily_meters", func(t *testing.T, w, h int) string {
		fs := newFakeSession(t, demo)
		fs.info = runner.ModelInfo{Name: "qwen2.5-coder:32b", Provider: "openai", Host: "10.0.0.7:8000", ContextWindow: 16384,
			Price: &runner.ModelPrice{Input: 0.5, Output: 1.5, CachedInput: 0.05}}
		m := New(fs, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty"})
		m.Update(modelInfoCmd(fs)())
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		press(m, keys("esc")...)
		got := shot(t, m)
		mustContain(t, got, "context ", " of 16.4k", "tokens")
		if w >= 80 {
			mustContain(t, got, "@ 10.0.0.7:8000", "$0.0")
		}
		if w >= 120 {
			mustContain(t, got, "last reply 0.3s")
		}
		if strings.Contains(got, "last 0.") {
			t.Errorf("an unexplained figure: %s", got)
		}
		return got
	})
	// The cost is the endpoint's usage at the deployment's prices.
	u := usage{prompt: 2_000_000, cached: 1_000_000, completion: 100_000}
	if c, ok := u.cost(&runner.ModelPrice{Input: 1, Output: 10, CachedInput: 0.1}); !ok || fmt.Sprintf("%.3f", c) != "2.100" {
		t.Errorf("cost %v %v, want 2.100", c, ok)
	}
	if _, ok := u.cost(nil); ok {
		t.Error("a cost without prices")
	}
	if got := formatCost(0.0421, "EUR"); got != "€0.042" {
		t.Errorf("formatCost = %q", got)
	}
}

// TestDailyLogScreen: every event as the headless lines show it,
// searchable with a count and marks, filterable by role.
func TestDailyLogScreen(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	var lines int
	matches := 0
	for _, e := range demo {
		if l, ok := render.HeadlessLine(e); ok {
			lines++
			matches += strings.Count(strings.ToLower(l), "read_file")
		}
	}
	eachSize(t, "daily_log", func(t *testing.T, w, h int) string {
		m, _ := console(t, demo, w, h)
		press(m, keys("esc", "5")...)
		got := shot(t, m)
		mustContain(t, got, "[Log]", fmt.Sprintf("%d of %d events", lines, lines), "run success")
		return got
	})
	eachSize(t, "daily_log_search", func(t *testing.T, w, h int) string {
		m, _ := console(t, demo, w, h)
		press(m, keys("esc", "5", "/")...)
		press(m, keyMsg("read_file"), keyMsg("enter"))
		press(m, keys("n", "n", "N")...)
		raw := m.View()
		got := shot(t, m)
		mustContain(t, got, fmt.Sprintf("“read_file”: 2 of %d", matches))
		if !strings.Contains(raw, m.th.Render(toneCurrentMatch, "read_file")) {
			t.Errorf("the current match is not marked")
		}
		return got
	})
	eachSize(t, "daily_log_filter", func(t *testing.T, w, h int) string {
		m, _ := console(t, demo, w, h)
		press(m, keys("esc", "5", "f", "f", "f")...)
		got := shot(t, m)
		mustContain(t, got, "role Coder")
		for _, l := range strings.Split(got, "\n")[3 : h-1] {
			if strings.Contains(l, "-") && regexp.MustCompile(`(orchestrator|planner|acceptance)[a-z_]*-\d`).MatchString(l) {
				t.Errorf("another role's line under the coder filter: %q", l)
			}
		}
		return got
	})
}

// TestDailyTranscriptSearch marks matches and counts them.
func TestDailyTranscriptSearch(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	eachSize(t, "daily_transcript_search", func(t *testing.T, w, h int) string {
		m, fs := console(t, demo, w, h)
		writeRun(t, fs.ws, &store.Meta{RunID: "run-20261201-104723", Task: "T", Status: "success", StartedAt: demo[0].Timestamp}, demo)
		press(m, keys("esc")...)
		m.flowSel = "orchestrator-0-1"
		press(m, keys("t", "/")...)
		press(m, keyMsg("slug"), keyMsg("enter"), keyMsg("n"))
		raw := m.View()
		got := shot(t, m)
		if !regexp.MustCompile(`“slug”: 2 of \d+`).MatchString(got) {
			t.Errorf("no count of the matches:\n%s", got)
		}
		if !strings.Contains(raw, m.th.Render(toneCurrentMatch, "slug")) && !strings.Contains(raw, m.th.Render(toneCurrentMatch, "Slug")) {
			t.Errorf("the current match is not marked")
		}
		return got
	})
}

// TestDailyReplayIsLabelled: a replayed run says so, and the live run's
// banner (here: paused) never sits over it.
func TestDailyReplayIsLabelled(t *testing.T) {
	demo := loadEvents(t, "demo.jsonl")
	eachSize(t, "daily_replay", func(t *testing.T, w, h int) string {
		fs := newFakeSession(t, loadEvents(t, "interrupt_live.jsonl"))
		m := New(fs, Options{Labels: seedLabels(t), NoAnimation: true, MarkdownStyle: "notty"})
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		rv := newRunView("run-20261201-104723")
		for _, e := range demo {
			rv.apply(e)
		}
		rv.refresh()
		m.Update(replayMsg{runID: rv.id, run: rv})
		got := shot(t, m)
		mustContain(t, got, "⏮ Replay of run-20261201-104723", "replay")
		if strings.Contains(got, "Paused by the operator") {
			t.Errorf("the live run's banner sits over the replay:\n%s", got)
		}
		// i and p say why; i cannot act on a replay.
		press(m, keys("i")...)
		flat := strings.Join(strings.Fields(ansi.Strip(m.View())), " ")
		mustContain(t, flat, "acts on the live run only")
		if m.interrupt != nil {
			t.Error("i opened an interrupt on a replay")
		}
		return got
	})
}

func TestDailyKeysSayWhy(t *testing.T) {
	m, _ := console(t, nil, 80, 24)
	press(m, keys("p")...)
	mustContain(t, shot(t, m), "No run on screen, so no plan to show")
	press(m, keys("i")...)
	mustContain(t, shot(t, m), "No run is live")
	m, _ = console(t, loadEvents(t, "demo.jsonl"), 80, 24)
	press(m, keys("esc", "i")...)
	mustContain(t, shot(t, m), "The run has finished (success)")
	press(m, keys("X")...)
	if m.confirm != nil {
		t.Error("X asked to terminate a finished run")
	}
}
