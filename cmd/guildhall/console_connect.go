package main

// The console's start-up probe in the background. The console opens at
// once, its footer saying "connecting to MODEL @ HOST…", instead of a
// blank terminal for the probe's five seconds against an endpoint that
// accepts and never answers. What the probe decides — the model name, the
// context window and, with them, the guild (the compact seed guild for a
// small window) — is handed to the session before its first run: no run
// starts while the probe runs (tui holds the task, the queue waits for
// the endpoint), so swapping the guild (Session.SetGuild) and the
// deployment (Reconfigure) is safe. The runs folder is reconciled after,
// with the guild the runs will resume under.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/render/labelset"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/tui"
)

// noter takes start-up notes: lines written as "note: …", or one at a
// time.
type noter interface {
	io.Writer
	note(text string)
}

// afterScreen keeps lines for the terminal once the console's screen is
// gone: nothing may be printed over the screen while it is up.
type afterScreen struct {
	mu    sync.Mutex
	lines []string
}

func (a *afterScreen) add(line string) {
	a.mu.Lock()
	a.lines = append(a.lines, line)
	a.mu.Unlock()
}

func (a *afterScreen) print(w io.Writer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, l := range a.lines {
		fmt.Fprintln(w, "note:", render.SanitizeLine(l))
	}
}

// connectInBackground probes the setup's pending endpoint and hands what
// it found to the session and the console's endpoint, then reconciles the
// runs folder as the start does. Its notes go to the console and, once
// the screen is gone, to the terminal.
func connectInBackground(ctx context.Context, sess *runner.Session, s *setup, endpoint *consoleEndpoint, task string, after *afterScreen) tui.Connected {
	p := s.probe(ctx)
	notes := &noteCollector{w: io.Discard}
	for _, n := range p.notes {
		notes.note(n)
	}
	var out tui.Connected
	finish := func() tui.Connected {
		out.Notes = notes.notes()
		for _, n := range out.Notes {
			after.add(n)
		}
		return out
	}
	if p.problem != nil {
		out.Problem = capitalize(withoutExit(p.problem).Error())
		return finish()
	}
	if p.guild != s.guild {
		if err := sess.SetGuild(p.guild); err != nil {
			notes.note("the guild for the model's window was not applied: " + err.Error())
		} else if labels, err := labelset.FromGuild(p.guild); err == nil {
			out.Labels = &labels
		}
	}
	if err := sess.Reconfigure(runner.Endpoint{Deployment: p.deployment, Provider: p.endpoint.provider, Answered: p.endpoint.answered, Probe: p.endpoint.probeErr}); err != nil {
		notes.note("the endpoint's model list was not applied: " + err.Error())
	} else {
		endpoint.adopt(p.deployment, p.endpoint)
	}
	problem := ""
	if u := p.endpoint.unanswered(); u != nil {
		problem = capitalize(u.Explain())
		after.add(strings.SplitN(u.Explain(), "\n", 2)[0])
		notes.note("the queue waits for the model endpoint: queued tasks start once it answers")
	}
	reconcileAtStart(ctx, sess, notes, problem, task)
	out.Problem = problem
	if problem == "" {
		endpoint.answered()
	}
	return finish()
}
