package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/store"
	"github.com/guildhall/guildhall/tools"
)

// Stateful providers (the scripted model) keep a position in their
// conversation; it is checkpointed with the run so a resume replays exactly.
type Stateful interface {
	SaveState() json.RawMessage
	RestoreState(json.RawMessage) error
}

// loadCheckpoint reads and validates a run's checkpoint against its meta
// and the guild: the gates that must pass before a checkpoint (or a pause
// marker beside it) is trusted.
func loadCheckpoint(ws store.Workspace, id string, g *Guild) (*store.Meta, *Checkpoint, error) {
	meta, err := ws.ReadMeta(id) // validates the id and that meta names it
	if err != nil {
		return nil, nil, err
	}
	if meta.Foreign {
		return meta, nil, ForeignRun(meta)
	}
	b, sealed, err := ws.ReadState(id)
	if err != nil {
		return meta, nil, fmt.Errorf("run %s has no checkpoint: %w", id, err)
	}
	if !sealed {
		return meta, nil, &ForeignRunError{RunID: id, Record: store.StateFile}
	}
	var cp Checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return meta, nil, fmt.Errorf("run %s: state.json is not valid: %w", id, err)
	}
	if cp.RunID != id {
		return meta, nil, fmt.Errorf("run %s: state.json names run %q", id, cp.RunID)
	}
	if len(cp.Stack) == 0 {
		return meta, nil, fmt.Errorf("run %s: state.json holds no roles", id)
	}
	for i, f := range cp.Stack {
		if f == nil {
			return meta, nil, fmt.Errorf("run %s: its checkpoint holds an empty role frame", id)
		}
		if g.Roles[f.Role] == nil {
			return meta, nil, fmt.Errorf("run %s: its checkpoint has role %q (instance %s), which the guild %s does not have%s", id, f.Role, f.RoleID, g.Source, startedWith(meta))
		}
		if len(f.History) < 2 {
			return meta, nil, fmt.Errorf("run %s: checkpointed role %s has no history", id, f.RoleID)
		}
		if i+1 < len(cp.Stack) && (f.Pending == nil || f.Pending.Next >= len(f.Pending.Calls) || f.Pending.Calls[f.Pending.Next].Name != "agent") {
			return meta, nil, fmt.Errorf("run %s: checkpointed role %s is not waiting on the role above it", id, f.RoleID)
		}
	}
	return meta, &cp, nil
}

// startedWith names the guild a run was started with, for a message.
func startedWith(m *store.Meta) string {
	switch m.GuildPath {
	case "":
		return ""
	case "seed":
		return "; the run was started with the seed guild"
	}
	return "; the run was started with the guild " + m.GuildPath + " (pass --guild " + m.GuildPath + ")"
}

// Resumable reports whether run id can be resumed, and why not.
func Resumable(ws store.Workspace, id string, g *Guild) error {
	meta, _, err := loadCheckpoint(ws, id, g)
	if err != nil {
		return err
	}
	if store.Terminal(meta.Status) && !BudgetStopped(meta) {
		return fmt.Errorf("run %s is %s; only an unfinished run can be resumed", id, meta.Status)
	}
	return nil
}

// PauseRequested reports whether a resumable run carries a durable
// pause-intent marker. Call it only after Resumable passed: the marker is
// honoured only behind the id, manifest and checkpoint gates.
func PauseRequested(ws store.Workspace, id string) bool { return ws.PauseMarked(id) }

