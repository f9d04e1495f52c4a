// Package thread derives a run's human-facing task thread from its log and
// the logs of the runs it continues: the operator's tasks and answers, the
// entry role's questions and results, and platform markers, nothing else.
// The thread summariser (runner), the TUI's thread view, the web thread
// route and `guildhall show --thread` all read it.
package thread

import (
	"strings"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
)

// Thread entry kinds.
const (
	// Human is the operator's prose: the task of each run.
	Human = "human"
	// Orchestrator is the entry role's human-facing result: its
	// finish summary.
	Orchestrator = "orchestrator"
	// Question is an ask_human question of the entry role.
	Question = "question"
	// Answer is the operator's answer to a question (plain text).
	Answer = "answer"
	// Marker is a platform marker: a plain label, never prose.
	Marker = "marker"
)

// Marker labels (Entry.Label of a marker).
const (
	MarkerStarted      = "started"
	MarkerContinued    = "continued"
	MarkerSuspended    = "suspended"
	MarkerResumed      = "resumed"
	MarkerPaused       = "paused"
	MarkerInterrupted  = "interrupted"
	MarkerTerminated   = "terminated"
	MarkerFinished     = "finished"
	MarkerInquiry      = "inquiry"
	MarkerPlanModified = "plan_modification"
)

// Run is one run of a continuation chain as the caller loaded it:
// the meta.json fields (fallbacks when the log lacks run_started) and the
// run's log events in order.
type Run struct {
	RunID         string
	Task          string
	Status        string
	EntryRole     string
	StartedAt     time.Time
	ContinuesFrom string
	Events        []event.Event
}

// Thread is the human-facing task thread of a run and the runs it
// continues: the deterministic identity and the entries, oldest first. It is
// what GET /api/runs/:id/thread serves and what the thread summariser sends
// to the model, so it carries nothing but human-facing text (see
// Derive).
type Thread struct {
	Identity Identity `json:"identity"`
	Entries  []Entry  `json:"entries"`
}

// Identity is the deterministic identity of a thread: what a header
// shows when there is no generated summary.
type Identity struct {
	// FirstTask is the task of the oldest run of the chain (Markdown).
	FirstTask string `json:"firstTask"`
	// Runs counts the runs of the chain; Continuations those that continue
	// an earlier run.
	Runs          int `json:"runs"`
	Continuations int `json:"continuations"`
	// Questions counts the entry role's questions; Answered those answered.
	Questions int `json:"questions"`
	Answered  int `json:"answered"`
	// LatestHumanText is the newest thing the operator said: the latest
	// task or answer.
	LatestHumanText string `json:"latestHumanText"`
}

// Entry is one turn of the thread.
//
// Text is Markdown for human, orchestrator and question entries; it is plain
// text for answers (the operator's own words) and markers (platform copy,
// plus the operator's own interrupt message for inquiry and plan
// modification markers). Context is the Markdown context of a question or
// the surfaced error message of a result. Label is a plain machine word: the
// marker kind, the result status, or the answering client.
type Entry struct {
	Kind    string    `json:"kind"`
	RunID   string    `json:"runId"`
	At      time.Time `json:"at"`
	Text    string    `json:"text"`
	Context string    `json:"context,omitempty"`
	Label   string    `json:"label,omitempty"`
}

// Derive derives the thread of a continuation chain, runs oldest
// first. It is a pure function of its input.
//
// Only human-facing content is read out of the events, field by field:
// the run's task, the entry role's finish summary and surfaced error
// message, the entry role's ask_human questions with their context, the
// operator's answers and interrupt messages, and run status changes as
// platform labels. Everything else is never read, so it cannot appear:
// provider failures and their bodies, usage, reasoning, model requests and
// replies, tool arguments and results, the conversations of every role other
// than the entry instance (children and handler interludes alike), and the
// technical detail of errors.
func Derive(runs []Run) Thread {
	th := Thread{Entries: []Entry{}}
	th.Identity.Runs = len(runs)
	for i := range runs {
		d := threadDeriver{run: &runs[i], th: &th, asked: map[string]bool{}}
		d.derive()
		if i == 0 {
			th.Identity.FirstTask = d.task
		}
		if runs[i].ContinuesFrom != "" || d.continues != "" {
			th.Identity.Continuations++
		}
	}
	for _, e := range th.Entries {
		switch e.Kind {
		case Human, Answer:
			th.Identity.LatestHumanText = e.Text
		case Question:
			th.Identity.Questions++
		}
	}
	return th
}

