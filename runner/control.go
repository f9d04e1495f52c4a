package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/guildhall/guildhall/runner/event"
	"github.com/guildhall/guildhall/runner/provider"
	"github.com/guildhall/guildhall/store"
)

// PauseMarker is the durable pause-intent file in a run's folder. It is
// advisory bookkeeping: boot honours it only after the run id, manifest and
// checkpoint gates pass, and it can only ever request a pause.
const PauseMarker = store.PauseFile

// controls is the operator's side channel into a running run. Requests are
// recorded here from any goroutine and applied by the run at its next safe
// point.
type controls struct {
	mu        sync.Mutex
	cancel    context.CancelFunc
	terminate bool
	// stopReason, when set, is why the run was stopped (its run_status
	// says so instead of the plain "stopped before finishing").
	stopReason string
	pause      bool
	paused     bool
	resume     chan struct{}
	wake       chan struct{} // set while suspended: the operator's resume
	requests   []operatorRequest
}

type operatorRequest struct {
	Kind    string // inquiry, plan_modification, notice
	Message string
}

// RequestInterrupt queues an operator interrupt for the next safe point.
func (r *Run) RequestInterrupt(kind, message string) error {
	r.ctl.mu.Lock()
	defer r.ctl.mu.Unlock()
	r.ctl.requests = append(r.ctl.requests, operatorRequest{Kind: kind, Message: message})
	return nil
}

// InterruptPending reports whether an operator request awaits a safe point.
func (r *Run) InterruptPending() bool {
	r.ctl.mu.Lock()
	defer r.ctl.mu.Unlock()
	return len(r.ctl.requests) > 0
}

// RequestPause pauses the run at its next safe point.
func (r *Run) RequestPause() {
	r.ctl.mu.Lock()
	r.ctl.pause = true
	r.ctl.mu.Unlock()
	r.writePauseMarker()
}

// ResumeFromPause resumes a paused (or pause-requested) run.
func (r *Run) ResumeFromPause() bool {
	r.ctl.mu.Lock()
	defer r.ctl.mu.Unlock()
	was := r.ctl.pause || r.ctl.paused
	r.ctl.pause = false
	if r.ctl.paused && r.ctl.resume != nil {
		close(r.ctl.resume)
		r.ctl.resume = nil
	}
	r.removePauseMarker()
	return was
}

// Paused reports whether the run is waiting at a pause.
func (r *Run) Paused() bool {
	r.ctl.mu.Lock()
	defer r.ctl.mu.Unlock()
	return r.ctl.paused
}

// RequestTerminate ends the run at its next safe point with status
// interrupted; its record stays intact and it is not resumed.
func (r *Run) RequestTerminate() { r.cancelAfter(func(c *controls) { c.terminate = true }) }

// Stop cuts the run short at its next safe point, leaving it resumable.
func (r *Run) Stop() { r.StopBecause("") }

// StopBecause is Stop with the reason the run's log records.
func (r *Run) StopBecause(reason string) {
	r.cancelAfter(func(c *controls) {
		if reason != "" {
			c.stopReason = reason
		}
	})
}

