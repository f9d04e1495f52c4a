package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/guildhall/guildhall/render"
	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// showListed is how many failed tool results and stopped roles `show`
// lists.
const showListed = 20

// activity is what `guildhall show` says about what a run did, read from
// its log by the one outcome rule (render): the tool calls, those whose
// command failed, the roles that did not succeed, and the platform's
// notes (the endpoint writes tool calls as text, a role repeated itself,
// the model answered without doing anything).
type activity struct {
	calls    int
	failed   []string
	roles    []string
	notes    []string
	noAction bool
	models   modelUse
}

// readActivity folds the events of a run's log that `show` reports on.
func readActivity(ws store.Workspace, runID string) (activity, error) {
	var a activity
	path, err := ws.LogPath(runID)
	if err != nil {
		return a, err
	}
	_, err = store.ReadLog(path, func(_ int64, rec []byte) error {
		e, err := event.ParseLine(rec)
		if err != nil {
			return nil
		}
		a.apply(e)
		return nil
	})
	return a, err
}

func (a *activity) apply(e event.Event) {
	a.models.apply(e)
	switch e.Type {
	case event.ToolResult:
		var p event.ToolResultPayload
		if e.Decode(&p) != nil || p.Tool == "agent" || p.Tool == "finish" {
			return
		}
		a.calls++
		if render.ToolVerdict(p).Failed() {
			a.failed = append(a.failed, render.ToolResultLine(p))
		}
	case event.RoleFinished:
		if line, ok := render.HeadlessLine(e); ok {
			var p event.RoleFinishedPayload
			if e.Decode(&p) == nil && p.Status != "success" {
				a.roles = append(a.roles, line)
			}
		}
	case event.TextToolCalls, event.Repetition:
		if line, ok := render.HeadlessLine(e); ok {
			a.notes = append(a.notes, line)
		}
	case event.RunStatus:
		var p event.RunStatusPayload
		if e.Decode(&p) == nil && store.Terminal(p.Status) {
			a.noAction = p.NoAction
		}
	}
}

// showActivity prints the "Activity" section of `guildhall show`.
func showActivity(out io.Writer, ws store.Workspace, runID string) {
	a, err := readActivity(ws, runID)
	if err != nil {
		fmt.Fprintln(out, "\nActivity\n  unavailable: "+render.SanitizeLine(err.Error()))
		return
	}
	fmt.Fprintln(out, "\nActivity")
	if a.noAction {
		fmt.Fprintln(out, "  "+render.NoActionText)
	}
	fmt.Fprintf(out, "  %s, %d failed\n", plural(a.calls, "tool call"), len(a.failed))
	list(out, a.failed)
	list(out, a.roles)
	list(out, a.notes)
	a.models.show(out)
}

// list prints lines, at most showListed of them.
func list(out io.Writer, lines []string) {
	for i, l := range lines {
		if i == showListed {
			fmt.Fprintf(out, "  … and %d more (guildhall run's lines, or the Log screen, show them all)\n", len(lines)-i)
			return
		}
		fmt.Fprintln(out, "  "+strings.TrimLeft(l, " "))
	}
}