// Reads reports whether Derive reads events of type t; a
// loader may skip every other event without decoding it.
func Reads(t event.Type) bool {
	switch t {
	case event.RunStarted, event.RunStatus, event.RunResumed, event.RoleStart, event.RoleFinished,
		event.AskHuman, event.HumanAnswer, event.Interrupt, event.InterruptResolved,
		event.InquiryDropped, event.PlanModification:
		return true
	}
	return false
}

// threadDeriver walks one run's events.
type threadDeriver struct {
	run       *Run
	th        *Thread
	task      string
	continues string
	entryRole string
	entryID   string
	// interlude counts open handler interludes (interrupt … resolved):
	// a role started inside one is never the entry instance.
	interlude int
	asked     map[string]bool // entry-role question ids
	// open are the role instances started and not yet finished, innermost
	// last: the original system's ask_human names no role, and with one
	// role running at a time the asker is the innermost open one.
	open     []string
	started  bool
	finished bool
	lastAt   time.Time
}

func (d *threadDeriver) add(kind string, at time.Time, text, context, label string) {
	d.th.Entries = append(d.th.Entries, Entry{Kind: kind, RunID: d.run.RunID, At: at.UTC(), Text: text, Context: context, Label: label})
}

func (d *threadDeriver) marker(at time.Time, label, text string) {
	d.add(Marker, at, text, "", label)
}

// begin records the run's opening: the start marker and the task.
func (d *threadDeriver) begin(at time.Time, task, continues string) {
	d.started = true
	d.task, d.continues = task, continues
	if continues != "" {
		d.marker(at, MarkerContinued, "Run "+d.run.RunID+" started, continuing "+continues)
	} else {
		d.marker(at, MarkerStarted, "Run "+d.run.RunID+" started")
	}
	d.add(Human, at, task, "", "task")
}

func (d *threadDeriver) derive() {
	d.entryRole = d.run.EntryRole
	for _, e := range d.run.Events {
		d.lastAt = e.Timestamp
		if !d.started && e.Type != event.RunStarted {
			d.begin(d.run.StartedAt, d.run.Task, d.run.ContinuesFrom)
		}
		d.apply(e)
	}
	if !d.started {
		d.begin(d.run.StartedAt, d.run.Task, d.run.ContinuesFrom)
		d.lastAt = d.run.StartedAt
	}
	// A run whose log ends without its terminal status (marked interrupted
	// by a later start, for one) still shows how it ended.
	if !d.finished && store.Terminal(d.run.Status) {
		d.finish(d.lastAt, d.run.Status, nil)
	}
}