// Resume rebuilds run id from its checkpoint. opts supplies the guild,
// deployment, provider, bus and broker; its task fields are ignored.
func Resume(opts Options, id string) (*Run, error) {
	opts.Task = "resume" // the real task comes from meta
	ws, err := opts.open()
	if err != nil {
		return nil, err
	}
	meta, cp, err := loadCheckpoint(ws, id, opts.Guild)
	if err != nil {
		return nil, err
	}
	if store.Terminal(meta.Status) && !BudgetStopped(meta) {
		return nil, fmt.Errorf("run %s is %s; only an unfinished run can be resumed", id, meta.Status)
	}
	opts.Task, opts.Effort, opts.LogLevel, opts.ContinuesFrom = meta.Task, meta.Effort, meta.LogLevel, meta.ContinuesFrom
	if opts.Effort == "" {
		opts.Effort = "standard"
	}
	if opts.LogLevel == "" {
		opts.LogLevel = LogFull
	}
	if sp, ok := opts.Provider.(Stateful); ok && len(cp.ProviderState) > 0 {
		if err := sp.RestoreState(cp.ProviderState); err != nil {
			return nil, fmt.Errorf("run %s: restore the model's position: %w", id, err)
		}
	}
	opts.Park = opts.Park || cp.Park
	r := &Run{opts: opts, id: id, ws: ws, now: opts.Now, startedAt: cp.StartedAt, schemas: map[string]*jsonschema.Resolved{}, meta: meta,
		stack: cp.Stack, counter: cp.Counter, learnedCeiling: cp.LearnedCeiling, learnedCeilings: cp.LearnedCeilings, writerStarted: cp.WriterStarted}
	reopenBudgetStopped(r.meta)
	r.meta.Status, r.meta.PID, r.meta.Suspension = store.StatusRunning, os.Getpid(), nil
	r.budget.resume(cp.Usage)
	if err := r.open(); err != nil {
		return nil, err
	}
	backlog, problems := readBacklog(ws, id)
	r.opts.Bus.Reset(backlog)
	r.loggedStart, r.loggedFinish, r.loggedCards = map[string]bool{}, map[string]bool{}, map[string]event.Card{}
	for _, e := range backlog {
		switch e.Type {
		case event.RoleStart:
			var p event.RoleStartPayload
			if e.Decode(&p) == nil {
				r.loggedStart[p.RoleID] = true
			}
		case event.RoleFinished:
			var p event.RoleFinishedPayload
			if e.Decode(&p) == nil {
				r.loggedFinish[p.RoleID] = true
				r.loggedCards[p.RoleID] = event.Card{Status: p.Status, Summary: p.Summary, Artifacts: p.Artifacts, Error: p.Error}
			}
		case event.ToolCall:
			r.acted = true
		case event.TextToolCalls:
			r.textNoted = true
		}
	}
	r.started = startedOutcome(backlog, r.stack[len(r.stack)-1])
	ids := make([]string, len(r.stack))
	for i, f := range r.stack {
		ids[i] = f.RoleID
	}
	r.emit(event.RunResumed, event.RunResumedPayload{RunID: id, ResumedFrames: len(r.stack), ResumedRoleIDs: ids, LogProblems: problems})
	return r, nil
}

// readBacklog loads a run's log for the bus, reporting unreadable lines
// (a torn last line after a crash) instead of failing.
func readBacklog(ws store.Workspace, id string) ([]event.Event, int) {
	path, err := ws.LogPath(id)
	if err != nil {
		return nil, 0
	}
	var evs []event.Event
	problems, _ := store.ReadLog(path, func(seq int64, rec []byte) error {
		if e, err := event.ParseLine(rec); err == nil {
			e.Seq = seq
			evs = append(evs, e)
		}
		return nil
	})
	return evs, len(problems)
}

// ExecuteResumed continues a resumed run: the leaf re-enters at its loop
// top and each suspended ancestor gets its child's card as the result of
// the agent call it awaits.
func (r *Run) ExecuteResumed(ctx context.Context) (Outcome, error) {
	defer r.close()
	ctx, cancel := r.begin(ctx)
	defer cancel()
	for _, f := range r.stack {
		if !r.loggedStart[f.RoleID] {
			r.emitRoleStart(f)
		}
	}
	card, err := r.resumeAt(ctx, 0)
	return r.conclude(card, err)
}

func (r *Run) resumeAt(ctx context.Context, i int) (event.Card, error) {
	f := r.stack[i]
	if card, ok := r.loggedCards[f.RoleID]; ok {
		// It finished just before the crash: deliver its logged card.
		return card, nil
	}
	if p := f.Pending; i+1 == len(r.stack) && p != nil && p.ChildCard != nil && p.Child != nil && !r.loggedFinish[p.Child.RoleID] {
		c := p.Child
		r.emit(event.RoleFinished, event.RoleFinishedPayload{Role: c.Role, RoleID: c.RoleID, Depth: c.Depth, Status: p.ChildCard.Status,
			Summary: p.ChildCard.Summary, Artifacts: p.ChildCard.Artifacts, Error: p.ChildCard.Error, Parent: f.Role, ParentID: f.RoleID, ParentRoleID: f.RoleID})
	}
	if i+1 < len(r.stack) {
		child := r.stack[i+1]
		card, err := r.resumeAt(ctx, i+1)
		if err != nil {
			return event.Card{}, err
		}
		f.Pending.ChildCard = &card
		r.finishFrame(child, card)
		r.emitToolResult(f, f.Pending.Calls[f.Pending.Next], tools.OK(card), 0)
	} else {
		// The leaf: a call that changes something and that the crash
		// stopped is settled from the log, never run again.
		r.settleStarted(f, r.started)
	}
	return r.runFrame(ctx, f)
}