// cancelAfter records a request under the controls' lock, then cancels the
// run's context outside it, so a model call or tool in flight returns to
// the safe point that applies the request.
func (r *Run) cancelAfter(record func(*controls)) {
	r.ctl.mu.Lock()
	record(&r.ctl)
	cancel := r.ctl.cancel
	r.ctl.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (r *Run) stopReasonOr(def string) string {
	r.ctl.mu.Lock()
	defer r.ctl.mu.Unlock()
	if r.ctl.stopReason != "" {
		return r.ctl.stopReason
	}
	return def
}

func (r *Run) terminating() bool {
	r.ctl.mu.Lock()
	defer r.ctl.mu.Unlock()
	return r.ctl.terminate
}

func (r *Run) writePauseMarker() {
	_ = r.ws.WritePauseMarker(r.id, time.Now())
}

func (r *Run) removePauseMarker() {
	if err := r.ws.RemovePauseMarker(r.id); err != nil && r.logErr == nil {
		r.logErr = err
	}
}

// pausePoint blocks at a safe point while the operator has the run paused.
func (r *Run) pausePoint(ctx context.Context) error {
	r.ctl.mu.Lock()
	pending := r.ctl.pause
	r.ctl.mu.Unlock()
	if !pending {
		return nil
	}
	defer r.holdWall()()
	r.checkpoint()
	r.setStatus(store.StatusPaused)
	r.emit(event.RunStatus, event.RunStatusPayload{Status: store.StatusPaused, Reason: "paused by the operator"})
	_ = r.log.Sync()

	r.ctl.mu.Lock()
	var resume chan struct{}
	if r.ctl.pause { // not resumed while the pause was being recorded
		r.ctl.pause, r.ctl.paused = false, true
		resume = make(chan struct{})
		r.ctl.resume = resume
	}
	r.ctl.mu.Unlock()
	if resume != nil {
		select {
		case <-resume:
		case <-ctx.Done():
			r.ctl.mu.Lock()
			r.ctl.paused, r.ctl.resume = false, nil
			r.ctl.mu.Unlock()
			return errStopped
		}
	}
	r.ctl.mu.Lock()
	r.ctl.paused = false
	r.ctl.mu.Unlock()
	r.setStatus(store.StatusRunning)
	r.emit(event.RunStatus, event.RunStatusPayload{Status: store.StatusRunning, Reason: "resumed by the operator"})
	return nil
}

func (r *Run) setStatus(status string) {
	r.metaMu.Lock()
	r.meta.Status = status
	r.metaMu.Unlock()
	if err := r.saveMeta(); err != nil && r.logErr == nil {
		r.logErr = err
	}
}

// nextRequest takes one queued operator request.
func (r *Run) nextRequest() (operatorRequest, bool) {
	r.ctl.mu.Lock()
	defer r.ctl.mu.Unlock()
	if len(r.ctl.requests) == 0 {
		return operatorRequest{}, false
	}
	req := r.ctl.requests[0]
	r.ctl.requests = r.ctl.requests[1:]
	return req, true
}

// operatorPoint applies one queued operator request at f's safe point.
func (r *Run) operatorPoint(ctx context.Context, f *Frame) error {
	if r.handlerDepth > 0 {
		return nil // handlers never consume operator requests
	}
	req, ok := r.nextRequest()
	if !ok {
		return nil
	}
	switch req.Kind {
	case "plan_modification":
		r.applyPlanModification(req.Message)
	case "notice":
		root := r.stack[0]
		root.Marks = append(root.Marks, Mark{Kind: "message", Message: "[Operator notice] " + req.Message})
		r.emit(event.OperatorNotice, event.OperatorNoticePayload{Role: root.Role, RoleID: root.RoleID, Message: req.Message})
	case "inquiry":
		return r.answerInquiry(ctx, f, req.Message)
	}
	return nil
}

// applyPlanModification aborts every live chain member below the plan
// owner with an interrupted card and delivers the message to the owner.
func (r *Run) applyPlanModification(message string) {
	owner := 0
	if t := r.opts.Deployment.Executor.InterruptTriggers; t != nil && t.PlanOwnerRole != "" {
		for i, f := range r.stack {
			if f.Role == t.PlanOwnerRole {
				owner = i
				break
			}
		}
	}
	var aborted []string
	for _, f := range r.stack[owner+1:] {
		f.Marks = append(f.Marks, Mark{Kind: "abort", Message: "Interrupted by an operator plan modification.",
			Error: &event.ErrorInfo{Kind: "interrupted", Message: "Interrupted by an operator plan modification."}})
		aborted = append(aborted, f.RoleID)
	}
	o := r.stack[owner]
	o.Marks = append(o.Marks, Mark{Kind: "message", Message: "[Operator plan modification — the work below you was stopped; re-plan with this change]\n\n" + message})
	if aborted == nil {
		aborted = []string{}
	}
	r.emit(event.PlanModification, event.PlanModificationPayload{Target: o.RoleID, TargetRole: o.Role, Message: message, Aborted: aborted})
}

// answerInquiry runs the inquiry handler against the frozen run and logs
// its answer. A run is never killed over a question.
func (r *Run) answerInquiry(ctx context.Context, target *Frame, question string) error {
	handler := r.opts.Deployment.Executor.InquiryHandlerRole
	if handler == "" || r.opts.Guild.Roles[handler] == nil {
		r.emit(event.InquiryDropped, event.InquiryDroppedPayload{Message: question, Reason: "no inquiry handler role is configured"})
		return nil
	}
	r.emit(event.Interrupt, event.InterruptPayload{Trigger: "inquiry", Handler: handler, Target: target.RoleID, Message: question})
	card, err := r.runHandler(ctx, handler, r.inquiryTask(question))
	if err != nil {
		return err
	}
	res := event.InterruptResolvedPayload{Trigger: "inquiry", Handler: handler, Target: target.RoleID, Action: "answered", Summary: card.Summary}
	if card.Status != "success" {
		res.Action, res.HandlerStatus = "failed", card.Status
	}
	r.emit(event.InterruptResolved, res)
	return nil
}

func (r *Run) inquiryTask(question string) string {
	var b strings.Builder
	b.WriteString("An operator asks about the run in progress. Answer from the evidence, read-only, then call finish with the answer as the summary.\n\n")
	b.WriteString("Operator's question:\n" + question + "\n\nLive role instances (root first):\n")
	for _, f := range r.stack {
		parent := f.ParentID
		if parent == "" {
			parent = "-"
		}
		fmt.Fprintf(&b, "- %s (role %s, depth %d, parent %s)\n", f.RoleID, f.Role, f.Depth, parent)
	}
	fmt.Fprintf(&b, "\nThe run's log is .orchestration/runs/%s/log.jsonl (use read_run_log / search_run_log).", r.id)
	return b.String()
}

// runHandler runs a handler role as a fresh instance on top of the frozen
// stack. Checkpoints are suppressed meanwhile: a handler interlude is atomic
// with respect to the checkpoint.
func (r *Run) runHandler(ctx context.Context, role, task string) (event.Card, error) {
	r.handlerDepth++
	defer func() { r.handlerDepth-- }()
	h := r.newFrame(role, task, nil)
	h.History = []provider.Message{{Role: "system", Content: r.opts.Guild.Roles[role].Prompt}, {Role: "user", Content: task}}
	h.TaskIndex = 1
	r.stack = append(r.stack, h)
	r.emitRoleStart(h)
	card, err := r.runFrame(ctx, h)
	if err != nil {
		r.stack = r.stack[:len(r.stack)-1]
		return event.Card{}, err
	}
	r.finishFrame(h, card)
	return card, nil
}
