package main

// The console's first seconds on the real binary in tmux: against an
// endpoint that accepts and never answers, the console is on screen with
// "connecting to …" in its footer before the probe gives up and the
// endpoint dialog opens; against a server with a small window, the probe
// that ran behind the console still picks the compact seed guild for the
// task that waited.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guildhall/guildhall/internal/fakellm"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/store"
)

// silentEndpoint is a TCP server that accepts every connection and never
// writes a byte.
func silentEndpoint(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// startConsolePane runs the console on ws with args in a tmux pane of its
// own, with h's environment and no keys.
func startConsolePane(t *testing.T, h *hostile, ws string, args ...string) *tmuxConsole {
	t.Helper()
	needTmux(t)
	var env []string
	for _, kv := range h.env("OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "TERM=xterm-256color") {
		env = append(env, singleQuote(kv))
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = singleQuote(a)
	}
	c := &tmuxConsole{t: t, name: fmt.Sprintf("guildhall-connect-%d-%d", os.Getpid(), time.Now().UnixNano())}
	script := fmt.Sprintf("cd %s && env -i %s %s %s 2>%s; sleep 60",
		singleQuote(ws), strings.Join(env, " "), h.bin, strings.Join(quoted, " "), filepath.Join(h.root, "stderr"))
	c.tmux("new-session", "-d", "-s", c.name, "-x", "100", "-y", "30", script)
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", c.name).Run() })
	return c
}

// TestConsoleDrawsAtOnceAgainstASilentEndpoint: the console's first frame
// says where it connects, and the task waits, before the model list's
// probe times out and the endpoint dialog opens.
func TestConsoleDrawsAtOnceAgainstASilentEndpoint(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("silent")
	host := silentEndpoint(t)
	began := time.Now()
	c := startConsolePane(t, h, ws, "--base-url", "http://"+host+"/v1", "Say hello")
	var first string
	for {
		s := c.capture()
		if strings.Contains(s, "The model endpoint did not answer") {
			t.Fatalf("the endpoint dialog came before any connecting frame; screen:\n%s", s)
		}
		if strings.Contains(s, "connecting to "+host+"…") {
			first = s
			break
		}
		if time.Since(began) > 60*time.Second {
			t.Fatalf("the console never said it was connecting; screen:\n%s", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	shown := time.Since(began)
	if !strings.Contains(first, "Connecting to the model endpoint: your task starts once it answers.") || strings.Contains(first, "No run yet.") {
		t.Errorf("the connecting frame does not say the task waits:\n%s", first)
	}
	c.waitFor("The model endpoint did not answer", "no answer in time", "Your task waits")
	dialog := time.Since(began)
	t.Logf("connecting frame after %s, endpoint dialog after %s (probe timeout %s)", shown.Round(time.Millisecond), dialog.Round(time.Millisecond), probeTimeout)
	if ids, _ := (store.Workspace{Dir: ws}).ListRunIDs(); len(ids) != 0 {
		t.Errorf("a run started against the silent endpoint: %v", ids)
	}
	c.keys("Escape", "q")
}

// TestConsoleProbeBehindTheScreenPicksTheCompactGuild: the window the
// server reports arrives after the console is up; the task that waited
// runs with the compact seed guild it calls for, and the footer names the
// model the server reported.
func TestConsoleProbeBehindTheScreenPicksTheCompactGuild(t *testing.T) {
	h := newHostile(t)
	ws := h.workspace("small-window")
	f := fakellm.New()
	defer f.Close()
	f.ContextWindow = 4096
	for range 4 {
		f.Queue("", fakellm.Reply{Calls: []fakellm.Call{{Name: "finish", Args: map[string]any{"status": "success", "summary": "Said hello."}}}})
	}
	c := startConsolePane(t, h, ws, "--base-url", f.BaseURL(), "Say hello")
	c.waitFor("Result · run-", "Said hello.")
	ids, _ := (store.Workspace{Dir: ws}).ListRunIDs()
	if len(ids) != 1 {
		t.Fatalf("runs %v", ids)
	}
	m, err := (store.Workspace{Dir: ws}).ReadMeta(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if m.GuildPath != "seed-compact" {
		t.Errorf("the run's guild is %q, want seed-compact for a 4096-token window", m.GuildPath)
	}
	c.keys("Escape")
	time.Sleep(300 * time.Millisecond)
	c.keys("N")
	c.waitFor("using the compact seed guild")
	c.keys("Escape", "q")
}

// TestConnectInBackgroundHandsTheProbeToTheSession: in process (and under
// -race), the probe behind the console gives the session the model, the
// window and the compact guild the server's window calls for, while the
// console reads the session's model and the endpoint's settings; the
// setup's own deployment is left as it was.
func TestConnectInBackgroundHandsTheProbeToTheSession(t *testing.T) {
	noKeys(t)
	f := fakellm.New()
	defer f.Close()
	f.ContextWindow = 4096
	ws := t.TempDir()
	c := &commonFlags{workspace: ws, baseURL: f.BaseURL(), keys: keyring{}, sandbox: sandboxFlags{}}
	s, err := c.loadConsole(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.endpoint.pending || s.guild.Path != "seed" || s.deployment.Model.Name != "" {
		t.Fatalf("loadConsole probed already: pending %v, guild %s, model %q", s.endpoint.pending, s.guild.Path, s.deployment.Model.Name)
	}
	sess, err := runner.OpenSession(s.sessionConfig(false))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	endpoint := newConsoleEndpoint(c.keys, sess, s)
	answered := 0
	endpoint.onAnswered = func() { answered++ }
	stop := make(chan struct{})
	readers := make(chan struct{})
	go func() { // the console's reads while the probe runs
		defer close(readers)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = sess.ModelInfo()
			_ = sess.Guild()
			_ = endpoint.Settings()
		}
	}()
	var after afterScreen
	got := connectInBackground(context.Background(), sess, s, endpoint, "Say hello", &after)
	close(stop)
	<-readers
	if got.Problem != "" {
		t.Fatalf("problem %q", got.Problem)
	}
	if g := sess.Guild(); g.Path != compactSeedPath {
		t.Errorf("the session's guild is %s, want %s for a 4096-token window", g.Path, compactSeedPath)
	}
	mi := sess.ModelInfo()
	if mi.Name == "" || mi.ContextWindow != 4096 {
		t.Errorf("the session's model %+v, want the server's name and its 4096-token window", mi)
	}
	if endpoint.Settings().Model != mi.Name || answered != 1 || !sess.EndpointAnswered() {
		t.Errorf("the console's endpoint: settings %+v, answered %d, session answered %v", endpoint.Settings(), answered, sess.EndpointAnswered())
	}
	if got.Labels == nil || !strings.Contains(strings.Join(got.Notes, "\n"), "using the compact seed guild") {
		t.Errorf("labels %v, notes %q", got.Labels != nil, got.Notes)
	}
	if s.deployment.Model.Name != "" || s.deployment.Model.ContextWindow == 4096 {
		t.Errorf("the probe changed the setup's own deployment: %+v", s.deployment.Model)
	}
}