// Reconciliation is what startup found in the runs folder.
type Reconciliation struct {
	// Resumable is the newest run that can resume ("" when none).
	Resumable string
	// Interrupted lists runs marked interrupted, each with its reason.
	Interrupted map[string]string
	// OtherGuild lists unfinished runs started with another guild than the
	// one reconciling (by run id, the guild's path): they are left alone,
	// for `guildhall resume`, which loads the guild a run started with.
	OtherGuild map[string]string
}

// Reconcile scans the runs folder: the newest resumable unfinished run is
// left to resume, and every other unfinished run is marked interrupted with
// the reason, its other fields preserved. skip names runs to leave alone
// (for example one this process is running).
func Reconcile(ws store.Workspace, g *Guild, now time.Time, skip ...string) (Reconciliation, error) {
	rec := Reconciliation{Interrupted: map[string]string{}, OtherGuild: map[string]string{}}
	ids, err := ws.ListRunIDs()
	if err != nil {
		return rec, err
	}
	for _, id := range ids {
		if contains(skip, id) {
			continue
		}
		meta, err := ws.ReadMeta(id)
		if err != nil || meta.Foreign {
			// Not a run we can vouch for: leave it untouched (rewriting a
			// foreign meta would seal it).
			continue
		}
		if store.Terminal(meta.Status) {
			continue
		}
		if meta.GuildPath != "" && g.Path != "" && meta.GuildPath != g.Path {
			rec.OtherGuild[id] = meta.GuildPath
			continue
		}
		reason := ""
		if err := Resumable(ws, id, g); err != nil {
			reason = "could not be resumed: " + err.Error()
		} else if rec.Resumable == "" {
			rec.Resumable = id
			continue
		} else {
			reason = "superseded by the newer resumable run " + rec.Resumable
		}
		end := now.UTC()
		meta.Status, meta.EndedAt = store.StatusInterrupted, &end
		meta.Error = &store.MetaError{Kind: "interrupted", Message: "The run stopped before finishing and " + reason + "."}
		if err := ws.WriteMeta(meta); err != nil {
			return rec, err
		}
		if err := ws.RemoveState(id); err != nil {
			return rec, err
		}
		rec.Interrupted[id] = reason
	}
	return rec, nil
}

// ForeignRunError refuses to act on a run whose records Guildhall did not
// write for this operator: their seal fails (store.Sealer). A repository
// can ship an .orchestration folder; its runs are shown, never resumed or
// continued.
type ForeignRunError struct {
	RunID  string
	Record string // the file that failed the check
	// Original is set when the run's records are in the original system's
	// format (orchestration-builder wrote them): they were never sealed,
	// and its checkpoint is not Guildhall's either.
	Original bool
	// MovedFrom is the folder the run's meta.json names when that is not
	// this one: the folder was moved, renamed or copied since.
	MovedFrom string
}

func (e *ForeignRunError) Error() string {
	if e.Original {
		return fmt.Sprintf("run %s was written by the original system (orchestration-builder), not by Guildhall for you: its records carry no Guildhall seal, so its checkpoint is never resumed and the run is never continued (its conversations and pending tool calls could have been written by anyone who could write the workspace); view it with `guildhall show %s`, and to carry its work on, start a new run with its task", e.RunID, e.RunID)
	}
	if e.MovedFrom != "" {
		return fmt.Sprintf("run %s was recorded when this folder was %s: it has moved (or was renamed or copied) since, and records are sealed for the folder they were written in, so its runs are not resumed or continued here until you adopt them; `guildhall records adopt` lists such runs and re-seals the ones you confirm (`guildhall show %s` shows it meanwhile)", e.RunID, e.MovedFrom, e.RunID)
	}
	return fmt.Sprintf("run %s is foreign: its %s is not sealed for this folder by your records key, so it is never resumed or continued. Either this folder (or its .orchestration) came from another folder, machine or account, or someone else wrote it; if the run is yours, `guildhall records adopt` lists it and re-seals it once you confirm; `guildhall show %s` shows it meanwhile", e.RunID, e.Record, e.RunID)
}

// ForeignRun is the refusal for run m whose meta.json is foreign, saying
// that the folder moved when the record's seal shows it (Meta.MovedFrom).
func ForeignRun(m *store.Meta) *ForeignRunError {
	return &ForeignRunError{RunID: m.RunID, Record: store.MetaFile, Original: m.OriginalFormat, MovedFrom: m.MovedFrom}
}
