package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/guildhall/guildhall/render/labelset"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/seed"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tui"
	"github.com/guildhall/guildhall/web"
	"github.com/guildhall/guildhall/web/client"
)

// console is a real web.Server over a fake session, on loopback.
type console struct {
	fs      *fakeSession
	ts      *httptest.Server
	token   string
	streams atomic.Int32 // GET /api/stream requests
	resumed atomic.Value // the last Last-Event-ID sent
}

func newConsole(t testing.TB) *console {
	t.Helper()
	g, err := runner.LoadGuild(seed.Guild(), "seed")
	if err != nil {
		t.Fatal(err)
	}
	c := &console{fs: newFakeSession(t)}
	srv, err := web.New(c.fs, g, "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv.Start(ctx)
	h := srv.Handler()
	c.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/stream" {
			c.streams.Add(1)
			c.resumed.Store(r.Header.Get("Last-Event-ID"))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(c.ts.Close)
	c.token = srv.Token()
	return c
}

func (c *console) dial(t testing.TB, mutate ...func(*client.Config)) *client.Session {
	t.Helper()
	cfg := client.Config{URL: c.ts.URL + "/", Token: c.token, Workspace: c.fs.WS, GiveUp: 2 * time.Second}
	for _, m := range mutate {
		m(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// hostile is text a model or a workspace file could carry: a clipboard
// write (OSC 52), a screen clear, a title change, a bell, C1 CSI and a
// bidirectional override.
const hostile = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b]0;pwned\x07\a\u009b31m\u202e"

// collect reads n events from sub, failing after a while.
func collect(t *testing.T, sub *runner.Subscription, n int) []event.Event {
	t.Helper()
	var out []event.Event
	timeout := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case e := <-sub.C:
			if !e.Ephemeral {
				out = append(out, e)
			}
		case <-sub.Done():
			t.Fatalf("the subscription ended after %d of %d events", len(out), n)
		case <-timeout:
			t.Fatalf("got %d of %d events", len(out), n)
		}
	}
	return out
}

func TestRemoteSessionMirrorsTheRun(t *testing.T) {
	c := newConsole(t)
	id := c.fs.start(t, "Fix the tests")
	c.fs.Emit(t, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "Fix the tests"})
	q := event.AskHumanPayload{ID: "q-1", Role: "orchestrator", RoleID: "orchestrator-0-1", Question: "Proceed?" + hostile,
		Options: []event.Option{{Label: "Yes"}, {Label: "No"}}}
	c.fs.ask(t, q)

	s := c.dial(t)
	if run, live := s.Active(); !live || run != id {
		t.Fatalf("Active = %q, %v; want %s live", run, live, id)
	}
	backlog, sub := s.Subscribe(256)
	if len(backlog) != 3 {
		t.Fatalf("backlog has %d events, want the run's 3", len(backlog))
	}
	for i, e := range backlog {
		if e.Seq != int64(i) {
			t.Errorf("backlog[%d].Seq = %d", i, e.Seq)
		}
	}
	var got event.AskHumanPayload
	if err := backlog[2].Decode(&got); err != nil || got.Question != q.Question || len(got.Options) != 2 {
		t.Errorf("the question arrived as %+v (%v): events must arrive whole, for the console to sanitise", got, err)
	}
	if qs := s.Questions(); len(qs) != 1 || qs[0].ID != "q-1" || qs[0].RunID != id || qs[0].Options[1].Label != "No" {
		t.Errorf("Questions = %+v", qs)
	}

	c.fs.Emit(t, event.ToolCall, event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file"})
	if live := collect(t, sub, 1); live[0].Type != event.ToolCall || live[0].Seq != 3 {
		t.Errorf("live event %s #%d, want tool_call #3", live[0].Type, live[0].Seq)
	}
	if h := s.Health(); h.State != runner.HealthDegraded || h.ConsecutiveFailures != 2 {
		t.Errorf("Health = %+v", h)
	}
	for _, fn := range []func() error{
		func() error { return s.Pause(id) },
		func() error { return s.Resume(id) },
		func() error { return s.Interrupt(id, "inquiry", "status?") },
		func() error { return s.Terminate(id) },
	} {
		if err := fn(); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(c.fs.controls, ","); got != "pause,resume,inquiry:status?,terminate" {
		t.Errorf("the console got %s", got)
	}
	if err := s.Pause("run-20200101-000000"); !errors.Is(err, runner.ErrRunNotActive) {
		t.Errorf("pausing another run: %v, want ErrRunNotActive", err)
	}
	if err := s.Interrupt(id, "inquiry", "  "); err == nil {
		t.Error("an empty inquiry was accepted")
	}
}

// The attached console shows hostile event text stripped: the client
// hands the console the events whole and the console's own sanitiser
// runs, as for a local run.
func TestAttachedConsoleSanitisesHostileText(t *testing.T) {
	c := newConsole(t)
	c.fs.start(t, "Task "+hostile+"ends")
	c.fs.Emit(t, event.RoleStart, event.RoleStartPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Task: "Task " + hostile})
	c.fs.ask(t, event.AskHumanPayload{ID: "q-1", Role: "orchestrator", RoleID: "orchestrator-0-1",
		Question: "Delete " + hostile + "everything?", Context: "ctx " + hostile, Options: []event.Option{{Label: "opt" + hostile}}})
	s := c.dial(t)
	labels, err := labelset.FromGuild(mustGuild(t))
	if err != nil {
		t.Fatal(err)
	}
	m := tui.New(s, tui.Options{Labels: labels, NoAnimation: true, Attached: true, MarkdownStyle: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	view := m.View()
	if !strings.Contains(view, "everything?") {
		t.Fatalf("the question is not on screen:\n%s", view)
	}
	for _, bad := range []string{"\x1b]", "\x1b[2J", "\a", "\u009b", "\u202e", "pwned\x07"} {
		if strings.Contains(view, bad) {
			t.Errorf("the screen carries %q:\n%q", bad, view)
		}
	}
}

func mustGuild(t *testing.T) *runner.Guild {
	t.Helper()
	g, err := runner.LoadGuild(seed.Guild(), "seed")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A stream that drops is resumed with Last-Event-ID: the events published
// while it was down arrive, none twice, in order.
func TestStreamResumesWithoutLossOrRepeat(t *testing.T) {
	c := newConsole(t)
	id := c.fs.start(t, "long run")
	s := c.dial(t)
	backlog, sub := s.Subscribe(4096)
	emitN := func(n int) {
		for i := 0; i < n; i++ {
			c.fs.Emit(t, event.ToolCall, event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: fmt.Sprintf("t%d", i)})
		}
	}
	emitN(20)
	seen := append(backlog, collect(t, sub, 20)...)
	for round := 0; round < 3; round++ {
		c.ts.CloseClientConnections()
		emitN(30) // some while the stream is down
		seen = append(seen, collect(t, sub, 30)...)
	}
	for i, e := range seen {
		if e.Seq != int64(i) {
			t.Fatalf("event %d has seq %d: lost or repeated (seqs %v)", i, e.Seq, seqs(seen))
		}
	}
	if n := c.streams.Load(); n < 4 {
		t.Errorf("%d stream connections: the drops were not resumed", n)
	}
	if last, _ := c.resumed.Load().(string); !strings.HasPrefix(last, id+":") {
		t.Errorf("the resumed stream sent Last-Event-ID %q", last)
	}
	if sub.Dropped() != 0 {
		t.Errorf("%d events dropped", sub.Dropped())
	}
	select {
	case e := <-sub.C:
		t.Errorf("an extra event %s #%d", e.Type, e.Seq)
	case <-time.After(300 * time.Millisecond):
	}
}

func seqs(es []event.Event) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

// Two attached terminals answer one question at once: one wins, the other
// is told, and the log has one answer, from an attached terminal.
func TestTwoAttachedClientsAnswerAtOnce(t *testing.T) {
	c := newConsole(t)
	id := c.fs.start(t, "ask")
	c.fs.ask(t, event.AskHumanPayload{ID: "q-1", Question: "Which?"})
	a, b := c.dial(t), c.dial(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	start := make(chan struct{})
	for i, s := range []*client.Session{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = s.Answer("q-1", fmt.Sprintf("answer %d", i), "terminal")
		}()
	}
	close(start)
	wg.Wait()
	won, told := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case errors.Is(err, runner.ErrAlreadyAnswered):
			told++
		default:
			t.Errorf("answer: %v", err)
		}
	}
	if won != 1 || told != 1 {
		t.Fatalf("%d answers won and %d were told it was answered; want 1 and 1 (%v)", won, told, errs)
	}
	answers := 0
	for _, typ := range logTypes(t, c.fs.WS, id) {
		if typ == event.HumanAnswer {
			answers++
		}
	}
	if answers != 1 || c.fs.sources["q-1"] != "attach" {
		t.Errorf("%d human_answer events, source %q; want 1 from attach", answers, c.fs.sources["q-1"])
	}
}

// A console that refuses, answers garbage or hangs gives a clear error in
// bounded time, never a hang.
func TestDialRefusalsAreClearErrors(t *testing.T) {
	configOK := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"queue":false}`)
	}
	stream := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/config" {
				configOK(w)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, body)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
		is      error
	}{
		{name: "401", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"ok":false,"error":"unauthorized"}`)
		}, is: client.ErrUnauthorized},
		{name: "html page", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>hello</html>")
		}, want: "not JSON"},
		{name: "json that does not parse", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"queue": tru`)
		}, want: "does not parse"},
		{name: "hostile error code", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTeapot)
			fmt.Fprint(w, `{"ok":false,"error":"\u001b]0;pwned\u0007"}`)
		}, want: "418 unexpected_answer"},
		{name: "hangs", handler: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, want: "deadline exceeded"},
		{name: "stream that is JSON", handler: func(w http.ResponseWriter, r *http.Request) { configOK(w) }, want: "not an event stream"},
		{name: "stream of garbage", handler: stream("event: log\ndata: {not json\n\n"), want: "does not parse"},
		{name: "stream with a hostile run id", handler: stream(`event: log` + "\n" + `data: {"runId":"../../etc","seq":0,"type":"run_started","payload":{}}` + "\n\n"), want: "run id"},
		{name: "hello with a hostile run id", handler: stream("event: hello\ndata: {\"runId\":\"run-20260101-000000\\u001b]52;c;UFdORUQ=\\u0007\\u001b]0;pwned\\u0007\\u001b[2J\",\"active\":true}\n\nevent: ready\ndata: {}\n\n"), want: "names no run id"},
		{name: "hello with a run id that is a path", handler: stream("event: hello\ndata: {\"runId\":\"../../etc/passwd\",\"active\":true}\n\nevent: ready\ndata: {}\n\n"), want: "names no run id"},
		{name: "stream that never gets ready", handler: stream("event: hello\ndata: {\"runId\":\"\",\"active\":false}\n\n"), want: "sent nothing"},
		{name: "stream refused", handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/config" {
				configOK(w)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"ok":false,"error":"forbidden_host"}`)
		}, want: "403 forbidden_host"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(tc.handler)
			defer ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			began := time.Now()
			_, err := client.Dial(ctx, client.Config{URL: ts.URL + "/", Token: "t", Workspace: store.Workspace{Dir: t.TempDir()},
				RequestTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
			if err == nil {
				t.Fatal("Dial succeeded")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want %v", err, tc.is)
			}
			if tc.want != "" && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
			if strings.ContainsAny(err.Error(), "\x1b\a") {
				t.Errorf("the error carries terminal control: %q", err)
			}
			if d := time.Since(began); d > 3*time.Second {
				t.Errorf("Dial took %v", d)
			}
		})
	}
}

