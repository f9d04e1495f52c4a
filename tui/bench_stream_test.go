package tui

import (
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// bigReply is about n bytes of Markdown as a model writes it: headed
// sections of paragraphs, lists, a table and fenced code.
func bigReply(n int) string {
	const chunk = "## Step\n\nThe parser reads **one token** at a time and keeps `state` small.\n\n" +
		"- first item with a [link](https://example.com)\n- second item\n\n" +
		"| col | value |\n|---|---|\n| a | 1 |\n\n```go\nfunc f() int { return 1 }\n```\n\n"
	var b strings.Builder
	b.Grow(n + len(chunk))
	for b.Len() < n {
		b.WriteString(chunk)
	}
	return b.String()
}

// soloStreamSession is a real session whose one role streams a reply of
// size bytes (in the scripted provider's 12-rune deltas, as fast as the
// run can publish them) and then finishes.
func soloStreamSession(tb testing.TB, size int) *runner.Session {
	tb.Helper()
	dir := tb.TempDir()
	fsys := fstest.MapFS{
		"guild.json":      {Data: []byte(`{"entryRole":"solo","roles":{"solo":{"systemPrompt":"prompts/solo.md","tools":["finish"]}}}`)},
		"prompts/solo.md": {Data: []byte("You work alone.")},
	}
	g, err := runner.LoadGuild(fsys, "bench guild")
	if err != nil {
		tb.Fatal(err)
	}
	script := &provider.Script{Roles: map[string][]provider.ScriptTurn{"solo": {{
		Content:   bigReply(size),
		ToolCalls: []provider.ScriptToolCall{{Name: "finish", Arguments: []byte(`{"status":"success","summary":"streamed"}`)}},
	}}}}
	return openSession(tb, runner.SessionConfig{Workspace: dir, Sealer: store.NewSealer(testRecordsKey, dir), Guild: g,
		Deployment: scriptedDeployment(g, "scripted-bench"), Provider: provider.NewScripted(script, 0)})
}

// lastRoleID is the instance id of the role that started last in events,
// the one whose reply streams.
func lastRoleID(events []event.Event) string {
	var role string
	for _, e := range events {
		if e.Type == event.RoleStart {
			var p event.RoleStartPayload
			_ = e.Decode(&p)
			role = p.RoleID
		}
	}
	return role
}

// latencyProbe wraps the console to time, in the real program, how long a
// key waits from being sent until the frame that answers it is drawn, and
// how long each frame takes to build.
type latencyProbe struct {
	*Model
	mu      sync.Mutex
	sentAt  time.Time // when the pending probe key was sent
	handled bool      // the pending key reached Update
	lat     []time.Duration
	frames  []time.Duration
	done    bool
}

func (p *latencyProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok && k.String() == "?" {
		p.mu.Lock()
		p.handled = true
		p.mu.Unlock()
	}
	if e, ok := msg.(eventsMsg); ok {
		for _, ev := range e.events {
			if ev.Type == event.RunStatus {
				p.mu.Lock()
				p.done = true
				p.mu.Unlock()
			}
		}
	}
	_, cmd := p.Model.Update(msg)
	return p, cmd
}

func (p *latencyProbe) View() string {
	t0 := time.Now()
	s := p.Model.View()
	end := time.Now()
	p.mu.Lock()
	p.frames = append(p.frames, end.Sub(t0))
	if p.handled && !p.sentAt.IsZero() {
		p.lat = append(p.lat, end.Sub(p.sentAt))
		p.sentAt, p.handled = time.Time{}, false
	}
	p.mu.Unlock()
	return s
}

// send sends the probe key unless one is still on its way.
// report reports the keys' latencies and the frames' times, and how long
// the stream took.
func (p *latencyProbe) report(b *testing.B, elapsed time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b.ReportMetric(float64(percentile(p.lat, 0.5).Microseconds())/1000, "key-p50-ms")
	b.ReportMetric(float64(percentile(p.lat, 0.99).Microseconds())/1000, "key-p99-ms")
	b.ReportMetric(float64(percentile(p.lat, 1).Microseconds())/1000, "key-max-ms")
	b.ReportMetric(float64(percentile(p.frames, 0.5).Microseconds())/1000, "frame-p50-ms")
	b.ReportMetric(float64(percentile(p.frames, 0.99).Microseconds())/1000, "frame-p99-ms")
	b.ReportMetric(float64(len(p.lat)), "keys")
	b.ReportMetric(elapsed.Seconds(), "stream-s")
}

func (p *latencyProbe) send(tm *teatest.TestModel) {
	p.mu.Lock()
	if !p.sentAt.IsZero() {
		p.mu.Unlock()
		return
	}
	p.sentAt = time.Now()
	p.mu.Unlock()
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
}

func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// BenchmarkKeyLatencyWhileStreaming10MB runs the real program over a real
// session whose role streams a 10 MB Markdown reply, pressing a key every
// 20 ms until the run ends. It reports the key latency (sent → answering
// frame built) and the frame build time. Run with -benchtime=1x.
func BenchmarkKeyLatencyWhileStreaming10MB(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := soloStreamSession(b, 10<<20)
		p := &latencyProbe{Model: New(s, Options{Labels: render.LabelSet{}, NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard})}
		tm := teatest.NewTestModel(b, p, teatest.WithInitialTermSize(120, 40))
		if _, err := s.Submit(p.ctx, runner.Submission{Task: "Stream a long reply"}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for {
			p.mu.Lock()
			done := p.done
			p.mu.Unlock()
			if done || time.Since(start) > 10*time.Minute {
				break
			}
			p.send(tm)
			time.Sleep(20 * time.Millisecond)
		}
		elapsed := time.Since(start)
		_ = tm.Quit()
		p.report(b, elapsed)
	}
}

// BenchmarkLivePaneFrame10MB is one batch of streamed deltas applied and
// the frame drawn, once a 10 MB reply has streamed in: the cost of a frame
// of the live pane late in a long reply.
func BenchmarkLivePaneFrame10MB(b *testing.B) {
	events := syntheticRun(b, 50)
	m := New(newFakeSession(b, events), Options{Labels: seedLabels(b), NoAnimation: true, MarkdownStyle: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	reply := bigReply(10 << 20)
	role := lastRoleID(events)
	delta := func(s string) event.Event {
		e, _ := event.New(time.Now(), event.LLMDelta, event.LLMDeltaPayload{RoleID: role, Content: s})
		e.Ephemeral = true
		return e
	}
	// Stream the reply in 12-byte deltas, 512 to a batch, as the bus does.
	var batch []event.Event
	pos := 0
	next := func() []event.Event {
		batch = batch[:0]
		for len(batch) < 512 {
			if pos >= len(reply) {
				pos = 0
			}
			end := min(len(reply), pos+12)
			batch = append(batch, delta(reply[pos:end]))
			pos = end
		}
		return batch
	}
	for pos < len(reply)-12*512 {
		m.Update(eventsMsg{next()})
	}
	_ = m.View()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(eventsMsg{next()})
		_ = m.View()
	}
}

// BenchmarkKeyLatencyPacedStream10MB is the same with the deltas paced so
// that the console receives every one of them (the bus drops deltas for a
// subscriber that falls behind): 10 MB in 12-byte deltas, published in
// bursts of 256 with a millisecond between bursts.
func BenchmarkKeyLatencyPacedStream10MB(b *testing.B) {
	for i := 0; i < b.N; i++ {
		events := syntheticRun(b, 50)
		fs := newFakeSession(b, events)
		p := &latencyProbe{Model: New(fs, Options{Labels: seedLabels(b), NoAnimation: true, MarkdownStyle: "notty", Output: io.Discard})}
		tm := teatest.NewTestModel(b, p, teatest.WithInitialTermSize(120, 40))
		role := lastRoleID(events)
		reply := bigReply(10 << 20)
		done := make(chan struct{})
		start := time.Now()
		go func() {
			defer close(done)
			for pos, n := 0, 0; pos < len(reply); n++ {
				end := min(len(reply), pos+12)
				e, _ := event.New(time.Now(), event.LLMDelta, event.LLMDeltaPayload{RoleID: role, Content: reply[pos:end]})
				e.Ephemeral = true
				fs.bus.Publish(e)
				pos = end
				if n%256 == 255 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
		for stop := false; !stop; {
			select {
			case <-done:
				stop = true
			default:
				p.send(tm)
				time.Sleep(20 * time.Millisecond)
			}
		}
		elapsed := time.Since(start)
		_ = tm.Quit()
		p.report(b, elapsed)
	}
}