func (d *threadDeriver) apply(e event.Event) {
	if !Reads(e.Type) {
		return
	}
	switch e.Type {
	case event.RunStarted:
		var p event.RunStartedPayload
		if e.Decode(&p) != nil || d.started {
			return
		}
		if p.EntryRole != "" {
			d.entryRole = p.EntryRole
		}
		task := p.Task
		if task == "" {
			task = d.run.Task
		}
		continues := p.ContinuesFrom
		if continues == "" {
			continues = d.run.ContinuesFrom
		}
		d.begin(e.Timestamp, task, continues)
	case event.Interrupt:
		var p event.InterruptPayload
		if e.Decode(&p) != nil {
			return
		}
		d.interlude++
		if p.Trigger == "inquiry" {
			d.marker(e.Timestamp, MarkerInquiry, "Operator inquiry: "+p.Message)
		}
	case event.InterruptResolved:
		var p event.InterruptResolvedPayload
		if e.Decode(&p) != nil {
			return
		}
		if d.interlude > 0 {
			d.interlude--
		}
		if p.Trigger == "inquiry" {
			if p.Action == "answered" {
				d.marker(e.Timestamp, MarkerInquiry, "The inquiry was answered")
			} else {
				d.marker(e.Timestamp, MarkerInquiry, "The inquiry could not be answered")
			}
		}
	case event.InquiryDropped:
		var p event.InquiryDroppedPayload
		if e.Decode(&p) != nil {
			return
		}
		d.marker(e.Timestamp, MarkerInquiry, "Operator inquiry (not answered: no inquiry handler): "+p.Message)
	case event.PlanModification:
		var p event.PlanModificationPayload
		if e.Decode(&p) != nil {
			return
		}
		d.marker(e.Timestamp, MarkerPlanModified, "Operator plan modification: "+p.Message)
	case event.RoleStart:
		var p event.RoleStartPayload
		if e.Decode(&p) != nil {
			return
		}
		if d.entryID == "" && d.interlude == 0 && p.Depth == 0 && (d.entryRole == "" || p.Role == d.entryRole) {
			d.entryID = p.RoleID
		}
		d.open = append(d.open, p.RoleID)
	case event.RoleFinished:
		var p event.RoleFinishedPayload
		if e.Decode(&p) != nil {
			return
		}
		if n := len(d.open); n > 0 && d.open[n-1] == p.RoleID {
			d.open = d.open[:n-1]
		}
		if !d.isEntry(p.RoleID, p.Role, p.Depth) {
			return
		}
		context := ""
		if p.Error != nil && p.Error.Message != "" && p.Error.Message != p.Summary {
			context = p.Error.Message
		}
		d.add(Orchestrator, e.Timestamp, p.Summary, context, p.Status)
	case event.AskHuman:
		var p event.AskHumanPayload
		if e.Decode(&p) != nil {
			return
		}
		if p.RoleID == "" && p.Role == "" && len(d.open) > 0 {
			p.RoleID = d.open[len(d.open)-1]
		}
		if !d.isEntry(p.RoleID, p.Role, 0) {
			return
		}
		d.asked[p.ID] = true
		context := p.Context
		if strings.TrimSpace(context) == "" {
			context = p.AssistantText
		}
		d.add(Question, e.Timestamp, p.Question, context, "")
	case event.HumanAnswer:
		var p event.HumanAnswerPayload
		if e.Decode(&p) != nil || !d.asked[p.ID] {
			return
		}
		delete(d.asked, p.ID)
		d.th.Identity.Answered++
		d.add(Answer, e.Timestamp, p.Answer, "", p.Source)
	case event.RunResumed:
		d.marker(e.Timestamp, MarkerResumed, "Run resumed from its checkpoint")
	case event.RunStatus:
		var p event.RunStatusPayload
		if e.Decode(&p) != nil {
			return
		}
		d.status(e.Timestamp, p)
	}
}

// isEntry reports whether a role instance is the run's entry instance.
// Before the entry's role_start is seen (a torn log), a depth-0 instance
// of the entry role outside any interlude stands in.
func (d *threadDeriver) isEntry(roleID, role string, depth int) bool {
	if d.entryID != "" {
		return roleID == d.entryID
	}
	return d.interlude == 0 && depth == 0 && role != "" && role == d.entryRole
}

func (d *threadDeriver) status(at time.Time, p event.RunStatusPayload) {
	switch p.Status {
	case "paused":
		d.marker(at, MarkerPaused, "Paused by the operator")
	case "suspended":
		d.marker(at, MarkerSuspended, "Suspended: the model provider is unavailable")
	case "running":
		d.marker(at, MarkerResumed, "Resumed")
	case "interrupted":
		if p.Card == nil {
			d.marker(at, MarkerInterrupted, "Interrupted before finishing; resumable from its checkpoint")
			return
		}
		d.finish(at, p.Status, p.Card)
	default:
		if store.Terminal(p.Status) {
			d.finish(at, p.Status, p.Card)
		}
	}
}

func (d *threadDeriver) finish(at time.Time, status string, card *event.Card) {
	d.finished = true
	if status == "interrupted" && card != nil && card.Error != nil && card.Error.Kind == "interrupted" {
		d.marker(at, MarkerTerminated, "Run terminated by the operator")
		return
	}
	if status == "interrupted" {
		d.marker(at, MarkerInterrupted, "Run interrupted")
		return
	}
	d.marker(at, MarkerFinished, "Run finished: "+status)
}