func TestWrongTokenIsUnauthorized(t *testing.T) {
	c := newConsole(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := client.Dial(ctx, client.Config{URL: c.ts.URL + "/", Token: strings.Repeat("0", 64), Workspace: c.fs.WS})
	if !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("err = %v, want ErrUnauthorized", err)
	}
}

// A console that goes away ends the session, its subscriptions and says
// why.
func TestSessionEndsWhenTheConsoleGoes(t *testing.T) {
	c := newConsole(t)
	c.fs.start(t, "x")
	s := c.dial(t, func(cfg *client.Config) { cfg.GiveUp = 500 * time.Millisecond })
	_, sub := s.Subscribe(16)
	c.ts.CloseClientConnections()
	c.ts.Close()
	select {
	case <-sub.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription outlived the console")
	}
	if !errors.Is(s.Err(), client.ErrConsoleGone) {
		t.Errorf("Err = %v, want ErrConsoleGone", s.Err())
	}
}

// BenchmarkStreamEvent is the cost of one log event from the console's
// session to an attached terminal's subscription: log append, the
// server's live view and stream, SSE over loopback, decode, local bus.
func BenchmarkStreamEvent(b *testing.B) {
	c := newConsole(b)
	c.fs.start(b, "bench")
	s := c.dial(b)
	_, sub := s.Subscribe(1 << 16)
	p := event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", Arguments: `{"path":"README.md"}`}
	b.ResetTimer()
	done := make(chan struct{})
	go func() {
		for i := 0; i < b.N; i++ {
			<-sub.C
		}
		close(done)
	}()
	for i := 0; i < b.N; i++ {
		c.fs.Emit(b, event.ToolCall, p)
	}
	<-done
}

// BenchmarkAttachCatchUp10k is the cost of attaching to a run with 10,000
// logged events: Dial reads them all (from the log, through the stream)
// before it returns.
func BenchmarkAttachCatchUp10k(b *testing.B) {
	c := newConsole(b)
	c.fs.start(b, "long")
	p := event.ToolCallPayload{Role: "orchestrator", RoleID: "orchestrator-0-1", Tool: "read_file", Arguments: `{"path":"README.md"}`}
	for i := 0; i < 9999; i++ {
		c.fs.Emit(b, event.ToolCall, p)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := c.dial(b)
		if backlog, _ := s.Subscribe(16); len(backlog) != 10000 {
			b.Fatalf("backlog %d", len(backlog))
		}
		_ = s.Close()
	}
}
