package runner

// The queue briefing: what a dispatched item's entry role is told of the
// runs that finished while it waited.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/guildhall/guildhall/store"
)

// MaxBriefingRuns caps the runs a queue briefing lists.
const MaxBriefingRuns = 20

// BriefingHeader opens every queue briefing.
const BriefingHeader = "[Queue briefing — runs that finished while this task waited]"

// QueueBriefing is the platform context a dispatched item's entry role
// gets below its task: the runs that finished while the item waited (those
// started after it was created, its own earlier attempts excepted), oldest
// first, at most MaxBriefingRuns of them, each with its id, status, the
// first line of its task and of its outcome. It is "" when none ran.
func QueueBriefing(ws store.Workspace, item store.QueueItem) string {
	ids, err := ws.ListRunIDs()
	if err != nil {
		return ""
	}
	var lines []string
	more := false
	for _, id := range ids { // newest first
		if slices.Contains(item.Runs, id) {
			continue
		}
		m, err := ws.ReadMeta(id)
		if err != nil || m.Foreign {
			continue // a planted run's task must not reach the model
		}
		if m.StartedAt.Before(item.CreatedAt) {
			break
		}
		if !store.Terminal(m.Status) {
			continue
		}
		if len(lines) == MaxBriefingRuns {
			more = true
			break
		}
		lines = append(lines, briefingLine(m))
	}
	if len(lines) == 0 {
		return ""
	}
	slices.Reverse(lines)
	var b strings.Builder
	b.WriteString(BriefingHeader + "\n")
	fmt.Fprintf(&b, "This task was queued at %s. These runs finished since then, oldest first. The workspace may have changed: check that the task still needs doing before you act.\n",
		item.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	if more {
		fmt.Fprintf(&b, "(Only the latest %d are listed.)\n", MaxBriefingRuns)
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func briefingLine(m *store.Meta) string {
	line := fmt.Sprintf("- %s (%s): %s", m.RunID, m.Status, clipLine(m.Task, 100))
	outcome := ""
	if m.Result != nil {
		outcome = m.Result.Summary
	}
	if m.Error != nil && m.Error.Message != "" && m.Status != store.StatusSuccess {
		outcome = m.Error.Message
	}
	if o := clipLine(outcome, 140); o != "" {
		line += " — " + o
	}
	return line
}

// clipLine is the first non-empty line of s, cut to n runes.
func clipLine(s string, n int) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			r := []rune(l)
			if len(r) > n {
				return string(r[:n-1]) + "…"
			}
			return l
		}
	}
	return ""
}
