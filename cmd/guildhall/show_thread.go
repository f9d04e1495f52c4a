package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner"
	"github.com/guildhall/guildhall/runner/thread"
	"github.com/guildhall/guildhall/store"
)

// threadWidth is the width prose is rendered at.
const threadWidth = 80

// showThread prints the "Thread" section of `guildhall show`: the cached
// thread title when there is one, the deterministic identity, then every
// entry. Markers, answers and machine fields are plain, escape-safe lines;
// agent prose (tasks, results, questions and their context) is rendered as
// Markdown. The shown run's own task and result are already on the card
// above, so the thread only marks where they come. It never calls a model.
func showThread(out io.Writer, ws store.Workspace, runID string) {
	fmt.Fprintln(out, "\nThread")
	th, err := runner.LoadThread(ws, runID)
	if err != nil {
		fmt.Fprintln(out, "  unavailable: "+render.SanitizeLine(err.Error()))
		return
	}
	if title, desc, ok := runner.CachedThreadSummary(ws, runID); ok {
		fmt.Fprintln(out, "  "+render.SanitizeLine(title))
		if desc != "" {
			fmt.Fprintln(out, "  "+render.SanitizeLine(desc))
		}
	}
	fmt.Fprintln(out, "  "+identityLine(th.Identity))
	md := render.NewMarkdownRenderer("notty")
	for _, e := range th.Entries {
		if e.RunID == runID && (e.Kind == thread.Human || e.Kind == thread.Orchestrator) {
			fmt.Fprintf(out, "\n%s  %s\n  (shown above)\n", entryHeading(e), e.At.Local().Format("2006-01-02 15:04:05"))
			continue
		}
		writeThreadEntry(out, md, e)
	}
}

func identityLine(id thread.Identity) string {
	return fmt.Sprintf("%s · %s · %s asked, %d answered",
		plural(id.Runs, "run"), plural(id.Continuations, "continuation"), plural(id.Questions, "question"), id.Answered)
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func writeThreadEntry(out io.Writer, md *render.MarkdownRenderer, e thread.Entry) {
	at := e.At.Local().Format("2006-01-02 15:04:05")
	switch e.Kind {
	case thread.Marker:
		fmt.Fprintf(out, "\n  · %s  %s\n", at, render.SanitizeLine(e.Text))
	case thread.Answer:
		head := "Operator answered"
		if e.Label != "" {
			head += " (" + render.SanitizeLine(e.Label) + ")"
		}
		fmt.Fprintf(out, "\n%s  %s\n", head, at)
		for _, line := range strings.Split(render.Sanitize(e.Text), "\n") {
			fmt.Fprintln(out, "  "+line)
		}
	default:
		fmt.Fprintf(out, "\n%s  %s\n", entryHeading(e), at)
		fmt.Fprintln(out, prose(md, e.Text, threadWidth))
		if e.Context != "" {
			if e.Kind == thread.Orchestrator {
				fmt.Fprintln(out, "\nError")
			} else {
				fmt.Fprintln(out, "\nContext")
			}
			fmt.Fprintln(out, prose(md, e.Context, threadWidth))
		}
	}
}

func entryHeading(e thread.Entry) string {
	switch e.Kind {
	case thread.Human:
		return "Operator · task of " + render.SanitizeLine(e.RunID)
	case thread.Question:
		return "Orchestrator asked"
	case thread.Orchestrator:
		return "Orchestrator · result (" + render.SanitizeLine(e.Label) + ")"
	}
	return render.SanitizeLine(e.Kind)
}
